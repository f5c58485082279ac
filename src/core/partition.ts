import type { Query, QueryClient } from '@tanstack/query-core';
import type { McpKeys } from './keys';

/**
 * Who the data of one QueryClient scope belongs to: the server (connection
 * identity) and the signed-in identity (`authContext`). Keys stay the
 * documented `['resource', uri]`, so the partition is kept by purging.
 */
export interface PartitionIdentity {
  connection: string;
  auth: string | undefined;
}

const current = new WeakMap<QueryClient, Map<string | undefined, PartitionIdentity>>();

/**
 * Make `identity` the current one for this QueryClient and scope.
 * - Another server: every MCP entry of the scope goes (data read from one
 *   server is never shown as another's).
 * - Another authContext: private data goes (`cacheScope: 'private'`, or no
 *   scope, which the SDK also treats as private), the lists, prompts,
 *   completions and tasks.
 * Entries someone observes are reset to pending (their observers are told,
 * and never render the old data again); the rest are removed. In-flight
 * reads are cancelled, and the attachment signal (routing.ts) fences those still on their way.
 * Returns the entries reset, for the caller to fetch again when it may.
 */
export function adoptPartition(
  client: QueryClient,
  keys: McpKeys,
  identity: PartitionIdentity,
): Query[] {
  let byScope = current.get(client);
  if (!byScope) {
    byScope = new Map();
    current.set(client, byScope);
  }
  const previous = byScope.get(keys.scope);
  byScope.set(keys.scope, identity);
  if (!previous) return [];
  const serverChanged = previous.connection !== identity.connection;
  if (!serverChanged && previous.auth === identity.auth) return [];
  const ours = (query: Query) => keys.owns(query.queryKey);
  // Lists, prompts, completions and tasks are the user's; a resource says whether it is.
  const isPrivate = (query: Query) =>
    keys.uriOf(query.queryKey) === undefined
      ? ours(query)
      : (query.state.data as { cacheScope?: unknown } | undefined)?.cacheScope !== 'public';
  const cache = client.getQueryCache();
  const reset: Query[] = [];
  for (const query of cache.getAll()) {
    if (!(serverChanged ? ours(query) : isPrivate(query))) continue;
    if (query.observers.length > 0) {
      query.reset();
      reset.push(query);
    } else {
      cache.remove(query);
    }
  }
  return reset;
}

/** Who a connection's data belongs to: the server it reads from, and the signed-in identity. */
export function identityOf(source: {
  url?: string | URL;
  client?: object;
  transport?: object;
  authContext?: string;
}): PartitionIdentity {
  let connection: string;
  if (source.client) connection = `client:${objectId(source.client)}`;
  else if (source.transport) connection = `transport:${objectId(source.transport)}`;
  else {
    const url = String(source.url);
    connection = `url:${URL.canParse(url) ? new URL(url).href : url}`;
  }
  return { connection, auth: source.authContext };
}

const ids = new WeakMap<object, number>();
let nextId = 0;

/** A stable identity for an object (a client or a transport factory), for `PartitionIdentity`. */
function objectId(value: object): number {
  let id = ids.get(value);
  if (id === undefined) {
    nextId += 1;
    id = nextId;
    ids.set(value, id);
  }
  return id;
}
