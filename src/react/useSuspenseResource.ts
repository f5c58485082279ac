import type { ReadResourceResult } from '@modelcontextprotocol/client';
import {
  type QueryKey,
  type UseSuspenseQueryOptions,
  type UseSuspenseQueryResult,
  useSuspenseQuery,
} from '@tanstack/react-query';
import { useEffect } from 'react';
import { isValidUri } from '../core/errors';
import { useMcpSync } from './context';

export type UseSuspenseResourceOptions<TData = ReadResourceResult> = Omit<
  UseSuspenseQueryOptions<ReadResourceResult, Error, TData, QueryKey>,
  'queryKey' | 'queryFn'
> & {
  subscribe?: boolean;
  scope?: string;
};

/**
 * `useResource` for `<Suspense>`: suspends until the first read (which waits
 * for the connection) resolves; errors go to the nearest error boundary.
 */
export function useSuspenseResource<TData = ReadResourceResult>(
  uri: string,
  options?: UseSuspenseResourceOptions<TData>,
): UseSuspenseQueryResult<TData, Error> {
  const { subscribe = true, scope, ...queryOptions } = options ?? {};
  const sync = useMcpSync('useSuspenseResource', scope);
  const live = subscribe && isValidUri(uri);
  const query = sync.resourceQueryOptions(uri);
  // Suspended renders run no effects: hold the URI from render, bounded.
  if (live && sync.queryClient.getQueryData(query.queryKey) === undefined) sync.prime(uri);
  useEffect(() => (live ? sync.acquire(uri) : undefined), [sync, uri, live]);
  return useSuspenseQuery({ ...query, ...queryOptions }, sync.queryClient);
}
