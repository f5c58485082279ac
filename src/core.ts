/**
 * `mcp-react-query/core`: everything that needs no React, for code that must not pull in a
 * client bundle — route loaders, React Server Components prefetching, tests, other frameworks.
 * Built without the `'use client'` banner of the main entry on purpose, so server code can
 * import keys and options helpers from here.
 */
export type { BackoffOptions } from './core/backoff';
export type { CloseReason, StreamState, StreamStatus } from './core/channel';
export type { Era, ProtocolChoice } from './core/connection';
export type {
  CheckId,
  DiagnosticCheck,
  McpDiagnostics,
  ResourceDiagnostics,
  UnmatchedNotification,
} from './core/diagnostics';
export { isNotFound, McpQueryError } from './core/errors';
export type { McpEvent } from './core/events';
export { createMcpKeys, type McpKeys, mcpKeys } from './core/keys';
export type { ListKind, NotifiedList } from './core/lists';
export {
  McpCacheSync,
  type McpCacheSyncOptions,
  type McpState,
  type McpStatus,
} from './core/mcpCacheSync';
export {
  type McpQueryOptions,
  promptListQueryOptions,
  resourceListQueryOptions,
  resourceQueryOptions,
  resourceTemplatesQueryOptions,
  type ScopeOption,
  toolListQueryOptions,
} from './core/queryOptions';
export { expandTemplate, type TemplateValue, type TemplateVariables } from './core/uriTemplate';
