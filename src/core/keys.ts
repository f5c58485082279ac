import type { QueryKey } from '@tanstack/query-core';

/**
 * The one place query keys are built and recognised. Unscoped keys are the
 * documented `['resource', uri]` / `['resources']`; a scoped provider (several
 * servers sharing one QueryClient) prefixes every key with `['mcp', scope]`, so
 * two servers exposing the same URI never share or cross-invalidate an entry.
 */
export interface McpKeys {
  readonly scope: string | undefined;
  resource(uri: string): QueryKey;
  resources(): QueryKey;
  /** The URI of a resource key built by these keys, else undefined. */
  uriOf(key: QueryKey): string | undefined;
  /** Whether a key is this provider's resource list key. */
  isList(key: QueryKey): boolean;
}

export function createMcpKeys(scope?: string): McpKeys {
  const prefix: readonly unknown[] = scope === undefined ? [] : ['mcp', scope];
  const hasPrefix = (key: QueryKey) => prefix.every((part, i) => key[i] === part);
  return {
    scope,
    resource: (uri) => [...prefix, 'resource', uri],
    resources: () => [...prefix, 'resources'],
    uriOf(key) {
      if (key.length !== prefix.length + 2 || !hasPrefix(key)) return undefined;
      const uri = key[prefix.length + 1];
      return key[prefix.length] === 'resource' && typeof uri === 'string' ? uri : undefined;
    },
    isList: (key) =>
      key.length === prefix.length + 1 && hasPrefix(key) && key[prefix.length] === 'resources',
  };
}

/** Keys of an unscoped provider: `mcpKeys.resource(uri)` is `['resource', uri]`. */
export const mcpKeys: McpKeys = createMcpKeys();
