import type { Tool } from '@modelcontextprotocol/client';
import type { UseQueryResult } from '@tanstack/react-query';
import { type UseListOptions, useListQuery } from './useListQuery';

/** Every tool (all pages), kept live by `tools/list_changed` while mounted. */
export function useToolList<TData = Tool[]>(
  options?: UseListOptions<Tool, TData>,
): UseQueryResult<TData, Error> {
  return useListQuery('useToolList', 'tools', options);
}
