import type { Resource } from '@modelcontextprotocol/client';
import {
  type QueryKey,
  type UseSuspenseQueryOptions,
  type UseSuspenseQueryResult,
  useSuspenseQuery,
} from '@tanstack/react-query';
import { useMcpSync } from './context';

/** `useResourceList` for `<Suspense>`. */
export function useSuspenseResourceList<TData = Resource[]>(
  options?: Omit<
    UseSuspenseQueryOptions<Resource[], Error, TData, QueryKey>,
    'queryKey' | 'queryFn'
  > & {
    scope?: string;
  },
): UseSuspenseQueryResult<TData, Error> {
  const { scope, ...queryOptions } = options ?? {};
  const sync = useMcpSync('useSuspenseResourceList', scope);
  return useSuspenseQuery(
    { ...sync.resourceListQueryOptions(), ...queryOptions },
    sync.queryClient,
  );
}
