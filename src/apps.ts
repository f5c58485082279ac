/**
 * `mcp-react-query/apps`: host MCP Apps (`io.modelcontextprotocol/ui`) with live resources.
 * Kept out of the main entry: only apps that show views ship it, and it needs the optional peer
 * `@modelcontextprotocol/ext-apps`. Serve the sandbox proxy with `mcp-react-query/apps/sandbox`.
 *
 * ```tsx
 * import { McpApp } from 'mcp-react-query/apps';
 * <McpApp tool="get-time" input={args} result={result} sandbox="https://sandbox.example.com/" />
 * ```
 */

export type { McpUiHostContext } from '@modelcontextprotocol/ext-apps/app-bridge';
export { McpAppError, type McpAppErrorCode } from './apps/appErrors';
export type { AppCsp } from './apps/csp';
export type { AppLimits } from './apps/limits';
export { McpApp, type McpAppProps } from './apps/McpApp';
export {
  APP_MIME_TYPE,
  MCP_APPS_EXTENSION,
  viewUriOf,
  visibleToApps,
} from './apps/uiResource';
export type { AppHostHandlers, ToolCallState } from './apps/viewHost';
