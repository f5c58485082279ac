import type { Resource } from '@modelcontextprotocol/client';
import type { UseQueryResult } from '@tanstack/react-query';
import { type UseListOptions, useListQuery } from './useListQuery';

export type UseResourceListOptions<TData = Resource[]> = UseListOptions<Resource, TData>;

/** Every resource the server lists (all pages), refetched on `list_changed`. */
export function useResourceList<TData = Resource[]>(
  options?: UseResourceListOptions<TData>,
): UseQueryResult<TData, Error> {
  return useListQuery('useResourceList', 'resources', options);
}
