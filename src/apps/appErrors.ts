/**
 * Why a view is not shown, for code that branches on it:
 * - `NO_UI`: the tool declares no `ui://` view (or an invalid one).
 * - `UNKNOWN_TOOL`: the tool is not in this server's tool list (another server's tool, a typo).
 * - `NOT_FOUND`: the server has no such `ui://` resource.
 * - `NOT_AN_APP`: the resource is not `text/html;profile=mcp-app` HTML.
 * - `READ_FAILED`: the resource could not be read.
 * - `NO_SANDBOX`: the sandbox URL is missing, invalid, or on the host's own origin.
 * - `INIT_TIMEOUT`: the view (or the sandbox proxy) did not initialise in time.
 * - `FLOOD`: the view sent more messages than its limits allow, and was closed.
 * - `CLOSED`: the view's connection ended.
 */
export type McpAppErrorCode =
  | 'NO_UI'
  | 'UNKNOWN_TOOL'
  | 'NOT_FOUND'
  | 'NOT_AN_APP'
  | 'READ_FAILED'
  | 'NO_SANDBOX'
  | 'INIT_TIMEOUT'
  | 'FLOOD'
  | 'CLOSED';

/** Why `<McpApp>` shows an error instead of a view. */
export class McpAppError extends Error {
  override readonly name: string = 'McpAppError';
  readonly code: McpAppErrorCode;
  constructor(code: McpAppErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
