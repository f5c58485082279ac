import type { ReadResourceResult } from '@modelcontextprotocol/client';
import {
  type QueryKey,
  type UseQueryOptions,
  type UseQueryResult,
  useQuery,
} from '@tanstack/react-query';
import { useMcpSync } from './context';
import { liveMeta } from './liveMeta';

export type UseResourceOptions<TData = ReadResourceResult> = Omit<
  UseQueryOptions<ReadResourceResult, Error, TData, QueryKey>,
  'queryKey' | 'queryFn'
> & {
  /** Subscribe to change notifications while mounted (default true). */
  subscribe?: boolean;
  /** Read through the `<McpProvider scope>` of that name instead of the nearest one. */
  scope?: string;
};

/**
 * One MCP resource, live: `useQuery(['resource', uri])`. While mounted, its
 * observer holds the URI's shared server subscription (any observer of the
 * key does; this hook only adds `subscribe: false` to opt out).
 */
export function useResource<TData = ReadResourceResult>(
  uri: string,
  options?: UseResourceOptions<TData>,
): UseQueryResult<TData, Error> {
  const { subscribe = true, scope, ...queryOptions } = options ?? {};
  const sync = useMcpSync('useResource', scope);
  return useQuery(
    {
      ...sync.resourceQueryOptions(uri),
      ...queryOptions,
      meta: liveMeta(queryOptions.meta, subscribe),
    },
    sync.queryClient,
  );
}
