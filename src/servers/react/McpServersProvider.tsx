import { type QueryClient, useQueryClient } from '@tanstack/react-query';
import {
  type ReactNode,
  useContext,
  useEffect,
  useMemo,
  useState,
  useSyncExternalStore,
} from 'react';
import { McpContext, type McpContextValue } from '../../react/context';
import { McpServerManager } from '../manager';
import type { McpServerManagerOptions } from '../options';
import { StandIns } from '../standIns';
import { ServersContext } from './context';

export interface McpServersProviderProps extends Omit<McpServerManagerOptions, 'queryClient'> {
  /** Defaults to the surrounding `QueryClientProvider`'s client. */
  queryClient?: QueryClient;
  children?: ReactNode;
}

/**
 * The servers the user added, for the tree below: `useMcpServers()` lists
 * and edits them, every hook of the main entry reads one of them with
 * `{ scope: server.id }`, and the `useServer…` hooks read all of them.
 * The manager is made once, when this mounts: its options are read then
 * (changing them later does nothing), and no re-render ever reconnects a
 * server. Inside an `<McpProvider>`, that provider stays the nearest one,
 * and the app's providers above keep their scopes: a server the user
 * gave the same id never answers for them. Hidden in an `<Activity>`, every
 * connection ends with its effects; shown again, each server connects anew.
 * Under a `<Suspense>` boundary above it, a suspense hook's read of a stored
 * server connects it before the provider mounts.
 */
export function McpServersProvider({ children, queryClient, ...options }: McpServersProviderProps) {
  const client = useQueryClient(queryClient);
  const [manager] = useState(() => new McpServerManager({ ...options, queryClient: client }));
  const [standIns] = useState(() => new StandIns(client, manager.scopeOf('')));
  useEffect(() => manager.mount(), [manager]);
  useEffect(() => () => standIns.dispose(), [standIns]);
  const syncs = useSyncExternalStore(manager.subscribe, manager.getSyncs, manager.getSyncs);
  const parent = useContext(McpContext);
  const value = useMemo<McpContextValue>(() => {
    const byScope = new Map(parent?.byScope);
    for (const [id, sync] of syncs) if (!byScope.has(id)) byScope.set(id, sync);
    return { nearest: parent?.nearest, byScope, missing: standIns.get };
  }, [syncs, parent, standIns]);
  return (
    <ServersContext.Provider value={manager}>
      <McpContext.Provider value={value}>{children}</McpContext.Provider>
    </ServersContext.Provider>
  );
}
