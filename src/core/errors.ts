/** JSON-RPC codes a server answers for a resource that does not exist. */
const NOT_FOUND_CODES = new Set([-32002, -32602]);

/** An error raised by this package itself (never by the server). */
export class McpQueryError extends Error {
  override readonly name: string = 'McpQueryError';
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** The `uri` given to a hook is not a non-empty string: no request is sent. */
export function invalidUriError(uri: unknown): McpQueryError {
  const shown = typeof uri === 'string' ? JSON.stringify(uri) : typeof uri;
  return new McpQueryError('INVALID_URI', `useResource needs a non-empty URI string, got ${shown}`);
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

/** Errors that retrying the same request cannot fix. */
export function isPermanent(error: unknown): boolean {
  return (
    isNotFound(error) ||
    rpcCode(error) === -32601 ||
    (error instanceof McpQueryError && error.code === 'INVALID_URI')
  );
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
