/** JSON-RPC codes a server answers for a resource that does not exist. */
const NOT_FOUND_CODES = new Set([-32002, -32602]);

/**
 * What went wrong, for code that branches on it:
 * - `INVALID_OPTIONS`: the options given to McpCacheSync / McpProvider do not make sense.
 * - `INVALID_URI`: a resource URI that is not a non-empty string; no request was sent.
 * - `EMPTY_CONTENTS` / `WRONG_URI`: a read answered with nothing, or with another resource's
 *   content; the previous content is kept.
 * - `NOT_CONNECTED`: the connection is in `error` or `closed`, or did not come up in time.
 * - `UNAUTHORIZED`: the server wants credentials; nothing is retried until the user signs in.
 * - `CONNECTION_LOST`: the connection (or, 2025, its notification stream) ended.
 * - `STREAM_LOST`: the change stream ended and is being re-established.
 * - `NOT_STARTED`: nothing started the connection (rendered on the server, never mounted).
 * - `DISPOSED`: the McpCacheSync that started this was disposed.
 * - `SUPERSEDED`: another McpCacheSync took over this QueryClient and scope.
 * - `NOT_ATTACHED`: no McpCacheSync serves this QueryClient and scope.
 * - `OTHER_TAB`: with `shareAcrossTabs`, another tab holds the connection and its SDK client
 *   (`whenReady()`); tool calls and the hooks go through that tab.
 * - `UNKNOWN_KEY`: a query key that is not an MCP key.
 * - `INVALID_TEMPLATE`: `expandTemplate` was given a template it cannot expand.
 * - `UNKNOWN_SERVER`: a server id, or a qualified tool name, that names no server of the
 *   `mcp-react-query/servers` manager.
 * - `NOT_SUPPORTED`: the server did not declare what this needs (prompts, completions, logging,
 *   tasks); no request was sent.
 * - `INVALID_ARGUMENTS`: a prompt, completion or task asked with arguments of the wrong shape;
 *   no request was sent.
 * - `TIMEOUT`: a read or list waited its turn (64 requests to the server in flight) for
 *   `requestTimeoutMs` and was not sent; TanStack's retry applies.
 * - `CANCELLED`: the call was cancelled (`useCallTool().cancel()`, or its signal): an outcome,
 *   not a failure of the server.
 */
export type McpQueryErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_URI'
  | 'EMPTY_CONTENTS'
  | 'WRONG_URI'
  | 'NOT_CONNECTED'
  | 'UNAUTHORIZED'
  | 'CONNECTION_LOST'
  | 'STREAM_LOST'
  | 'NOT_STARTED'
  | 'DISPOSED'
  | 'SUPERSEDED'
  | 'NOT_ATTACHED'
  | 'OTHER_TAB'
  | 'UNKNOWN_KEY'
  | 'INVALID_TEMPLATE'
  | 'UNKNOWN_SERVER'
  | 'NOT_SUPPORTED'
  | 'INVALID_ARGUMENTS'
  | 'TIMEOUT'
  | 'CANCELLED';

/** An error raised by this package itself (never by the server). */
export class McpQueryError extends Error {
  override readonly name: string = 'McpQueryError';
  readonly code: McpQueryErrorCode;
  constructor(code: McpQueryErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A resource URI that is not a non-empty string: no request is sent. */
export function invalidUriError(uri: unknown): McpQueryError {
  const shown = typeof uri === 'string' ? JSON.stringify(uri) : typeof uri;
  return new McpQueryError(
    'INVALID_URI',
    `a resource URI must be a non-empty string, got ${shown}`,
  );
}

export function isValidUri(uri: unknown): uri is string {
  return typeof uri === 'string' && uri.length > 0;
}

/** The numeric JSON-RPC code of an error from the SDK, if it carries one. */
export function rpcCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * A read of a resource that does not exist (2026 servers answer -32602,
 * 2025 servers -32002). Retrying cannot help, so it is never retried.
 */
export function isNotFound(error: unknown): boolean {
  const code = rpcCode(error);
  return code !== undefined && NOT_FOUND_CODES.has(code);
}

const PERMANENT_CODES = new Set([
  'INVALID_URI',
  'EMPTY_CONTENTS',
  'WRONG_URI',
  'UNAUTHORIZED',
  'NOT_SUPPORTED',
  'INVALID_ARGUMENTS',
]);

/**
 * Errors that retrying the same request cannot fix: not found, a method the
 * server lacks, an answer that was not content, a list whose pages never end
 * (the SDK gave up after 64; each retry would ask 64 more), and a refusal for
 * want of credentials (only signing in helps; each retry would start another one).
 */
export function isPermanent(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return (
    isNotFound(error) ||
    rpcCode(error) === -32601 ||
    (error as { code?: unknown } | null)?.code === 'LIST_PAGINATION_EXCEEDED' ||
    name === 'UnauthorizedError' ||
    name === 'InsufficientScopeError' ||
    (error instanceof McpQueryError && PERMANENT_CODES.has(error.code))
  );
}

/** Why a call ended, as the `CANCELLED` outcome (`reason`: the signal's). */
export function cancelled(reason: unknown): McpQueryError {
  return reason instanceof McpQueryError && reason.code === 'CANCELLED'
    ? reason
    : new McpQueryError('CANCELLED', 'the call was cancelled', { cause: reason });
}

/**
 * A call or task request made as the identity that signed out, not sent yet: it is never run as
 * the next one (another user, or nobody).
 */
export function identityChanged(): McpQueryError {
  return new McpQueryError(
    'NOT_CONNECTED',
    'the signed-in identity changed before this call went out: it was not run',
  );
}

/** The longest server-controlled text an event or error state carries. */
export const MAX_MESSAGE = 1000;

/** `text`, cut to `max` characters (a hostile server's megabyte message is not kept whole). */
export function clip(text: string, max = MAX_MESSAGE): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** An error's message, as events and states show it: bounded. */
export function errorMessage(error: unknown): string {
  return clip(error instanceof Error ? error.message : String(error));
}
