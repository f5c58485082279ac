import { type QueryObserverResult, useQueries } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { rpcCode } from '../../core/errors';
import type { ListKind } from '../../core/lists';
import { listQueryOptions } from '../../core/queryOptions';
import { useServerManager } from './context';

/** How one server's list is doing: the lists of the others never wait for it. */
export interface ServerListState {
  readonly serverId: string;
  readonly serverName: string;
  readonly status: 'pending' | 'success' | 'error';
  /** Why the latest attempt failed (also while TanStack retries). */
  readonly error: Error | undefined;
  readonly isFetching: boolean;
}

export interface ServerList<T> extends ServerListState {
  /** What the server listed; empty while pending, on error, or when it has no such list. */
  readonly items: readonly T[];
}

/** -32601: the server has no such list (no prompts, say), which is an empty one, not a failure. */
const unsupported = (result: QueryObserverResult<unknown[]>) =>
  rpcCode(result.error ?? result.failureReason) === -32601;

/**
 * One list of every server, each its own query (its own connection, its
 * own `requestTimeoutMs`, its own retries): what has arrived shows at once,
 * with each server's state beside it.
 */
export function useServerLists<T>(hook: string, kind: ListKind): readonly ServerList<T>[] {
  const manager = useServerManager(hook);
  const servers = useSyncExternalStore(manager.subscribe, manager.getServers, manager.getServers);
  return useQueries(
    {
      queries: servers.map((server) => listQueryOptions(kind, server.scope)),
      combine: (results) =>
        results.map((result, i): ServerList<T> => {
          const server = servers[i] as (typeof servers)[number];
          const none = unsupported(result);
          return {
            serverId: server.id,
            serverName: server.name,
            status: none ? 'success' : result.status,
            error: none ? undefined : (result.error ?? result.failureReason ?? undefined),
            isFetching: result.isFetching,
            items: none ? [] : ((result.data as T[] | undefined) ?? []),
          };
        }),
    },
    manager.queryClient,
  );
}
