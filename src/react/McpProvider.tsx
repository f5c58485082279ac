import { type QueryClient, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useContext, useEffect, useMemo, useRef } from 'react';
import { McpCacheSync, type McpCacheSyncOptions } from '../core/mcpCacheSync';
import { McpContext, type McpContextValue } from './context';

export interface McpProviderProps extends Omit<McpCacheSyncOptions, 'queryClient'> {
  /** Defaults to the surrounding `QueryClientProvider`'s client. */
  queryClient?: QueryClient;
  children?: ReactNode;
}

/**
 * Owns one MCP connection and its change stream for the tree below. A new
 * connection is made only when what identifies it changes (url, client,
 * protocol, scope, authContext); a `transport` factory or options passed
 * inline are read through refs, so re-renders never reconnect.
 */
export function McpProvider({ children, queryClient, ...options }: McpProviderProps) {
  const client = useQueryClient(queryClient);
  const latest = useRef(options);
  latest.current = options;
  const { url, protocol, scope, authContext } = options;
  const hasTransport = options.transport !== undefined;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the list is the connection's identity on purpose; other options are read through `latest`
  const sync = useMemo(
    () =>
      new McpCacheSync({
        ...latest.current,
        queryClient: client,
        transport: hasTransport ? () => (latest.current.transport as () => never)() : undefined,
      }),
    [client, String(url ?? ''), options.client, hasTransport, protocol, scope, authContext],
  );
  // While rendering, before the children query: their keys must route to this
  // connection, and they must never see another auth context's private data.
  sync.attach();
  useEffect(() => sync.mount(), [sync]);
  const parent = useContext(McpContext);
  const value = useMemo<McpContextValue>(
    () => ({ nearest: sync, byScope: new Map(parent?.byScope).set(scope, sync) }),
    [sync, parent, scope],
  );
  return <McpContext.Provider value={value}>{children}</McpContext.Provider>;
}
