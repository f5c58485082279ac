import type { Resource } from '@modelcontextprotocol/client';
import {
  type QueryKey,
  type UseQueryOptions,
  type UseQueryResult,
  useQuery,
} from '@tanstack/react-query';
import { useMcpSync } from './context';

export type UseResourceListOptions<TData = Resource[]> = Omit<
  UseQueryOptions<Resource[], Error, TData, QueryKey>,
  'queryKey' | 'queryFn'
>;

/** Every resource the server lists (all pages), refetched on `list_changed`. */
export function useResourceList<TData = Resource[]>(
  options?: UseResourceListOptions<TData>,
): UseQueryResult<TData, Error> {
  const sync = useMcpSync('useResourceList');
  return useQuery({ ...sync.resourceListQueryOptions(), ...options }, sync.queryClient);
}
