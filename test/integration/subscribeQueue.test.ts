/**
 * Rule 4 on 2025 servers when the list is longer than the subscribes the channel sends at once:
 * a row's subscribe waits its turn in the channel, and that wait is ours, not the server's. A
 * first read waits for its coverage while acknowledgements keep coming; `requestTimeoutMs`
 * bounds the wait only once the row's own subscribe is on the wire. Found by the grow bench on a
 * loaded machine: rows queued behind a thousand subscribes went ahead uncovered at the bound, and
 * were read a second time once covered (1.35–1.45 reads per URI).
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { SUBSCRIBES_AT_ONCE } from '../../src/core/subscribePacing';
import { startTamperProxy, type TestServer } from '../servers';
import { start, text } from '../support/eras';
import { recordEvents } from '../support/events';
import { observeResource } from '../support/observe';
import { eventually, idle } from '../support/wait';

/** Each acknowledgement reaches the client this long after the server gave it… */
const ACK_DELAY_MS = 150;
/** …far below the bound on a request (a subscribe that timed out would be declined meanwhile)… */
const REQUEST_TIMEOUT_MS = 3000;
/** …yet the last of these rounds of subscribes go on the wire seconds after their rows mount. */
const ROWS = 12 * SUBSCRIBES_AT_ONCE;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

describe('a 2025 list longer than the subscribes sent at once', () => {
  it('reads each row once, after its coverage, however long its subscribe waited its turn', async () => {
    const server: TestServer = await start('legacy-v2');
    cleanups.push(() => server.close());
    const uris = Array.from({ length: ROWS }, (_, i) => `row://${i}`);
    for (const uri of uris) server.store.upsert(text(uri, `row ${uri}`));
    const proxy = await startTamperProxy(server.url, {
      hold: (exchange) => (exchange.method === 'resources/subscribe' ? ACK_DELAY_MS : undefined),
    });
    cleanups.push(() => proxy.close());

    const queryClient = new QueryClient();
    const sync = new McpCacheSync({
      queryClient,
      url: proxy.url,
      lingerMs: 30,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    });
    cleanups.push(async () => {
      await sync.dispose();
      queryClient.clear();
    });
    sync.mount();
    const log = recordEvents(sync);
    const views = uris.map((uri) => observeResource(sync, uri));
    cleanups.push(() => {
      for (const view of views) view.unmount();
    });

    await eventually(
      () => expect(views.map((view) => view.text())).toEqual(uris.map((uri) => `row ${uri}`)),
      { timeout: 30_000 },
    );
    await idle(queryClient);
    // A request that timed out on a loaded machine is read again by design (a read is retried;
    // a subscribe is declined meanwhile, its row read uncovered and again once covered). Every
    // other row is read once: the later rounds waited in line past requestTimeoutMs, yet none of
    // them went ahead uncovered.
    const failed = new Set<string>();
    for (const event of log.events) {
      if (event.type === 'read' && event.phase === 'error') failed.add(event.uri);
      if (event.type !== 'declined') continue;
      for (const [uri, reason] of event.changes) if (reason !== null) failed.add(uri);
    }
    expect(uris.filter((uri) => server.store.reads(uri) !== 1 && !failed.has(uri))).toEqual([]);
  });
});
