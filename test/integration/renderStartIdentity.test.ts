/** @vitest-environment jsdom */
/**
 * A provider's first read started its connection before any mount (StartPolicy 'on-render': a
 * `<Suspense>` boundary above the provider), and someone else signs in while that read is
 * pending: the connection carries on under the new identity, and the read made again (as React
 * does) ends with its data; the connection is never disposed under it. On the real servers behind the demo authorization server.
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { deferred } from '../support/deferred';
import { ERA_CASES, text } from '../support/eras';
import { atEnd, closeAll, FAST, oauthProvider, protectedServer } from '../support/oauth';
import { eventually } from '../support/wait';

afterEach(closeAll);

const NEWS = 'public://news';

describe.each(ERA_CASES)('a read that started an unmounted provider ($kind)', ({ kind }) => {
  it('someone else signing in meanwhile: the connection carries on and the read made again ends with data', async () => {
    const { authServer, server } = await protectedServer(kind, {
      resources: [text(NEWS, 'news', { cacheScope: 'public' })],
    });
    const { provider } = oauthProvider(server);
    await provider.authorize();
    const gate = deferred();
    atEnd(() => gate.resolve());
    let reads = 0;
    server.store.onRead(async (uri) => {
      if (uri !== NEWS) return;
      reads += 1;
      if (reads === 1) await gate.promise;
    });
    const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
    const sync = new McpCacheSync(
      { queryClient, url: server.url, authProvider: provider, reconnect: FAST },
      'on-render',
    );
    atEnd(async () => {
      await sync.dispose();
      queryClient.clear();
    });
    // Nothing mounts it (the render that built it is suspended on this read).
    const read = queryClient.fetchQuery(sync.resourceQueryOptions(NEWS));
    await eventually(() => expect(reads).toBe(1));

    authServer.revokeRefreshTokens();
    authServer.setUser('bob');
    await provider.authorize();
    gate.resolve();

    // What was read for alice is not written (rule 12): that read is cancelled, and React reads
    // again when it renders once more; that read goes out on the connection, now bob's.
    await read.catch(() => undefined);
    await expect(queryClient.fetchQuery(sync.resourceQueryOptions(NEWS))).resolves.toMatchObject({
      contents: [{ uri: NEWS, text: 'news' }],
    });
    expect(sync.getState().status).toBe('ready');
  });
});
