import { type QueryClient, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useContext, useEffect, useMemo, useReducer, useRef } from 'react';
import type { McpQueryError } from '../core/errors';
import { McpCacheSync, type McpCacheSyncOptions } from '../core/mcpCacheSync';
import { McpContext, type McpContextValue } from './context';

export interface McpProviderProps extends Omit<McpCacheSyncOptions, 'queryClient'> {
  /** Defaults to the surrounding `QueryClientProvider`'s client. */
  queryClient?: QueryClient;
  children?: ReactNode;
}

/**
 * Owns one MCP connection and its change stream for the tree below. A new
 * connection is made when what identifies it changes: the server (`url`,
 * `client`, or `transport`), `protocol`, `scope`, `authContext`,
 * `authProvider` or `serverRequests` — create objects and factories once
 * (module scope, `useState`, `useCallback`). Other options are read when the
 * connection is made; changing them later does not reconnect. Hidden in an
 * `<Activity>`, the provider's connection ends with its effects; shown
 * again, it connects anew.
 *
 * Constructing the McpCacheSync during render is safe: it opens nothing. It
 * takes over its QueryClient scope at once — so the children's first render
 * never shows another server's (or identity's) data — and connects when
 * mounted, or when a render that suspends on its data never mounts it.
 */
export function McpProvider({ children, queryClient, ...options }: McpProviderProps) {
  const client = useQueryClient(queryClient);
  const latest = useRef(options);
  latest.current = options;
  const { url, client: mcpClient, transport, protocol, scope, authContext } = options;
  const { authProvider, serverRequests } = options;
  const [renewed, renew] = useReducer((n: number) => n + 1, 0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the list is the connection's identity on purpose; other options are read through `latest`
  const sync = useMemo(
    () => new McpCacheSync({ ...latest.current, queryClient: client }, 'on-render'),
    [
      client,
      url === undefined ? undefined : String(url),
      mcpClient,
      transport,
      protocol,
      scope,
      authContext,
      authProvider,
      serverRequests,
      renewed,
    ],
  );
  useEffect(() => {
    try {
      return sync.mount();
    } catch (error) {
      // Effects back after their cleanup ended the connection (an <Activity> shown again, a
      // kept-alive route): that McpCacheSync is disposed for good, so a new one connects.
      if ((error as McpQueryError).code !== 'DISPOSED') throw error;
      renew();
    }
  }, [sync]);
  const parent = useContext(McpContext);
  const value = useMemo<McpContextValue>(
    () => ({
      nearest: sync,
      byScope: new Map(parent?.byScope).set(scope, sync),
      missing: parent?.missing,
    }),
    [sync, parent, scope],
  );
  return <McpContext.Provider value={value}>{children}</McpContext.Provider>;
}
