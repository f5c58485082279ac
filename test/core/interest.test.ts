import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { McpEventInput } from '../../src/core/events';
import { type Desire, InterestRegistry } from '../../src/core/interest';

const LINGER_MS = 1000;

function setup() {
  const emit = vi.fn((_event: McpEventInput) => {});
  const onFlush = vi.fn((_desire: Desire) => {});
  const life = new AbortController();
  const registry = new InterestRegistry({
    lingerMs: LINGER_MS,
    emit,
    onFlush,
    signal: life.signal,
  });
  return {
    registry,
    /** The owner's lifetime ends. */
    end: () => life.abort(),
    emit,
    onFlush,
    /** The `interest` events so far, as [uri, refs, wanted]. */
    interest: () =>
      emit.mock.calls
        .map(([event]) => event)
        .filter((event) => event.type === 'interest')
        .map((event) => [event.uri, event.refs, event.wanted]),
    lastFlush: () => onFlush.mock.calls.at(-1)?.[0],
  };
}

/** Let the end-of-tick flush (a microtask) run. */
const tick = () => vi.advanceTimersByTimeAsync(0);

const plain = (desire: Desire | undefined) =>
  desire && { uris: desire.uris, held: [...desire.held].sort(), lists: [...desire.lists].sort() };

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('InterestRegistry', () => {
  it('N holds of one URI make one entry and one flush', async () => {
    const t = setup();
    for (let i = 0; i < 5; i++) t.registry.holdUri('a://1');
    await tick();
    expect(t.onFlush).toHaveBeenCalledTimes(1);
    expect(plain(t.lastFlush())).toEqual({
      uris: ['a://1'],
      held: ['a://1'],
      lists: ['resources'],
    });
    expect(t.interest().map(([, refs]) => refs)).toEqual([1, 2, 3, 4, 5]);
  });

  it('every change of one tick reaches onFlush once, as the whole desire (URIs sorted, resources list always)', async () => {
    const t = setup();
    t.registry.holdUri('c://3');
    t.registry.holdUri('a://1');
    t.registry.holdList('tools');
    t.registry.holdUri('b://2');
    expect(t.onFlush).not.toHaveBeenCalled(); // not before the end of the tick
    await tick();
    expect(t.onFlush).toHaveBeenCalledTimes(1);
    expect(plain(t.lastFlush())).toEqual({
      uris: ['a://1', 'b://2', 'c://3'],
      held: ['a://1', 'b://2', 'c://3'],
      lists: ['resources', 'tools'],
    });

    // The next tick's change is the next flush, again with everything.
    t.registry.holdUri('0://0');
    await tick();
    expect(t.onFlush).toHaveBeenCalledTimes(2);
    expect(t.lastFlush()?.uris).toEqual(['0://0', 'a://1', 'b://2', 'c://3']);
  });

  it('one more holder of a URI already held changes nothing to flush', async () => {
    const t = setup();
    t.registry.holdUri('a://1');
    await tick();
    t.registry.holdUri('a://1');
    await tick();
    expect(t.onFlush).toHaveBeenCalledTimes(1);
  });

  it('the last release lingers lingerMs, then flushes without the URI', async () => {
    const t = setup();
    const release = t.registry.holdUri('a://1');
    t.registry.holdUri('b://2');
    await tick();
    release();
    await tick();
    expect(t.registry.wants('a://1')).toBe(true);
    expect(t.registry.desire().uris).toEqual(['a://1', 'b://2']);
    expect([...t.registry.desire().held]).toEqual(['b://2']);
    expect(t.interest().at(-1)).toEqual(['a://1', 0, true]);

    await vi.advanceTimersByTimeAsync(LINGER_MS - 1);
    expect(t.onFlush).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.registry.wants('a://1')).toBe(false);
    expect(t.interest().at(-1)).toEqual(['a://1', 0, false]);
    expect(t.onFlush).toHaveBeenCalledTimes(2);
    expect(plain(t.lastFlush())).toEqual({
      uris: ['b://2'],
      held: ['b://2'],
      lists: ['resources'],
    });
  });

  it('a re-hold during the linger cancels it (StrictMode mount → unmount → mount)', async () => {
    const t = setup();
    const release = t.registry.holdUri('a://1');
    release();
    t.registry.holdUri('a://1');
    await tick();
    await vi.advanceTimersByTimeAsync(10 * LINGER_MS);
    expect(t.onFlush).toHaveBeenCalledTimes(1);
    expect(t.registry.wants('a://1')).toBe(true);
    expect(t.interest()).toEqual([
      ['a://1', 1, true],
      ['a://1', 0, true],
      ['a://1', 1, true],
    ]);
  });

  it('a re-hold just before the linger ends keeps the URI wanted, and flushes it as held again', async () => {
    const t = setup();
    const first = t.registry.holdUri('a://1');
    await tick();
    first();
    await vi.advanceTimersByTimeAsync(LINGER_MS - 1);
    expect(t.onFlush).toHaveBeenCalledTimes(1);
    const second = t.registry.holdUri('a://1');
    await vi.advanceTimersByTimeAsync(10 * LINGER_MS);
    expect(t.registry.wants('a://1')).toBe(true);
    // A connection that started while it lingered took it as an extra: it learns it is held.
    expect(t.onFlush).toHaveBeenCalledTimes(2);
    expect(plain(t.lastFlush())?.held).toEqual(['a://1']);
    second();
    await vi.advanceTimersByTimeAsync(LINGER_MS);
    expect(t.registry.wants('a://1')).toBe(false);
    expect(t.onFlush).toHaveBeenCalledTimes(3);
  });

  it('a re-hold cancels the linger timer: a second release lingers the full lingerMs again', async () => {
    const t = setup();
    const first = t.registry.holdUri('a://1');
    first();
    await vi.advanceTimersByTimeAsync(LINGER_MS - 100);
    const second = t.registry.holdUri('a://1');
    await vi.advanceTimersByTimeAsync(50);
    second();
    // The first linger would have ended here.
    await vi.advanceTimersByTimeAsync(100);
    expect(t.registry.wants('a://1')).toBe(true);
    await vi.advanceTimersByTimeAsync(LINGER_MS - 100);
    expect(t.registry.wants('a://1')).toBe(false);
  });

  it('URIs released in one tick end their linger together: one flush, not one per URI', async () => {
    const t = setup();
    const wave = Array.from({ length: 25 }, (_, i) => t.registry.holdUri(`a://${i}`));
    t.registry.holdUri('b://kept');
    await tick();
    for (const release of wave) release();
    await tick();
    const late = t.registry.holdUri('c://late');
    await vi.advanceTimersByTimeAsync(10);
    late(); // a later tick: a linger of its own
    expect(t.onFlush).toHaveBeenCalledTimes(2);

    await vi.advanceTimersByTimeAsync(LINGER_MS - 11);
    expect(t.registry.wants('a://0')).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.onFlush).toHaveBeenCalledTimes(3);
    expect(plain(t.lastFlush())?.uris).toEqual(['b://kept', 'c://late']);
    expect(t.interest().filter(([, , wanted]) => !wanted)).toHaveLength(25);

    await vi.advanceTimersByTimeAsync(10);
    expect(t.onFlush).toHaveBeenCalledTimes(4);
    expect(plain(t.lastFlush())?.uris).toEqual(['b://kept']);
  });

  it('a URI held again and released in a later tick lingers from its last release, apart from its first batch', async () => {
    const t = setup();
    const a = t.registry.holdUri('a://1');
    const b = t.registry.holdUri('b://2');
    await tick();
    a();
    b();
    await vi.advanceTimersByTimeAsync(500);
    const again = t.registry.holdUri('a://1');
    await vi.advanceTimersByTimeAsync(100);
    again();
    await vi.advanceTimersByTimeAsync(400);
    expect(t.registry.wants('b://2')).toBe(false);
    expect(t.registry.wants('a://1')).toBe(true);
    await vi.advanceTimersByTimeAsync(LINGER_MS - 400);
    expect(t.registry.wants('a://1')).toBe(false);
  });

  it('a release function is idempotent: calling it twice releases one hold', async () => {
    const t = setup();
    const one = t.registry.holdUri('a://1');
    t.registry.holdUri('a://1');
    one();
    one();
    await vi.advanceTimersByTimeAsync(10 * LINGER_MS);
    expect(t.registry.wants('a://1')).toBe(true);
    expect([...t.registry.desire().held]).toEqual(['a://1']);
    expect(t.interest().map(([, refs]) => refs)).toEqual([1, 2, 1]);
  });

  it('lists are held, linger and are flushed like URIs; the resources list is always wanted', async () => {
    const t = setup();
    expect(t.registry.wantsList('resources')).toBe(true);
    expect(t.registry.wantsList('prompts')).toBe(false);
    const a = t.registry.holdList('prompts');
    const b = t.registry.holdList('prompts');
    await tick();
    expect(t.registry.wantsList('prompts')).toBe(true);
    expect(t.lastFlush()?.lists).toEqual(new Set(['resources', 'prompts']));
    a();
    b();
    await vi.advanceTimersByTimeAsync(LINGER_MS - 1);
    expect(t.registry.wantsList('prompts')).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.registry.wantsList('prompts')).toBe(false);
    expect(t.lastFlush()?.lists).toEqual(new Set(['resources']));
    expect(t.onFlush).toHaveBeenCalledTimes(2);
    // Lists emit no interest events (those are per URI).
    expect(t.interest()).toEqual([]);
  });

  it('the end of its lifetime stops everything: no flush, no linger end, and later holds are no-ops', async () => {
    const t = setup();
    const release = t.registry.holdUri('a://1');
    await tick();
    release(); // lingering
    t.registry.holdUri('b://2'); // a flush is scheduled
    const events = t.emit.mock.calls.length;
    t.end();
    await tick();
    await vi.advanceTimersByTimeAsync(10 * LINGER_MS);
    expect(t.onFlush).toHaveBeenCalledTimes(1);
    expect(t.emit.mock.calls.length).toBe(events);
    expect(t.registry.wants('b://2')).toBe(false);

    const late = t.registry.holdUri('c://3');
    t.registry.holdList('tools');
    late();
    await tick();
    expect(t.registry.wants('c://3')).toBe(false);
    expect(t.onFlush).toHaveBeenCalledTimes(1);
    expect(t.emit.mock.calls.length).toBe(events);
  });
});
