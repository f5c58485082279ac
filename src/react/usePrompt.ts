import type { GetPromptResult } from '@modelcontextprotocol/client';
import {
  type QueryKey,
  type UseQueryOptions,
  type UseQueryResult,
  useQuery,
} from '@tanstack/react-query';
import { promptQueryOptions } from '../core/prompts';
import { useMcpSync } from './context';

export type UsePromptOptions<TData = GetPromptResult> = Omit<
  UseQueryOptions<GetPromptResult, Error, TData, QueryKey>,
  'queryKey' | 'queryFn'
> & {
  /** Read through the `<McpProvider scope>` of that name instead of the nearest one. */
  scope?: string;
};

/**
 * One prompt with its arguments (`prompts/get`), live: while mounted it holds the prompts
 * list's `list_changed`, and a change re-reads it. A server that declared no `prompts` gets no
 * request: `error.code` is `NOT_SUPPORTED`.
 */
export function usePrompt<TData = GetPromptResult>(
  name: string,
  args?: Record<string, string>,
  options?: UsePromptOptions<TData>,
): UseQueryResult<TData, Error> {
  const { scope, ...queryOptions } = options ?? {};
  const sync = useMcpSync('usePrompt', scope);
  return useQuery(
    { ...promptQueryOptions(name, args, { scope: sync.keys.scope }), ...queryOptions },
    sync.queryClient,
  );
}
