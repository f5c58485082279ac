import type { QueryKey } from '@tanstack/query-core';
import { LIST_KINDS, type ListKind } from './lists';

/** The keys that ask the server something other than a resource or a list. */
export type RequestKind = 'prompt' | 'completion' | 'task' | 'tasks';

/** How many parts follow the segment of each request key. */
export const REQUEST_PARTS: Readonly<Record<RequestKind, number>> = {
  prompt: 2,
  completion: 3,
  task: 1,
  tasks: 0,
};

/**
 * What a prompt, completion or task key asks of the server: its kind and the parts after it,
 * as the key holds them (checked where they are sent: a key is plain data anyone can build).
 */
export interface McpRequestKey {
  kind: RequestKind;
  parts: readonly unknown[];
}

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
  /** `prompts/get` of one prompt with its arguments (`{}` when it has none). */
  prompt(name: string, args?: Record<string, string>): QueryKey;
  /** `completion/complete` of one argument, with what was typed and the other arguments. */
  completion(ref: unknown, argument: { name: string; value: string }, context?: object): QueryKey;
  /** One task (2025-11-25): its status, and its result once it has one. */
  task(taskId: string): QueryKey;
  /** The server's tasks (`tasks/list`). */
  tasks(): QueryKey;
  /** The mutation key of tool calls. */
  callTool(): QueryKey;
  /** The URI of a resource key built by these keys, else undefined. */
  uriOf(key: QueryKey): string | undefined;
  /** The list a key of these keys names, else undefined. */
  listOf(key: QueryKey): ListKind | undefined;
  /** Whether a key is this provider's resource list key. */
  isList(key: QueryKey): boolean;
  /** The prompt, completion or task a key of these keys asks for, else undefined. */
  requestOf(key: QueryKey): McpRequestKey | undefined;
  /** Whether a key is any of this provider's keys (a resource, a list, a request). */
  owns(key: QueryKey): boolean;
}

/**
 * The keys of `scope`. They are pure functions of it, built once per scope
 * and shared: the hooks ask for them on every render.
 */
export function createMcpKeys(scope?: string): McpKeys {
  return perScope(built, scope, buildKeys);
}

const built = new Map<string | undefined, McpKeys>();

/**
 * What `make` builds for `scope`, kept while few scopes are in use (a server
 * manager's servers come and go: past 256, the memo starts again).
 */
export function perScope<T>(
  memo: Map<string | undefined, T>,
  scope: string | undefined,
  make: (scope: string | undefined) => T,
): T {
  let value = memo.get(scope);
  if (value === undefined) {
    if (memo.size >= 256) memo.clear();
    value = make(scope);
    memo.set(scope, value);
  }
  return value;
}

function buildKeys(scope: string | undefined): McpKeys {
  const prefix: readonly unknown[] = scope === undefined ? [] : ['mcp', scope];
  const n = prefix.length;
  const hasPrefix = (key: QueryKey) => prefix.every((part, i) => key[i] === part);
  // A list's key segment is its kind.
  const list = (kind: ListKind): QueryKey => [...prefix, kind];
  const listOf = (key: QueryKey): ListKind | undefined => {
    const kind = key[n] as ListKind;
    return key.length === n + 1 && hasPrefix(key) && LIST_KINDS.includes(kind) ? kind : undefined;
  };
  const requestOf = (key: QueryKey): McpRequestKey | undefined => {
    const kind = key[n] as RequestKind;
    if (!Object.hasOwn(REQUEST_PARTS, kind) || key.length !== n + 1 + REQUEST_PARTS[kind]) {
      return undefined;
    }
    return hasPrefix(key) ? { kind, parts: key.slice(n + 1) } : undefined;
  };
  const uriOf = (key: QueryKey): string | undefined => {
    if (key.length !== n + 2 || !hasPrefix(key) || key[n] !== 'resource') return undefined;
    const uri = key[n + 1];
    return typeof uri === 'string' ? uri : undefined;
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
    prompt: (name, args) => [...prefix, 'prompt', name, args ?? {}],
    completion: (ref, argument, context) => [...prefix, 'completion', ref, argument, context ?? {}],
    task: (taskId) => [...prefix, 'task', taskId],
    tasks: () => [...prefix, 'tasks'],
    callTool: () => [...prefix, 'callTool'],
    uriOf,
    listOf,
    isList: (key) => listOf(key) === 'resources',
    requestOf,
    owns: (key) =>
      uriOf(key) !== undefined || listOf(key) !== undefined || requestOf(key) !== undefined,
  };
}

/** Keys of an unscoped provider: `mcpKeys.resource(uri)` is `['resource', uri]`. */
export const mcpKeys: McpKeys = /* @__PURE__ */ createMcpKeys();
