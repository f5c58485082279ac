import type { Prompt } from '@modelcontextprotocol/client';
import type { UseQueryResult } from '@tanstack/react-query';
import { type UseListOptions, useListQuery } from './useListQuery';

/** Every prompt (all pages), kept live by `prompts/list_changed` while mounted. */
export function usePromptList<TData = Prompt[]>(
  options?: UseListOptions<Prompt, TData>,
): UseQueryResult<TData, Error> {
  return useListQuery('usePromptList', 'prompts', options);
}
