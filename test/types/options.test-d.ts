/**
 * Keys, options helpers and the cache: the options helpers tag their keys with the data type,
 * so `getQueryData` and `useQuery` are typed without a cast — in the sources and, the point of
 * issue 12, in the shipped `.d.ts` (where `McpCacheSync`'s copy once degraded to `unknown`).
 */
import type {
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
  Tool,
} from '@modelcontextprotocol/client';
import { type QueryClient, type QueryKey, useQuery } from '@tanstack/react-query';
import { expectTypeOf } from 'expect-type';
import {
  createMcpKeys,
  type McpCacheSync,
  mcpKeys,
  promptListQueryOptions,
  resourceListQueryOptions,
  resourceQueryOptions,
  resourceTemplatesQueryOptions,
  toolListQueryOptions,
} from 'mcp-react-query';

declare const queryClient: QueryClient;
declare const sync: McpCacheSync;

// Plain keys are plain: the documented shape, no data attached.
expectTypeOf(mcpKeys.resource('config://app')).toEqualTypeOf<QueryKey>();
expectTypeOf(mcpKeys.resources()).toEqualTypeOf<QueryKey>();
expectTypeOf(createMcpKeys('b').resource('x')).toEqualTypeOf<QueryKey>();
expectTypeOf(queryClient.getQueryData(mcpKeys.resource('x'))).toEqualTypeOf<unknown>();

// Tagged keys carry the data type into the cache.
const resource = resourceQueryOptions('config://app');
expectTypeOf(queryClient.getQueryData(resource.queryKey)).toEqualTypeOf<
  ReadResourceResult | undefined
>();
expectTypeOf(queryClient.getQueryData(resourceListQueryOptions().queryKey)).toEqualTypeOf<
  Resource[] | undefined
>();
expectTypeOf(queryClient.getQueryData(toolListQueryOptions().queryKey)).toEqualTypeOf<
  Tool[] | undefined
>();
expectTypeOf(queryClient.getQueryData(promptListQueryOptions().queryKey)).toEqualTypeOf<
  Prompt[] | undefined
>();
expectTypeOf(
  queryClient.getQueryData(resourceTemplatesQueryOptions({ scope: 'b' }).queryKey),
).toEqualTypeOf<ResourceTemplateType[] | undefined>();
// @ts-expect-error a tagged key only takes data of its type
queryClient.setQueryData(resource.queryKey, { contents: 'not an array' });

// The same through the engine's own helpers (its declaration once inlined DataTag).
expectTypeOf(queryClient.getQueryData(sync.resourceQueryOptions('x').queryKey)).toEqualTypeOf<
  ReadResourceResult | undefined
>();
expectTypeOf(queryClient.getQueryData(sync.resourceListQueryOptions().queryKey)).toEqualTypeOf<
  Resource[] | undefined
>();
expectTypeOf(sync.resourceQueryOptions('x')).toEqualTypeOf(resourceQueryOptions('x'));

// Loaders and plain useQuery.
expectTypeOf(queryClient.ensureQueryData(resource)).toEqualTypeOf<Promise<ReadResourceResult>>();
expectTypeOf(queryClient.fetchQuery(resourceListQueryOptions())).toEqualTypeOf<
  Promise<Resource[]>
>();
export function PlainQuery() {
  expectTypeOf(useQuery(resource).data).toEqualTypeOf<ReadResourceResult | undefined>();
  const count = useQuery({ ...resourceListQueryOptions(), select: (list) => list.length });
  expectTypeOf(count.data).toEqualTypeOf<number | undefined>();
  return null;
}
