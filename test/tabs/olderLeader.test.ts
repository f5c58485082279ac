import { describe, expect, it, vi } from 'vitest';
import { MAX_REQUESTS_PER_TAB } from '../../src/tabs/leader';
import {
  contents,
  GROUP,
  group,
  REQUEST_TIMEOUT_MS,
  readIn,
  resourceKey,
  silentLeader,
  type Tab,
  withFakeTabs,
} from '../support/tabsHarness';

withFakeTabs();

const LAST = MAX_REQUESTS_PER_TAB;

/** The earlier leader's refusal of one request too many. */
const TOO_MANY = {
  name: 'McpQueryError',
  code: 'INVALID_OPTIONS',
  message: 'too many requests from one tab at once',
};

describe('a follower under a leader of an earlier version (rule 14)', () => {
  it.each(['read', 'call'] as const)(
    'a %s the leader refuses as one too many, after a cancel, waits for a place and runs, not fails',
    async (kind) => {
      const { hub, settle, follower: b } = await silentLeader();
      const sent = (type: string) => hub.sent(b.label, type) as Array<{ id: number }>;
      const all = Array.from({ length: LAST }, (_, i) => readIn(b, `doc://${i}`));
      await settle();
      expect(sent('read')).toHaveLength(LAST);
      const next = kind === 'read' ? readIn(b, 'doc://next') : b.call({ name: 'echo' });
      await settle();
      // The follower cancels its first read: it frees the place, tells the leader, and sends the
      // next request into it at once.
      await b.queryClient.cancelQueries({ queryKey: resourceKey('doc://0') });
      await settle();
      expect(all[0]?.state).toBe('rejected');
      const cancelledId = sent('read')[0]?.id as number;
      expect(sent('cancel')).toEqual([expect.objectContaining({ id: cancelledId })]);
      expect(sent(kind)).toHaveLength(kind === 'read' ? LAST + 1 : 1);
      const nextId = sent(kind).at(-1)?.id as number;
      // The earlier leader still runs the cancelled read, and refuses the next request.
      hub.inject(GROUP, { type: 'reply', to: b.id, id: nextId, error: TOO_MANY }, 'ghost');
      await settle();
      expect(next.state).toBe('pending');
      // While the cancelled read runs there, the refused request is not sent again.
      readIn(b, 'doc://later');
      await settle();
      expect(sent(kind)).toHaveLength(kind === 'read' ? LAST + 1 : 1);
      // The cancelled read ends there: its late reply frees the place, and the refused request
      // goes into it.
      hub.inject(
        GROUP,
        { type: 'reply', to: b.id, id: cancelledId, value: contents('doc://0', 'late') },
        'ghost',
      );
      await settle();
      expect(sent(kind)).toHaveLength(kind === 'read' ? LAST + 2 : 2);
      const resentId = sent(kind).at(-1)?.id as number;
      const value = kind === 'read' ? contents('doc://next', 'v') : { content: [] };
      hub.inject(GROUP, { type: 'reply', to: b.id, id: resentId, value }, 'ghost');
      await settle();
      expect(next.value).toEqual(value);
      expect(all[0]?.state).toBe('rejected');
    },
  );
});

const RESULT = { content: [{ type: 'text' as const, text: 'ran once' }] };

/**
 * A group of `count` tabs (the first leads), the last one's call the leader runs, and a script's
 * refusal of it as one too many.
 */
async function refusedWhileRunning(count: number, signal?: AbortSignal) {
  const opened = await group(count);
  const { tabs, hub, settle } = opened;
  const [a, b] = [tabs[0] as Tab, tabs.at(-1) as Tab];
  const call = b.call({ name: 'charge', ...(signal && { signal }) });
  await settle();
  expect(a.local.calls).toHaveLength(1);
  const id = (hub.sent(b.label, 'call')[0] as { id: number }).id;
  hub.inject(GROUP, { type: 'reply', to: b.id, id, error: TOO_MANY }, 'script');
  await settle();
  expect(call.state).toBe('pending');
  return { ...opened, a, b, call, id };
}

