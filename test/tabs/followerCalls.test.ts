/**
 * A follower's tool calls and task requests (rule 14, rule 16): they run in the leading tab, the
 * follower waits for them as long as the leader may run them, and what the follower stops
 * waiting for stops on the leader too. Fake tabs as in roles.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { internalsOf } from '../../src/core/internals';
import { track } from '../support/deferred';
import {
  GROUP,
  group,
  REQUEST_TIMEOUT_MS,
  silentLeader,
  type Tab,
  withFakeTabs,
} from '../support/tabsHarness';

withFakeTabs();

describe('a follower’s calls (rule 14, rule 16)', () => {
  it('a follower waits for its call as long as the leader may run it: a wait for the connection, a first tool list, the call', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const call = b.call({ name: 'slow', maxTotalTimeoutMs: 1000 });
    await settle();
    const ran = a.local.calls[0]?.variables.signal as AbortSignal;
    // The leader may still be running it: connection up to REQUEST_TIMEOUT_MS, the tool list
    // and the call up to 1000 ms each.
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS + 2 * 1000 - 1);
    await settle();
    expect(call.state).toBe('pending');
    expect(ran.aborted).toBe(false);
  });

  it('a follower that stops waiting for its call cancels it on the leader', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const call = b.call({ name: 'slow', maxTotalTimeoutMs: 1000 });
    await settle();
    const ran = a.local.calls[0]?.variables.signal as AbortSignal;
    await vi.advanceTimersByTimeAsync(2 * REQUEST_TIMEOUT_MS + 2 * 1000);
    await settle();
    expect(call.error).toMatchObject({ code: 'NOT_CONNECTED' });
    expect(hub.sent(b.label, 'cancel')).toHaveLength(1);
    // Not left running there: a retry would run it twice.
    expect(ran.aborted).toBe(true);
  });

  it('a follower gives up on a call its leader never answers about after twice the request timeout, not its bound, and cancels it there', async () => {
    const { hub, settle, follower: b } = await silentLeader();
    // Its bound is twice toolMaxTotalTimeoutMs and more (about an hour by default).
    const call = b.call({ name: 'slow' });
    await settle();
    expect(hub.sent(b.label, 'call')).toHaveLength(1);
    // (Delivering messages moves the fake clock a millisecond now and then.)
    await vi.advanceTimersByTimeAsync(2 * REQUEST_TIMEOUT_MS - 100);
    await settle();
    expect(call.state).toBe('pending');
    // It asked twice whether the leader still runs it, and heard nothing.
    expect(hub.sent(b.label, 'waiting')).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(100);
    await settle();
    expect(call.error).toMatchObject({ code: 'NOT_CONNECTED' });
    expect(String(call.error)).toMatch(/may or may not have run/);
    expect(hub.sent(b.label, 'cancel')).toHaveLength(1);
    expect(hub.sent(b.label, 'call')).toHaveLength(1);
  });

  it('a follower’s task request waits as long as the leader may run it, then is cancelled on the leader', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const upstream = internalsOf(b.sync).upstream;
    const request = track(upstream.request('tasks/cancel', { taskId: 't1' }));
    await settle();
    const ran = track(a.local.requests[0]?.answer.promise as Promise<unknown>);
    // Connection up to REQUEST_TIMEOUT_MS, then the request up to REQUEST_TIMEOUT_MS.
    await vi.advanceTimersByTimeAsync(2 * REQUEST_TIMEOUT_MS);
    await settle();
    expect(request.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS);
    await settle();
    expect(request.error).toMatchObject({ code: 'NOT_CONNECTED' });
    expect(ran.state).toBe('rejected');
  });

  it('a task request made before the tab knows who leads runs in the tab, if it wins the election, like a tool call made then', async () => {
    const { tabs, open, settle } = await group(1);
    const [a] = tabs as [Tab];
    const b = open();
    // B has not heard who leads yet: its request and call wait in it, unsent.
    const request = track(internalsOf(b.sync).upstream.request('tasks/cancel', { taskId: 't1' }));
    const call = b.call({ name: 'echo' });
    await Promise.resolve();
    await Promise.resolve();
    a.crash();
    await settle();
    expect(b.tabs()?.leader).toBe(true);
    expect(b.local.calls).toHaveLength(1);
    expect(b.local.requests.map(({ method, params }) => ({ method, params }))).toEqual([
      { method: 'tasks/cancel', params: { taskId: 't1' } },
    ]);
    b.local.requests[0]?.answer.resolve({});
    await settle();
    expect(request.value).toEqual({});
    expect(call.state).toBe('pending');
  });

  it('nor is a call or task request with an infinite, negative-zero or huge duration run: each is answered INVALID_OPTIONS (rule 8)', async () => {
    const { tabs, hub, settle } = await group(1);
    const [a] = tabs as [Tab];
    const durations = [
      { timeoutMs: Number.POSITIVE_INFINITY },
      { maxTotalTimeoutMs: Number.NEGATIVE_INFINITY },
      { timeoutMs: -0 },
      { maxTotalTimeoutMs: 1e308 },
    ];
    const calls = durations.flatMap((given) => [
      { name: 'echo', progress: false, ...given },
      { name: 'tasks/cancel', arguments: { taskId: 't' }, progress: false, action: true, ...given },
    ]);
    for (const [id, variables] of calls.entries()) {
      hub.inject(GROUP, { type: 'call', tab: 'other', id, variables });
    }
    await settle();
    expect(a.local.calls).toHaveLength(0);
    expect(a.local.requests).toHaveLength(0);
    const replies = hub.sent(a.label, 'reply') as Array<{ error?: { code?: string } }>;
    expect(replies.map((reply) => reply.error?.code)).toEqual(calls.map(() => 'INVALID_OPTIONS'));
  });

  it('a call from another script whose timeout no timer can take is answered INVALID_OPTIONS, and not run (rule 8)', async () => {
    // A tab of this version checks a call's durations before it sends it (tools.ts); the channel
    // is open to any script of the origin, and a whole number past 2^31 - 1 is of the right shape.
    const { tabs, hub, settle } = await group(1);
    const [a] = tabs as [Tab];
    // Nor did a tab of an earlier version check them: NaN or a negative number is answered too,
    // not dropped unanswered (that tab would wait twice requestTimeoutMs for nothing).
    for (const [id, durations] of [
      [1, { timeoutMs: 2 ** 31 }],
      [2, { maxTotalTimeoutMs: 0 }],
      [3, { timeoutMs: Number.NaN }],
      [4, { maxTotalTimeoutMs: -1 }],
    ] as const) {
      hub.inject(GROUP, {
        type: 'call',
        tab: 'other',
        id,
        variables: { name: 'echo', progress: false, ...durations },
      });
    }
    await settle();
    expect(a.local.calls).toHaveLength(0);
    const replies = hub.sent(a.label, 'reply') as Array<{ id: number; error?: object }>;
    expect(replies).toEqual([
      expect.objectContaining({
        id: 1,
        error: expect.objectContaining({
          code: 'INVALID_OPTIONS',
          message: expect.stringContaining('timeoutMs'),
        }),
      }),
      expect.objectContaining({
        id: 2,
        error: expect.objectContaining({
          code: 'INVALID_OPTIONS',
          message: expect.stringContaining('maxTotalTimeoutMs'),
        }),
      }),
      expect.objectContaining({
        id: 3,
        error: expect.objectContaining({
          code: 'INVALID_OPTIONS',
          message: expect.stringContaining('timeoutMs'),
        }),
      }),
      expect.objectContaining({
        id: 4,
        error: expect.objectContaining({
          code: 'INVALID_OPTIONS',
          message: expect.stringContaining('maxTotalTimeoutMs'),
        }),
      }),
    ]);
  });

  it('a call from a tab of an earlier version with a fraction of a millisecond in its timeout runs', async () => {
    const { tabs, hub, settle } = await group(1);
    const [a] = tabs as [Tab];
    hub.inject(GROUP, {
      type: 'call',
      tab: 'other',
      id: 1,
      variables: { name: 'echo', progress: false, timeoutMs: 300.00000000000006 },
    });
    await settle();
    expect(a.local.calls).toEqual([
      expect.objectContaining({
        variables: expect.objectContaining({ name: 'echo', timeoutMs: 300.00000000000006 }),
      }),
    ]);
  });
});
