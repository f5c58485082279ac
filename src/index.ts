export type { BackoffOptions } from './core/backoff';
export type {
  CheckId,
  DiagnosticCheck,
  McpDiagnostics,
  ResourceDiagnostics,
  UnmatchedNotification,
} from './core/checks';
export type { ProtocolChoice } from './core/clientSource';
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
export { createMcpKeys, type McpKeys, mcpKeys } from './core/keys';
export type { ListKind, NotifiedList } from './core/lists';
export { McpCacheSync } from './core/mcpCacheSync';
export type { McpCacheSyncOptions } from './core/options';
export {
  promptListQueryOptions,
  resourceListQueryOptions,
  resourceQueryOptions,
  resourceTemplatesQueryOptions,
  type ScopeOption,
  toolListQueryOptions,
} from './core/queryOptions';
export type { McpState, McpStatus } from './core/state';
export { expandTemplate, type TemplateValue, type TemplateVariables } from './core/uriTemplate';
export { McpDevtools, type McpDevtoolsProps } from './react/devtools/McpDevtools';
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
