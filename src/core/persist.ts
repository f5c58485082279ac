import { defaultShouldDehydrateQuery, type Query } from '@tanstack/query-core';
import { LIST_KINDS } from './lists';

export interface PersistOptions {
  /**
   * Content the server did not mark with a `cacheScope` — every 2025
   * result, the lists — is treated as private by default (the SDK does the
   * same) and not persisted. `'public'`: this app's server serves nobody's
   * own data, persist it. Content marked `cacheScope: 'private'` is never
   * persisted, whatever this says.
   */
  unmarked?: 'private' | 'public';
}

/**
 * A `dehydrateOptions.shouldDehydrateQuery` for TanStack's persisters, so a
 * reload starts warm: what TanStack persists by default, except MCP content
 * that may be someone's own. Restored content shows at once and is read
 * again once its subscription is acknowledged (docs/design.md, rule 4).
 * Give the persister a `buster` that names the server, so one server's
 * content is never restored as another's.
 */
export function createShouldPersistQuery(options: PersistOptions = {}) {
  const unmarkedIsPublic = options.unmarked === 'public';
  return (query: Query): boolean => {
    if (!defaultShouldDehydrateQuery(query)) return false;
    const key = query.queryKey;
    const rest = key[0] === 'mcp' && key.length >= 3 ? key.slice(2) : key;
    if (rest.length === 2 && rest[0] === 'resource') {
      const scope = (query.state.data as { cacheScope?: unknown } | undefined)?.cacheScope;
      return scope === 'public' || (scope === undefined && unmarkedIsPublic);
    }
    const isList = rest.length === 1 && (LIST_KINDS as readonly unknown[]).includes(rest[0]);
    return !isList || unmarkedIsPublic;
  };
}

/** `createShouldPersistQuery()`: only content marked `cacheScope: 'public'` is persisted. */
export const shouldPersistQuery: (query: Query) => boolean = createShouldPersistQuery();
