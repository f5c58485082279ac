import type {
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from '@modelcontextprotocol/client';
import type { DataTag, QueryFunction, QueryKey } from '@tanstack/query-core';
import { createMcpKeys } from './keys';
import type { ListKind } from './lists';
import { routedQueryFn } from './routing';

export interface ScopeOption {
  /** The `scope` of the McpProvider to read through (several servers, one QueryClient). */
  scope?: string;
}

/**
 * What the options helpers return. Exported and named on purpose: a declaration
 * that returns it (here or in McpCacheSync) is emitted as a reference to this
 * type. Left anonymous, the emitter inlines `DataTag` into the `.d.ts` and with
 * it `dataTagSymbol`, which it cannot import there (TS2304 for consumers, or an
 * `unknown` key with skipLibCheck).
 */
export interface McpQueryOptions<T> {
  queryKey: DataTag<QueryKey, T, Error>;
  queryFn: QueryFunction<T, QueryKey>;
}

/** The options of any MCP key of `scope`: the key, typed, and the routed query function. */
export function mcpQueryOptions<T>(
  queryKey: QueryKey,
  scope: string | undefined,
): McpQueryOptions<T> {
  return {
    queryKey: queryKey as DataTag<QueryKey, T, Error>,
    queryFn: routedQueryFn(scope) as QueryFunction<T, QueryKey>,
  };
}

/**
 * Key and query function of one resource, the same the hooks use: for
 * `queryClient.prefetchQuery`, `ensureQueryData`, route loaders or a plain
 * `useQuery`. Freshness and retry come from the query defaults the provider
 * registers on its QueryClient.
 */
export function resourceQueryOptions(
  uri: string,
  { scope }: ScopeOption = {},
): McpQueryOptions<ReadResourceResult> {
  return mcpQueryOptions<ReadResourceResult>(createMcpKeys(scope).resource(uri), scope);
}

/** The full resource list (every page). */
export function resourceListQueryOptions({ scope }: ScopeOption = {}): McpQueryOptions<Resource[]> {
  return mcpQueryOptions<Resource[]>(createMcpKeys(scope).resources(), scope);
}

/** Every resource template (every page). */
export function resourceTemplatesQueryOptions({
  scope,
}: ScopeOption = {}): McpQueryOptions<ResourceTemplate[]> {
  return mcpQueryOptions<ResourceTemplate[]>(createMcpKeys(scope).resourceTemplates(), scope);
}

/** Every tool (every page). */
export function toolListQueryOptions({ scope }: ScopeOption = {}): McpQueryOptions<Tool[]> {
  return mcpQueryOptions<Tool[]>(createMcpKeys(scope).tools(), scope);
}

/** Every prompt (every page). */
export function promptListQueryOptions({ scope }: ScopeOption = {}): McpQueryOptions<Prompt[]> {
  return mcpQueryOptions<Prompt[]>(createMcpKeys(scope).prompts(), scope);
}

export function listQueryOptions(
  kind: ListKind,
  scope: string | undefined,
): McpQueryOptions<unknown[]> {
  return mcpQueryOptions<unknown[]>(createMcpKeys(scope).list(kind), scope);
}
