import {
  type QueryKey,
  type UseQueryOptions,
  type UseQueryResult,
  useQuery,
} from '@tanstack/react-query';
import type { ListKind } from '../core/lists';
import { listQueryOptions } from '../core/queryOptions';
import { useMcpSync } from './context';

export type UseListOptions<TItem, TData = TItem[]> = Omit<
  UseQueryOptions<TItem[], Error, TData, QueryKey>,
  'queryKey' | 'queryFn'
> & {
  /** Read through the `<McpProvider scope>` of that name instead of the nearest one. */
  scope?: string;
};

/** The shared body of the list hooks; the observer itself holds the list's `list_changed`. */
export function useListQuery<TItem, TData>(
  hook: string,
  kind: ListKind,
  options: UseListOptions<TItem, TData> | undefined,
): UseQueryResult<TData, Error> {
  const { scope, ...queryOptions } = options ?? {};
  const sync = useMcpSync(hook, scope);
  const base = listQueryOptions(kind, sync.keys.scope) as unknown as UseQueryOptions<
    TItem[],
    Error,
    TData,
    QueryKey
  >;
  return useQuery({ ...base, ...queryOptions }, sync.queryClient);
}
