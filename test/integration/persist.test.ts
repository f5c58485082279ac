/**
 * A warm reload (issue 13): the cache is persisted with TanStack's persister API and
 * `shouldPersistQuery`, restored into a new page's QueryClient, and shown at once; restored
 * content is read again once its subscription is acknowledged, once, and private content never
 * reaches storage. Against the three real servers.
 */

import { QueryClient } from '@tanstack/query-core';
import {
  type PersistedClient,
  type Persister,
  persistQueryClientRestore,
  persistQueryClientSave,
} from '@tanstack/query-persist-client-core';
import { afterEach, describe, expect, it } from 'vitest';
import { createShouldPersistQuery, shouldPersistQuery } from '../../src/core';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { ResourceStore } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start, text } from '../support/eras';
import { observeList, observeResource } from '../support/observe';
import { eventually, idle } from '../support/wait';

const PUBLIC = 'docs://handbook';
const PRIVATE = 'mail://inbox';
const UNMARKED = 'notes://today';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

/** Storage that outlives a page, as localStorage or IndexedDB would. */
function memoryPersister(): Persister & { stored(): PersistedClient | undefined } {
  let stored: string | undefined;
  return {
    persistClient: async (client) => {
      stored = JSON.stringify(client);
    },
    restoreClient: async () => (stored === undefined ? undefined : JSON.parse(stored)),
    removeClient: async () => {
      stored = undefined;
    },
    stored: () => (stored === undefined ? undefined : JSON.parse(stored)),
  };
}

function page(url: string, queryClient = new QueryClient()) {
  const sync = new McpCacheSync({ queryClient, url, lingerMs: 10 });
  const release = sync.mount();
  cleanups.push(async () => {
    release();
    await sync.dispose();
  });
  return { sync, queryClient };
}

describe.each(ERA_CASES)('warm reload on $kind', ({ kind, era }) => {
  it('shows restored public content at once, re-reads it once when acknowledged, and never stores private content', async () => {
    const store = new ResourceStore([
      text(PUBLIC, 'handbook v1', { cacheScope: 'public' }),
      text(PRIVATE, 'your mail', { cacheScope: 'private' }),
      text(UNMARKED, 'notes'),
    ]);
    const server = await start(kind, { store });
    cleanups.push(() => server.close());
    const persister = memoryPersister();
    const buster = server.url;

    const before = page(server.url);
    const views = [PUBLIC, PRIVATE, UNMARKED].map((uri) => observeResource(before.sync, uri));
    observeList(before.sync);
    await eventually(() =>
      expect(views.map((view) => view.text())).toEqual(['handbook v1', 'your mail', 'notes']),
    );
    const persist = async (shouldDehydrateQuery: typeof shouldPersistQuery) => {
      await persistQueryClientSave({
        queryClient: before.queryClient,
        persister,
        buster,
        dehydrateOptions: { shouldDehydrateQuery },
      });
      return persister.stored()?.clientState.queries.map((query) => query.queryKey);
    };
    if (era === 'modern') {
      expect(await persist(shouldPersistQuery)).toEqual([['resource', PUBLIC]]);
    } else {
      // 2025 results carry no cacheScope: nothing is known to be public…
      expect(await persist(shouldPersistQuery)).toEqual([]);
      // …unless the app says its server serves nobody's own data.
      const unmarked = createShouldPersistQuery({ unmarked: 'public' });
      expect(await persist(unmarked)).toEqual(
        expect.arrayContaining([['resource', PUBLIC], ['resources']]),
      );
    }
    for (const close of cleanups.splice(1).reverse()) await close(); // the page goes away

    // Changed while no page was open: nobody was told.
    store.setText(PUBLIC, 'handbook v2');
    server.resetCounters();

    const queryClient = new QueryClient();
    await persistQueryClientRestore({ queryClient, persister, buster });
    const after = page(server.url, queryClient);
    const restored = observeResource(after.sync, PUBLIC);
    expect(restored.text()).toBe('handbook v1'); // at once, before any connection
    if (era === 'modern') expect(queryClient.getQueryData(['resource', PRIVATE])).toBeUndefined();
    await eventually(() => expect(restored.text()).toBe('handbook v2'));
    await eventually(() => expect(diagnosticsOf(after.sync).resources[0]?.acknowledged).toBe(true));
    await idle(queryClient);
    expect(server.counters().reads).toBe(1);
    // And it is live.
    server.setText(PUBLIC, 'handbook v3');
    await eventually(() => expect(restored.text()).toBe('handbook v3'));
  });
});
