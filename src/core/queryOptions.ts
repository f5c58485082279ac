import type {
  CompleteResult,
  GetPromptResult,
  Prompt,
  PromptReference,
  ReadResourceResult,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  ResourceTemplateReference,
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

function options<T>(queryKey: QueryKey, scope: string | undefined): McpQueryOptions<T> {
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
  return options<ReadResourceResult>(createMcpKeys(scope).resource(uri), scope);
}

/** The full resource list (every page). */
export function resourceListQueryOptions({ scope }: ScopeOption = {}): McpQueryOptions<Resource[]> {
  return options<Resource[]>(createMcpKeys(scope).resources(), scope);
}

/** Every resource template (every page). */
export function resourceTemplatesQueryOptions({
  scope,
}: ScopeOption = {}): McpQueryOptions<ResourceTemplate[]> {
  return options<ResourceTemplate[]>(createMcpKeys(scope).resourceTemplates(), scope);
}

/** Every tool (every page). */
export function toolListQueryOptions({ scope }: ScopeOption = {}): McpQueryOptions<Tool[]> {
  return options<Tool[]>(createMcpKeys(scope).tools(), scope);
}

/** Every prompt (every page). */
export function promptListQueryOptions({ scope }: ScopeOption = {}): McpQueryOptions<Prompt[]> {
  return options<Prompt[]>(createMcpKeys(scope).prompts(), scope);
}

/**
 * One prompt with its arguments (`prompts/get`), the same the `usePrompt` hook uses. Kept fresh
 * by `prompts/list_changed` while something shows it; a server that declared no `prompts`
 * gets no request (an `McpQueryError` `NOT_SUPPORTED`).
 */
export function promptQueryOptions(
  name: string,
  args?: Record<string, string>,
  { scope }: ScopeOption = {},
): McpQueryOptions<GetPromptResult> {
  return options<GetPromptResult>(createMcpKeys(scope).prompt(name, args), scope);
}

/** What to complete: a prompt's argument or a resource template's variable, as typed so far. */
export interface CompletionRequest {
  ref: PromptReference | ResourceTemplateReference;
  /** The argument (or template variable) being typed. */
  argument: string;
  /** What the user typed so far. */
  value: string;
  /** The other arguments already chosen (a server may narrow by them). */
  context?: Record<string, string>;
}

/**
 * The server's suggestions for one argument as typed so far (`completion/complete`), cached a
 * short while per (ref, argument, value, context). A server that declared no `completions`
 * gets no request (`NOT_SUPPORTED`).
 */
export function completionQueryOptions(
  { ref, argument, value, context }: CompletionRequest,
  { scope }: ScopeOption = {},
): McpQueryOptions<CompleteResult> {
  const key = createMcpKeys(scope).completion(
    ref,
    { name: argument, value },
    context && { arguments: context },
  );
  return options<CompleteResult>(key, scope);
}

export function listQueryOptions(
  kind: ListKind,
  scope: string | undefined,
): McpQueryOptions<unknown[]> {
  return options<unknown[]>(createMcpKeys(scope).list(kind), scope);
}
