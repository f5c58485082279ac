/**
 * A server whose `resources/list` pagination never ends: its `nextCursor` cycles between two
 * cursors. The SDK walks at most 64 pages and then fails; asking again cannot end the walk, so
 * the failure is not retried (each retry is 64 more requests), the list shown before stays, and
 * the error says why.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { observeList } from '../support/observe';
import { eventually, idle } from '../support/wait';
import { HOSTILE_KINDS, type Hostile, startHostile, URI } from './harness';

/** The SDK's `listMaxPages`: the walk fails on the page after it. */
const PAGES = 64;

describe.each(HOSTILE_KINDS)('a $kind server whose resources/list pages cycle', ({ kind }) => {
  let h: Hostile | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('fails once with a clear error, is not retried, and keeps the list shown before', async () => {
    const hostile = await startHostile(kind);
    h = hostile;
    const view = observeList(hostile.sync);
    await eventually(() => expect(view.uris()).toEqual([URI]));
    await idle(hostile.queryClient);
    hostile.proxy.setRules({
      rewrite: (message, exchange) => {
        if (exchange.method !== 'resources/list' || !('id' in message)) return undefined;
        const cursor = (exchange.params as { cursor?: unknown } | undefined)?.cursor;
        return {
          jsonrpc: '2.0',
          id: message.id,
          // The fields a 2026-07-28 result must have: the server's answer to an unknown cursor
          // is an error, replaced too.
          result: {
            resources: [{ uri: URI, name: 'app' }],
            nextCursor: cursor === 'a' ? 'b' : 'a',
            resultType: 'complete',
            ttlMs: 0,
            cacheScope: 'private',
          },
        };
      },
    });
    const before = hostile.proxy.stats('resources/list').requests;
    void view.observer.refetch();
    await eventually(() => expect(view.observer.getCurrentResult().status).toBe('error'));
    await idle(hostile.queryClient);
    expect(view.observer.getCurrentResult().error?.message).toMatch(/pagination did not terminate/);
    expect(view.observer.getCurrentResult().failureCount).toBe(1);
    expect(hostile.proxy.stats('resources/list').requests - before).toBe(PAGES);
    expect(view.uris()).toEqual([URI]);
  });
});
