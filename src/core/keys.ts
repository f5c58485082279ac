import type { QueryKey } from '@tanstack/query-core';
import type { ListKind } from './lists';

/**
 * The one place query keys are built and recognised. Unscoped keys are the
 * documented `['resource', uri]` / `['resources']`; a scoped provider (several
 * servers sharing one QueryClient) prefixes every key with `['mcp', scope]`, so
 * two servers exposing the same URI never share or cross-invalidate an entry.
 */
export interface McpKeys {
  readonly scope: string | undefined;
  resource(uri: string): QueryKey;
  /** The prefix of every resource key (for filters and query defaults). */
  resourcePrefix(): QueryKey;
  resources(): QueryKey;
  resourceTemplates(): QueryKey;
  tools(): QueryKey;
  prompts(): QueryKey;
  list(kind: ListKind): QueryKey;
  /** The mutation key of tool calls. */
  callTool(): QueryKey;
  /** The URI of a resource key built by these keys, else undefined. */
  uriOf(key: QueryKey): string | undefined;
  /** The list a key of these keys names, else undefined. */
  listOf(key: QueryKey): ListKind | undefined;
  /** Whether a key is this provider's resource list key. */
  isList(key: QueryKey): boolean;
}

const LIST_SEGMENTS: Record<ListKind, string> = {
  resources: 'resources',
  resourceTemplates: 'resourceTemplates',
  tools: 'tools',
  prompts: 'prompts',
};

export function createMcpKeys(scope?: string): McpKeys {
  const prefix: readonly unknown[] = scope === undefined ? [] : ['mcp', scope];
  const n = prefix.length;
  const hasPrefix = (key: QueryKey) => prefix.every((part, i) => key[i] === part);
  const list = (kind: ListKind): QueryKey => [...prefix, LIST_SEGMENTS[kind]];
  const listOf = (key: QueryKey): ListKind | undefined => {
    if (key.length !== n + 1 || !hasPrefix(key)) return undefined;
    return (Object.keys(LIST_SEGMENTS) as ListKind[]).find(
      (kind) => LIST_SEGMENTS[kind] === key[n],
    );
  };
  return {
    scope,
    resource: (uri) => [...prefix, 'resource', uri],
    resourcePrefix: () => [...prefix, 'resource'],
    resources: () => list('resources'),
    resourceTemplates: () => list('resourceTemplates'),
    tools: () => list('tools'),
    prompts: () => list('prompts'),
    list,
    callTool: () => [...prefix, 'callTool'],
    uriOf(key) {
      if (key.length !== n + 2 || !hasPrefix(key) || key[n] !== 'resource') return undefined;
      const uri = key[n + 1];
      return typeof uri === 'string' ? uri : undefined;
    },
    listOf,
    isList: (key) => listOf(key) === 'resources',
  };
}

/** Keys of an unscoped provider: `mcpKeys.resource(uri)` is `['resource', uri]`. */
export const mcpKeys: McpKeys = createMcpKeys();