describe('a refusal a script makes up (rule 14)', () => {
  it('a call the leader runs is not run again when the follower sends it again, and its reply answers it', async () => {
    const { a, b, call, hub, settle } = await refusedWhileRunning(2);
    // Anything that frees or asks for a place sends it again.
    readIn(b, 'doc://next');
    await settle();
    expect(hub.sent(b.label, 'call')).toHaveLength(2);
    expect(a.local.calls).toHaveLength(1);
    a.local.calls[0]?.answer.resolve(RESULT);
    await settle();
    expect(call.value).toEqual(RESULT);
  });

  it('its reply, before it is sent again, answers it; it is not sent again', async () => {
    const { a, b, call, hub, settle } = await refusedWhileRunning(2);
    a.local.calls[0]?.answer.resolve(RESULT);
    await settle();
    expect(call.value).toEqual(RESULT);
    readIn(b, 'doc://next');
    await settle();
    expect(hub.sent(b.label, 'call')).toHaveLength(1);
    expect(a.local.calls).toHaveLength(1);
  });

  it('cancelled while it waits again, the leader is told: the call it runs is cancelled there', async () => {
    const controller = new AbortController();
    const { a, b, call, id, hub, settle } = await refusedWhileRunning(2, controller.signal);
    controller.abort();
    await settle();
    expect(call.error).toMatchObject({ code: 'CANCELLED' });
    expect(hub.sent(b.label, 'cancel')).toEqual([{ type: 'cancel', tab: b.id, id }]);
    expect(a.local.calls[0]?.variables.signal?.aborted).toBe(true);
  });

  it('a handover meanwhile: the next leader does not run it, it fails as a call that may have run', async () => {
    const { a, call, tabs, settle } = await refusedWhileRunning(3);
    const c = tabs[1] as Tab;
    a.crash();
    await settle();
    expect(c.tabs()?.leader).toBe(true);
    expect(c.local.calls).toHaveLength(0);
    expect(call.state).toBe('rejected');
    expect(call.error).toMatchObject({ code: 'CONNECTION_LOST' });
    expect(String((call.error as Error).message)).toContain('may or may not have run');
  });

  it('given up on while it waits again, it fails as a call that may have run, not as one never run', async () => {
    const { hub, settle, follower: b } = await silentLeader();
    const call = b.call({ name: 'charge' });
    await settle();
    const id = (hub.sent(b.label, 'call')[0] as { id: number }).id;
    hub.inject(GROUP, { type: 'reply', to: b.id, id, error: TOO_MANY }, 'script');
    await settle();
    await vi.advanceTimersByTimeAsync(2 * REQUEST_TIMEOUT_MS + 1000);
    await settle();
    expect(call.state).toBe('rejected');
    expect(call.error).toMatchObject({ code: 'NOT_CONNECTED' });
    expect(String((call.error as Error).message)).toContain('may or may not have run');
  });
});

describe('requests refused as too many (a leader of an earlier version)', () => {
  it('go again in the order they were made', async () => {
    const { hub, settle, follower: b } = await silentLeader();
    Array.from({ length: LAST }, (_, i) => readIn(b, `doc://${i}`));
    await settle();
    const calls = ['first', 'second', 'third'].map((name) => b.call({ name }));
    await settle();
    // Three reads are cancelled: the three calls go into their places at once.
    for (const i of [0, 1, 2]) {
      await b.queryClient.cancelQueries({ queryKey: resourceKey(`doc://${i}`) });
    }
    await settle();
    const sentCalls = () => hub.sent(b.label, 'call') as Array<{ id: number; variables: object }>;
    expect(sentCalls().map((m) => m.variables)).toMatchObject([
      { name: 'first' },
      { name: 'second' },
      { name: 'third' },
    ]);
    // The earlier leader still runs the cancelled reads, and refuses the calls, in order.
    for (const { id } of sentCalls()) {
      hub.inject(GROUP, { type: 'reply', to: b.id, id, error: TOO_MANY }, 'ghost');
    }
    await settle();
    // The cancelled reads end there: their late replies free the places.
    const readIds = (hub.sent(b.label, 'read') as Array<{ id: number }>).slice(0, 3);
    for (const [i, { id }] of readIds.entries()) {
      const value = contents(`doc://${i}`, 'late');
      hub.inject(GROUP, { type: 'reply', to: b.id, id, value }, 'ghost');
    }
    await settle();
    expect(
      sentCalls()
        .slice(3)
        .map((m) => m.variables),
    ).toMatchObject([{ name: 'first' }, { name: 'second' }, { name: 'third' }]);
    for (const call of calls) expect(call.state).toBe('pending');
  });
});
