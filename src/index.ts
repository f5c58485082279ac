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
  promptListQueryOptions,
  resourceListQueryOptions,
  resourceQueryOptions,
  resourceTemplatesQueryOptions,
  type ScopeOption,
  toolListQueryOptions,
} from './core/queryOptions';
export { expandTemplate, type TemplateValue, type TemplateVariables } from './core/uriTemplate';
export { McpProvider, type McpProviderProps } from './react/McpProvider';
export type { UseListOptions } from './react/useListQuery';
export { useMcp } from './react/useMcp';
export { useMcpDiagnostics } from './react/useMcpDiagnostics';
export { useMcpEvents } from './react/useMcpEvents';
export { usePromptList } from './react/usePromptList';
export { type UseResourceOptions, useResource } from './react/useResource';
export { type UseResourceListOptions, useResourceList } from './react/useResourceList';
export { useResourceTemplates } from './react/useResourceTemplates';
export { type UseSuspenseResourceOptions, useSuspenseResource } from './react/useSuspenseResource';
export { useSuspenseResourceList } from './react/useSuspenseResourceList';
export { useToolList } from './react/useToolList';
