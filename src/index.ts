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
export {
  McpCacheSync,
  type McpCacheSyncOptions,
  type McpState,
  type McpStatus,
} from './core/mcpCacheSync';
export { McpProvider, type McpProviderProps } from './react/McpProvider';
export { useMcp } from './react/useMcp';
export { useMcpDiagnostics } from './react/useMcpDiagnostics';
export { useMcpEvents } from './react/useMcpEvents';
export { type UseResourceOptions, useResource } from './react/useResource';
export { type UseResourceListOptions, useResourceList } from './react/useResourceList';
