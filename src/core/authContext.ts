import type { Query, QueryClient } from '@tanstack/query-core';
import type { McpKeys } from './keys';

/** The authorisation context current per QueryClient and key scope. */
const current = new WeakMap<QueryClient, Map<string, string | undefined>>();

/**
 * Make `context` the current one for this QueryClient and scope. Data read
 * under another context that is `cacheScope: 'private'` (or has no scope,
 * which the SDK also treats as private) is cancelled and removed, as are the
 * lists. Returns nothing; idempotent for the same context.
 */
export function adoptAuthContext(
  client: QueryClient,
  keys: McpKeys,
  context: string | undefined,
): void {
  let byScope = current.get(client);
  if (!byScope) {
    byScope = new Map();
    current.set(client, byScope);
  }
  const scope = keys.scope ?? '';
  const had = byScope.has(scope);
  const previous = byScope.get(scope);
  byScope.set(scope, context);
  if (!had || previous === context) return;
  const isPrivate = (query: Query) => {
    if (keys.listOf(query.queryKey) !== undefined) return true;
    if (keys.uriOf(query.queryKey) === undefined) return false;
    return (query.state.data as { cacheScope?: unknown } | undefined)?.cacheScope !== 'public';
  };
  void client.cancelQueries({ predicate: isPrivate });
  client.removeQueries({ predicate: isPrivate });
}

/** Whether a read made under `context` may still write into this QueryClient's scope. */
export function isCurrentAuthContext(
  client: QueryClient,
  keys: McpKeys,
  context: string | undefined,
): boolean {
  const byScope = current.get(client);
  const scope = keys.scope ?? '';
  return !byScope?.has(scope) || byScope.get(scope) === context;
}
