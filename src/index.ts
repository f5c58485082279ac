export * from './core';
export { McpProvider, type McpProviderProps } from './react/McpProvider';
export { type UseCallToolOptions, type UseCallToolResult, useCallTool } from './react/useCallTool';
export {
  type UseCompletionOptions,
  type UseCompletionResult,
  useCompletion,
} from './react/useCompletion';
export { useElicitations } from './react/useElicitations';
export type { UseListOptions } from './react/useListQuery';
export { useMcp } from './react/useMcp';
export { useMcpDiagnostics } from './react/useMcpDiagnostics';
export { useMcpEvents } from './react/useMcpEvents';
export { type UsePromptOptions, usePrompt } from './react/usePrompt';
export { usePromptList } from './react/usePromptList';
export { type UseResourceOptions, useResource } from './react/useResource';
export { type UseResourceListOptions, useResourceList } from './react/useResourceList';
export { useResourceTemplates } from './react/useResourceTemplates';
export {
  type UseServerLogOptions,
  type UseServerLogResult,
  useServerLog,
} from './react/useServerLog';
export { type UseSuspenseResourceOptions, useSuspenseResource } from './react/useSuspenseResource';
export { useSuspenseResourceList } from './react/useSuspenseResourceList';
export {
  type TaskView,
  type UseTasksResult,
  useTaskList,
  useTasks,
} from './react/useTasks';
export { useToolList } from './react/useToolList';
