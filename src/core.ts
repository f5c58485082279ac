/**
 * `mcp-react-query/core`: everything that needs no React, for code that must not pull in a
 * client bundle — route loaders, React Server Components prefetching, tests, other frameworks.
 * Built without the `'use client'` banner of the main entry on purpose, so server code can
 * import keys and options helpers from here.
 */
export type { BackoffOptions } from './core/backoff';
export type {
  CheckId,
  DiagnosticCheck,
  McpDiagnostics,
  ResourceDiagnostics,
  UnmatchedNotification,
} from './core/checks';
export type { ProtocolChoice } from './core/clientSource';
export type { Clock } from './core/clock';
export {
  type CompletionRequest,
  completionQueryOptions,
} from './core/completions';
export { describeEvent, type McpEventTone } from './core/describeEvent';
export { isNotFound, McpQueryError, type McpQueryErrorCode } from './core/errors';
export type {
  CloseReason,
  ConnectionPhase,
  ConnectionSnapshot,
  Era,
  McpEvent,
  McpEventOf,
  StreamState,
  StreamStatus,
} from './core/events';
export { type KeepAlive, keepAlive } from './core/keepAlive';
export { createMcpKeys, type McpKeys, type McpRequestKey, mcpKeys } from './core/keys';
export type { ListKind, NotifiedList } from './core/lists';
export { McpCacheSync } from './core/mcpCacheSync';
export { mcpDiagnostics } from './core/mcpDiagnostics';
export type { McpCacheSyncOptions } from './core/options';
export {
  createShouldPersistQuery,
  type PersistOptions,
  shouldPersistQuery,
} from './core/persist';
export { promptQueryOptions } from './core/prompts';
export {
  type McpQueryOptions,
  promptListQueryOptions,
  resourceListQueryOptions,
  resourceQueryOptions,
  resourceTemplatesQueryOptions,
  type ScopeOption,
  toolListQueryOptions,
} from './core/queryOptions';
export {
  DEFAULT_LOG_MAX,
  type ServerLog,
  type ServerLogEntry,
  type ServerLogSnapshot,
  serverLog,
} from './core/serverLog';
export {
  createServerRequests,
  type ElicitationOptions,
  type PendingElicitation,
  type ServerRequestOptions,
  ServerRequests,
} from './core/serverRequests';
export type { AuthAware, AuthControl } from './core/signIn';
export type { McpState, McpStatus } from './core/state';
export {
  cancelTask,
  dismissTask,
  type StoredTask,
  startTask,
  TaskBook,
  type TaskData,
  type TaskStorage,
  taskBook,
  taskListQueryOptions,
  taskQueryOptions,
} from './core/tasks';
export { type CallToolVariables, callTool, callToolMutationOptions } from './core/tools';
export type { TabSharingOption } from './core/upstream';
export { expandTemplate, type TemplateValue, type TemplateVariables } from './core/uriTemplate';
