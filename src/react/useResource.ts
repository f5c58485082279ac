import type { ReadResourceResult } from '@modelcontextprotocol/client';
import {
  type QueryKey,
  type UseQueryOptions,
  type UseQueryResult,
  useQuery,
} from '@tanstack/react-query';
import { useEffect } from 'react';
import { isValidUri } from '../core/errors';
import { useMcpSync } from './context';

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
 * One MCP resource, live: `useQuery(['resource', uri])` plus a shared,
 * ref-counted server subscription held while this component is mounted.
 */
export function useResource<TData = ReadResourceResult>(
  uri: string,
  options?: UseResourceOptions<TData>,
): UseQueryResult<TData, Error> {
  const { subscribe = true, scope, ...queryOptions } = options ?? {};
  const sync = useMcpSync('useResource', scope);
  const live = subscribe && queryOptions.enabled !== false && isValidUri(uri);
  // Declared before useQuery so the hold is registered before the first
  // read starts: the read can then wait for the acknowledgement (one read).
  useEffect(() => (live ? sync.acquire(uri) : undefined), [sync, uri, live]);
  return useQuery({ ...sync.resourceQueryOptions(uri), ...queryOptions }, sync.queryClient);
}
