/**
 * `mcp-react-query/servers`: the servers a user adds at run time, each its own connection and
 * scope, listed, signed in and searched together. Kept out of the main entry so apps with one
 * server pay nothing for it. `McpServerManager` is the same without React (its `mount()`,
 * `add()`, `getServers()`, `qualified()` and `callTool()`).
 */
export type {
  McpServerConfig,
  McpServerInput,
  ServerAuth,
  ServerConfigProblem,
} from './servers/config';
export type { ServerElicitation } from './servers/elicitations';
export {
  type AddServerResult,
  type McpServer,
  McpServerManager,
  type McpServerPatch,
} from './servers/manager';
export type { McpServerManagerOptions, ServerConnectionOptions } from './servers/options';
export type { Qualified } from './servers/qualify';
export {
  McpServersProvider,
  type McpServersProviderProps,
} from './servers/react/McpServersProvider';
export {
  type UseCallServerToolOptions,
  type UseCallServerToolResult,
  useCallServerTool,
} from './servers/react/useCallServerTool';
export { type UseMcpServersResult, useMcpServers } from './servers/react/useMcpServers';
export { useServerElicitations } from './servers/react/useServerElicitations';
export type { ServerList, ServerListState } from './servers/react/useServerLists';
export {
  type ServerPromptsResult,
  type ServerResourcesResult,
  type ServerToolsResult,
  useServerPrompts,
  useServerResources,
  useServerTools,
} from './servers/react/useServerTools';
export { createServerSignIn, ServerSignIn, type ServerSignInOptions } from './servers/signIn';
