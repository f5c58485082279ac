/**
 * A tool call is made as someone: one that waits for the connection while the signed-in identity
 * changes never goes out as the next person (rule 12). On the real servers behind the demo
 * authorization server, with the connection held in `connecting` by a fetch that lets no
 * first request of a connection through until the test says so.
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool } from '../../src/core';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { type Deferred, deferred } from '../support/deferred';
import { ERA_CASES } from '../support/eras';
import { atEnd, closeAll, FAST, oauthProvider, protectedServer } from '../support/oauth';
import { eventually } from '../support/wait';

afterEach(closeAll);

/** A fetch that holds the first request of every connection (`initialize`, `server/discover`). */
function gatedFetch() {
  let gate: Deferred<void> | undefined;
  const fetchGated: typeof fetch = async (input, init) => {
    const body = typeof init?.body === 'string' ? init.body : '';
    if (/"method":"(initialize|server\/discover)"/.test(body)) {
      await gate?.promise;
    }
    return fetch(input, init);
  };
  return {
    fetch: fetchGated,
    close: () => {
      gate = deferred();
    },
    open: () => gate?.resolve(),
  };
}

describe.each(ERA_CASES)('a call made as one user ($kind)', ({ kind }) => {
  it('waiting for the connection when someone else signs in: fails, and never reaches the server', async () => {
    const { authServer, server } = await protectedServer(kind);
    const { provider } = oauthProvider(server);
    const gate = gatedFetch();
    atEnd(gate.open);
    const queryClient = new QueryClient();
    const sync = new McpCacheSync({
      queryClient,
      url: server.url,
      authProvider: provider,
      reconnect: FAST,
      fetch: gate.fetch,
    });
    const release = sync.mount();
    atEnd(async () => {
      release();
      await sync.dispose();
      queryClient.clear();
    });
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    sync.authorize();
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    expect(provider.identity()).toBeDefined();
    expect(await callTool(sync, { name: 'plain' })).toHaveProperty('content');
    const callsBefore = server.counters().toolCalls;

    // Alice's connection starts again and is held there; she calls a tool meanwhile.
    gate.close();
    sync.reconnect();
    await eventually(() => expect(sync.getState().status).not.toBe('ready'));
    const aliceCall = callTool(sync, { name: 'plain' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    // Bob signs in on this page before the connection is back.
    authServer.revokeRefreshTokens();
    authServer.setUser('bob');
    await provider.authorize();
    gate.open();
    await eventually(() => expect(sync.getState().status).toBe('ready'));

    const error = await aliceCall;
    expect(error).toMatchObject({ code: 'NOT_CONNECTED' });
    expect((error as Error).message).toContain('identity changed');
    expect(server.counters().toolCalls).toBe(callsBefore);
    // Bob's own calls go out.
    expect(await callTool(sync, { name: 'plain' })).toHaveProperty('content');
    expect(server.counters().toolCalls).toBe(callsBefore + 1);
  });
});
