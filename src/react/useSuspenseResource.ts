import type { ReadResourceResult } from '@modelcontextprotocol/client';
import {
  type QueryKey,
  type UseSuspenseQueryOptions,
  type UseSuspenseQueryResult,
  useSuspenseQuery,
} from '@tanstack/react-query';
import { useMcpSync } from './context';
import { liveMeta } from './liveMeta';

export type UseSuspenseResourceOptions<TData = ReadResourceResult> = Omit<
  UseSuspenseQueryOptions<ReadResourceResult, Error, TData, QueryKey>,
  'queryKey' | 'queryFn'
> & {
  subscribe?: boolean;
  scope?: string;
};

/**
 * `useResource` for `<Suspense>`: suspends until the first read (which waits
 * for the connection and the subscription) resolves; errors go to the
 * nearest error boundary.
 */
export function useSuspenseResource<TData = ReadResourceResult>(
  uri: string,
  options?: UseSuspenseResourceOptions<TData>,
): UseSuspenseQueryResult<TData, Error> {
  const { subscribe = true, scope, ...queryOptions } = options ?? {};
  const sync = useMcpSync('useSuspenseResource', scope);
  return useSuspenseQuery(
    {
      ...sync.resourceQueryOptions(uri),
      ...queryOptions,
      meta: liveMeta(queryOptions.meta, subscribe),
    },
    sync.queryClient,
  );
}
