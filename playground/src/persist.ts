import type { PersistedClient, Persister } from '@tanstack/react-query-persist-client';
import { createShouldPersistQuery } from './mcp';

/**
 * The warm reload (`?persist=1`): the page's cache is kept in localStorage and restored before
 * anything renders, so content shows at once and is read again once its subscription is
 * acknowledged. The demo servers serve nobody's own data, so their unmarked content (every 2025
 * result, the lists) may be stored too; content marked `cacheScope: 'private'` never is.
 */
export function persistOptions(url: string) {
  return {
    persister: localStoragePersister(`mcp-playground:${url}`),
    // One server's content is never restored as another's.
    buster: url,
    dehydrateOptions: { shouldDehydrateQuery: createShouldPersistQuery({ unmarked: 'public' }) },
  };
}

function localStoragePersister(key: string): Persister {
  return {
    persistClient: (client: PersistedClient) => {
      try {
        localStorage.setItem(key, JSON.stringify(client));
      } catch {
        // Full or unavailable storage: the next reload is cold, nothing else changes.
      }
    },
    restoreClient: () => {
      const stored = localStorage.getItem(key);
      return stored === null ? undefined : (JSON.parse(stored) as PersistedClient);
    },
    removeClient: () => localStorage.removeItem(key),
  };
}
