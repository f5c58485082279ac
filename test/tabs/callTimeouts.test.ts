/**
 * Rule 8 for a tool call's own durations: `timeoutMs` and `maxTotalTimeoutMs` of the call's
 * variables that no timer can take (not a number, below 1 ms, past 2^31 - 1 ms, where
 * `setTimeout` fires at once) make the call fail at once with INVALID_OPTIONS naming the option,
 * before anything is sent: nothing reaches the server, and a follower tab sends nothing to the
 * leader. On a real server, in a page without tab sharing and in real tabs (each an McpCacheSync
 * with its own QueryClient, elected with in-memory Web Locks, talking over Node's
 * BroadcastChannel), as in slowReads.test.ts.
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool } from '../../src/core';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import type { CallToolVariables } from '../../src/core/upstream';
import type { TestServer } from '../servers';
import { atEnd, closeAll } from '../support/atEnd';
import { serve } from '../support/eras';
import { BrowserLocks, openTab } from '../support/tabs';
import { eventually } from '../support/wait';

afterEach(closeAll);

const INVALID: Array<[string, Partial<CallToolVariables>, string]> = [
  ['timeoutMs NaN', { timeoutMs: Number.NaN }, 'timeoutMs'],
  ['timeoutMs negative', { timeoutMs: -1 }, 'timeoutMs'],
  ['timeoutMs of nothing', { timeoutMs: 0 }, 'timeoutMs'],
  ['timeoutMs Infinity', { timeoutMs: Number.POSITIVE_INFINITY }, 'timeoutMs'],
  ['timeoutMs past 2^31 - 1', { timeoutMs: 2 ** 31 }, 'timeoutMs'],
  ['timeoutMs a string', { timeoutMs: '500' as unknown as number }, 'timeoutMs'],
  ['maxTotalTimeoutMs NaN', { maxTotalTimeoutMs: Number.NaN }, 'maxTotalTimeoutMs'],
  ['maxTotalTimeoutMs negative', { maxTotalTimeoutMs: -5 }, 'maxTotalTimeoutMs'],
  [
    'maxTotalTimeoutMs Infinity',
    { maxTotalTimeoutMs: Number.POSITIVE_INFINITY },
    'maxTotalTimeoutMs',
  ],
  ['maxTotalTimeoutMs past 2^31 - 1', { maxTotalTimeoutMs: 2 ** 31 }, 'maxTotalTimeoutMs'],
];

async function toolServer(): Promise<TestServer> {
  const server = await serve('modern');
  server.store.setTools([{ name: 'quick' }]);
  return server;
}

/** A leading tab and a following one on `server`, the follower ready. */
async function twoTabs(server: TestServer) {
  const locks = new BrowserLocks();
  const leader = openTab(locks, { url: server.url });
  atEnd(leader.close);
  await eventually(() => expect(leader.tabs()?.leader).toBe(true));
  const follower = openTab(locks, { url: server.url });
  atEnd(follower.close);
  await eventually(() => expect(follower.tabs()?.tabs).toBe(2));
  await eventually(() => expect(follower.sync.getState().status).toBe('ready'));
  return { leader, follower };
}

/** What a call that fails as rule 8 says rejects with. */
const invalidOption = (named: string) =>
  expect.objectContaining({
    code: 'INVALID_OPTIONS',
    message: expect.stringContaining(`${named} must be from 1 to ${2 ** 31 - 1} ms`),
  });

describe('a tool call’s own duration no timer can take is a clear error, and nothing is sent (rule 8)', () => {
  it.each(INVALID)('without tab sharing: %s', async (_, durations, named) => {
    const server = await toolServer();
    const sent: string[] = [];
    const counting: typeof fetch = (input, init) => {
      sent.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    const queryClient = new QueryClient();
    const sync = new McpCacheSync({ queryClient, url: server.url, fetch: counting });
    atEnd(async () => {
      await sync.dispose();
      queryClient.clear();
    });
    // Not mounted: a call demands the connection; this one is refused before that.
    await expect(callTool(sync, { name: 'quick', ...durations })).rejects.toEqual(
      invalidOption(named),
    );
    expect(sent).toEqual([]);
    // The same call with durations a timer takes runs.
    await expect(
      callTool(sync, { name: 'quick', timeoutMs: 2 ** 31 - 1, maxTotalTimeoutMs: 60_000 }),
    ).resolves.toMatchObject({ content: [{ text: 'called quick with {}' }] });
  });

  it('with tab sharing, in the follower and in the leader, for every such value', async () => {
    const server = await toolServer();
    const { leader, follower } = await twoTabs(server);
    for (const [, durations, named] of INVALID) {
      for (const tab of [follower, leader]) {
        await expect(callTool(tab.sync, { name: 'quick', ...durations })).rejects.toEqual(
          invalidOption(named),
        );
      }
    }
    // A valid call goes through the leader, after the invalid ones: had any of them been sent,
    // the leader would have heard it first.
    await expect(
      callTool(follower.sync, { name: 'quick', timeoutMs: 5000 }),
    ).resolves.toMatchObject({ content: [{ text: 'called quick with {}' }] });
    expect(leader.channels.heard('call')).toHaveLength(1);
    expect(server.counters().toolCalls).toBe(1);
  });

  it('a duration of a fraction of a millisecond a timer takes runs in a follower too, as it does alone', async () => {
    // `seconds * 1000` is seldom a whole number (0.3 s is 300.00000000000006 ms): the SDK's
    // timers take it, and the leader's message check must not drop the call (the follower would
    // then wait twice requestTimeoutMs and say the call may or may not have run).
    const timeoutMs = 0.1 * 3 * 1000;
    const maxTotalTimeoutMs = 1500.5;
    expect(Number.isInteger(timeoutMs)).toBe(false);
    const server = await toolServer();
    const { leader, follower } = await twoTabs(server);
    let outcome: unknown;
    callTool(follower.sync, { name: 'quick', timeoutMs, maxTotalTimeoutMs }).then(
      (value) => {
        outcome = value;
      },
      (error: unknown) => {
        outcome = error;
      },
    );
    await eventually(() => expect(server.counters().toolCalls).toBe(1), { timeout: 3000 });
    await eventually(() =>
      expect(outcome).toMatchObject({ content: [{ text: 'called quick with {}' }] }),
    );
    expect(leader.channels.heard('call')).toHaveLength(1);
  });
});
