import { describe, expect, it } from 'vitest';
import type { McpEvent } from '../../src/core/events';
import { DEFAULT_LOG_MAX, MAX_LOG_KEPT, ServerLog } from '../../src/core/serverLog';

function inbox() {
  const log = new ServerLog({ setLogLevel: () => {} } as never);
  const receive = (count: number) => {
    for (let i = 0; i < count; i += 1) {
      log.apply({ type: 'log', at: 0, seq: i, level: 'info', data: i } as unknown as McpEvent);
    }
  };
  return { log, receive, size: () => log.store.get().entries.length };
}

describe('ServerLog: what a reader may ask it to keep (rule 8)', () => {
  it.each([
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a number past the cap', 1e12],
  ])('%s keeps at most MAX_LOG_KEPT entries: a flood never grows it without bound', (_, max) => {
    const { log, receive, size } = inbox();
    log.keep(max);
    receive(MAX_LOG_KEPT + 50);
    expect(size()).toBe(MAX_LOG_KEPT);
    expect(log.store.get().dropped).toBe(50);
  });

  it('a filtered hold beside an unfiltered one never takes the inbox past MAX_LOG_KEPT', () => {
    const { log, size } = inbox();
    log.keep(Number.POSITIVE_INFINITY);
    log.keep(Number.POSITIVE_INFINITY, 'error');
    const message = (level: string) =>
      log.apply({ type: 'log', at: 0, level, data: level } as unknown as McpEvent);
    for (let i = 0; i < 100; i += 1) message('error');
    for (let i = 0; i < MAX_LOG_KEPT; i += 1) message('info');
    expect(size()).toBe(MAX_LOG_KEPT);
    expect(log.store.get().droppedByLevel).toEqual({ error: 100 });
  });

  it.each([
    ['NaN', Number.NaN],
    ['a negative max', -5],
  ])('%s holds nothing more than the default', (_, max) => {
    const { log, receive, size } = inbox();
    log.keep(max);
    receive(DEFAULT_LOG_MAX + 1);
    expect(size()).toBe(DEFAULT_LOG_MAX);
  });

  it('a new hold never shrinks the inbox at once: a release does, a microtask later', async () => {
    const { log, receive, size } = inbox();
    const large = log.keep(500);
    receive(500);
    large();
    // Another reader's new hold in the same passive-effects flush (its max changed too).
    const other = log.keep(250);
    const again = log.keep(502);
    expect(size()).toBe(500);
    await Promise.resolve();
    expect(size()).toBe(500);
    again();
    await Promise.resolve();
    expect(size()).toBe(250);
    other();
  });

  it('a shrink keeps every entry a filtered hold still shows, however far back it is', async () => {
    const { log, size } = inbox();
    const wide = log.keep(1000);
    const narrow = log.keep(2, 'error');
    const message = (level: string, data: unknown) =>
      log.apply({ type: 'log', at: 0, level, data } as unknown as McpEvent);
    message('error', 'old');
    message('error', 'older than 300');
    for (let i = 0; i < 300; i += 1) message('info', i);
    message('error', 'new');
    wide();
    await Promise.resolve();
    // The two newest errors (what `max: 2, level: 'error'` shows) are both still there.
    const errors = log.store.get().entries.filter((entry) => entry.level === 'error');
    expect(errors.map((entry) => entry.data)).toEqual(['new', 'older than 300']);
    // The default's 200 newest and the older error shown: the rest goes, counted by level.
    expect(size()).toBe(DEFAULT_LOG_MAX + 1);
    expect(log.store.get()).toMatchObject({
      dropped: 102,
      droppedByLevel: { info: 101, error: 1 },
    });
    narrow();
    await Promise.resolve();
    expect(size()).toBe(DEFAULT_LOG_MAX);
  });

  it('entries of other levels never push out what a filtered hold shows; the dropped are counted per level', () => {
    const { log, size } = inbox();
    const narrow = log.keep(2, 'error');
    const message = (level: string, data: unknown) =>
      log.apply({ type: 'log', at: 0, level, data } as unknown as McpEvent);
    message('error', 'kept');
    for (let i = 0; i < 300; i += 1) message('info', i);
    // The default's 200 newest, and the one error the hold shows beyond them.
    expect(size()).toBe(DEFAULT_LOG_MAX + 1);
    expect(log.store.get().entries.at(-1)?.data).toBe('kept');
    expect(log.store.get()).toMatchObject({ dropped: 100, droppedByLevel: { info: 100 } });
    for (let i = 0; i < 3; i += 1) message('error', `e${i}`);
    // The hold shows the two newest errors; the oldest, past the default's 200 and shown by
    // no hold any more, goes, counted as an error dropped.
    const errors = log.store.get().entries.filter((entry) => entry.level === 'error');
    expect(errors.map((entry) => entry.data)).toEqual(['e2', 'e1', 'e0']);
    expect(log.store.get()).toMatchObject({
      dropped: 104,
      droppedByLevel: { info: 103, error: 1 },
    });
    narrow();
  });

  it('a burst of messages in one tick is announced once, and a read during it sees every one', async () => {
    const { log, receive, size } = inbox();
    log.keep(MAX_LOG_KEPT);
    let heard = 0;
    log.store.subscribe(() => {
      heard += 1;
    });
    receive(3000);
    // Read in the middle of the burst (a render): up to date, and still one announcement.
    expect(size()).toBe(3000);
    expect(log.store.get()).toBe(log.store.get());
    receive(2000);
    expect(heard).toBe(0);
    await Promise.resolve();
    expect(heard).toBe(1);
    expect(size()).toBe(5000);
    expect(log.store.get().entries[0]?.data).toBe(1999);
    receive(MAX_LOG_KEPT);
    await Promise.resolve();
    expect(heard).toBe(2);
    expect(log.store.get()).toMatchObject({ dropped: 5000, droppedByLevel: { info: 5000 } });
  });

  it('clear() drops what arrived in the same tick too', async () => {
    const { log, receive, size } = inbox();
    receive(10);
    log.clear();
    expect(size()).toBe(0);
    await Promise.resolve();
    expect(size()).toBe(0);
  });
});
