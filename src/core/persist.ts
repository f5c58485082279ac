import { defaultShouldDehydrateQuery, type Query } from '@tanstack/query-core';
import { createMcpKeys } from './keys';

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
 * that may be someone's own. The rule is one for every MCP key (resources,
 * lists, prompts, completions, tasks): marked public, kept; marked private,
 * never; unmarked, as `unmarked` says. Restored content shows at once and is
 * read again once its subscription is acknowledged (docs/design.md, rule 4).
 * Give the persister a `buster` that names the server, so one server's
 * content is never restored as another's.
 */
export function createShouldPersistQuery(options: PersistOptions = {}) {
  const unmarkedIsPublic = options.unmarked === 'public';
  return (query: Query): boolean => {
    if (!defaultShouldDehydrateQuery(query)) return false;
    const key = query.queryKey;
    const keys = createMcpKeys(key[0] === 'mcp' ? (key[1] as string) : undefined);
    if (!keys.owns(key)) return true;
    const scope = (query.state.data as { cacheScope?: unknown } | undefined)?.cacheScope;
    return scope === 'public' || (scope === undefined && unmarkedIsPublic);
  };
}

/** `createShouldPersistQuery()`: only content marked `cacheScope: 'public'` is persisted. */
export const shouldPersistQuery: (query: Query) => boolean = createShouldPersistQuery();
