/**
 * A URI released shortly before its connection was replaced, and held again before its linger
 * ended: the new connection covers it, and its updates show. (A view shown only while the
 * status is `ready` unmounts during a reconnect quicker than `lingerMs`.) Against the three real
 * servers.
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { atEnd, closeAll } from '../support/atEnd';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start, text } from '../support/eras';
import { observeResource } from '../support/observe';
import { eventually } from '../support/wait';

const URI = 'config://app';

afterEach(closeAll);

describe.each(ERA_CASES)('held again while it lingers, across a reconnect ($kind)', ({ kind }) => {
  it('the new connection covers it, and its updates show', async () => {
    const server = await start(kind);
    atEnd(() => server.close());
    server.store.upsert(text(URI, 'v1'));
    const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
    atEnd(() => queryClient.clear());
    const sync = new McpCacheSync({ queryClient, url: server.url, lingerMs: 60_000 });
    const release = sync.mount();
    atEnd(async () => {
      release();
      await sync.dispose();
    });
    const first = observeResource(sync, URI);
    await eventually(() => expect(first.text()).toBe('v1'));
    const covered = () => diagnosticsOf(sync)?.resources.find((r) => r.uri === URI)?.acknowledged;
    await eventually(() => expect(covered()).toBe(true));

    // The view goes while the connection is replaced, and comes back once it is ready.
    first.unmount();
    sync.reconnect();
    await eventually(() => expect(sync.getState().status).not.toBe('ready'));
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    const again = observeResource(sync, URI);
    atEnd(again.unmount);

    await eventually(() => expect(covered()).toBe(true));
    server.setText(URI, 'v2');
    await eventually(() => expect(again.text()).toBe('v2'));
  });
});
