import type { ResourceTemplateType as ResourceTemplate } from '@modelcontextprotocol/client';
import type { UseQueryResult } from '@tanstack/react-query';
import { type UseListOptions, useListQuery } from './useListQuery';

/** Every resource template (all pages), refetched on resources `list_changed`. */
export function useResourceTemplates<TData = ResourceTemplate[]>(
  options?: UseListOptions<ResourceTemplate, TData>,
): UseQueryResult<TData, Error> {
  return useListQuery('useResourceTemplates', 'resourceTemplates', options);
}
