import { errorMessage, McpQueryError } from './errors';
import type { ConnectionSnapshot } from './events';

/**
 * What a failed connection attempt means for the next one:
 * - `unauthorized`: the server wants credentials (401, 403): nothing changes
 *   until the user signs in;
 * - `permanent`: this is not an MCP endpoint we can talk to (a wrong path, a
 *   method the server refuses, an HTML error page, a body that is not JSON,
 *   an invalid URL): trying again a few times more changes nothing;
 * - `transient`: the server is unreachable, overloaded, restarting behind a
 *   gateway (502–504) or timed out: it may well answer later.
 */
export type FailureKind = 'unauthorized' | 'permanent' | 'transient';

export interface Failure {
  kind: FailureKind;
  /** An error whose message names the URL and, when there was one, the HTTP status. */
  error: Error;
}

const PERMANENT_STATUS = [400, 404, 405, 406, 410, 415, 501];
/** Codes and error names (SDK, OAuth, JSON) that retrying the same endpoint cannot fix. */
const PERMANENT =
  /^(SyntaxError|CLIENT_HTTP_UNEXPECTED_CONTENT|ERR_INVALID_URL|UnsupportedProtocolVersionError|IssuerMismatchError|AuthorizationServerMismatchError|InsecureTokenEndpointError|RegistrationRejectedError|PkceNotSupportedError)$/;
const UNAUTHORIZED =
  /^(UnauthorizedError|InsufficientScopeError|CLIENT_HTTP_(AUTHENTICATION|FORBIDDEN))$/;

type Nested = {
  status?: unknown;
  code?: unknown;
  name?: unknown;
  data?: { status?: unknown; text?: unknown };
  cause?: unknown;
};

/** Classify a failed connection attempt or request, with a message a developer can act on. */
export function classifyFailure(error: unknown, url: string): Failure {
  if (error instanceof McpQueryError) {
    const permanent = error.code === 'INVALID_OPTIONS' || error.code === 'UNKNOWN_SERVER';
    return { kind: permanent ? 'permanent' : 'transient', error };
  }
  // The SDK nests the concrete reason (`cause`) under "negotiation failed"
  // wrappers: the first HTTP status and body found, and every code and name.
  let status: number | undefined;
  let body: string | undefined;
  const names: string[] = [];
  for (let at = error as Nested | undefined, depth = 0; at && depth < 8; depth += 1) {
    const found = at.status ?? at.data?.status;
    if (status === undefined && typeof found === 'number') status = found;
    if (body === undefined && typeof at.data?.text === 'string') body = at.data.text;
    names.push(String(at.code), String(at.name));
    at = at.cause as Nested | undefined;
  }
  const kind: FailureKind =
    status === 401 || status === 403 || names.some((name) => UNAUTHORIZED.test(name))
      ? 'unauthorized'
      : status !== undefined
        ? PERMANENT_STATUS.includes(status) ||
          // A 500 whose body is not JSON-RPC is the error page of something
          // that is not an MCP server (a gateway's 502-504 is a restart).
          (status === 500 && !body?.includes('"jsonrpc"'))
          ? 'permanent'
          : 'transient'
        : names.some((name) => PERMANENT.test(name)) ||
            // The SDK's resource-indicator check throws a plain Error: the
            // server names another resource than the one asked for.
            /^Protected resource .* does not match/.test(String((error as Error)?.message))
          ? 'permanent'
          : 'transient';
  // An HTML error page says little: keep the text of a short body, never markup.
  const text = body
    ?.replace(/<[^>]{0,2000}>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 160);
  const http = status === undefined ? '' : ` answered HTTP ${status}${text ? ` — ${text}` : ''}`;
  const original = errorMessage(error);
  const message =
    kind === 'unauthorized'
      ? `${url} needs authorization${status === undefined ? '' : ` (HTTP ${status})`}`
      : status !== undefined
        ? `${url}${http}${kind === 'permanent' ? ': is this an MCP endpoint?' : ''}`
        : kind === 'permanent'
          ? names.some((name) => /Issuer|AuthorizationServer|Token|Registration|Pkce/.test(name)) ||
            original.startsWith('Protected resource')
            ? `${url}: sign-in failed (${original})`
            : `${url} is not an MCP endpoint we can talk to (${original})`
          : `${url} is unreachable (${original})`;
  const code = kind === 'unauthorized' ? 'UNAUTHORIZED' : 'NOT_CONNECTED';
  return { kind, error: new McpQueryError(code, message, { cause: error }) };
}

const pageUrl = () => (globalThis as { location?: { href?: string } }).location?.href;

/** Whether a URL can be connected to at all; a clear error when it cannot. */
export function invalidUrl(url: string | URL): Error | undefined {
  const text = String(url);
  const base = pageUrl();
  if (URL.canParse(text) || (base !== undefined && URL.canParse(text, base))) return undefined;
  return new McpQueryError('INVALID_OPTIONS', `${JSON.stringify(text)} is not a valid URL`);
}

/** The endpoint as an absolute URL (a path like `/mcp` is relative to the page). */
export function resolveUrl(url: string | URL): URL {
  return new URL(String(url), pageUrl());
}

/** Why a request that waited for the connection cannot have it. */
export function notConnected(state: ConnectionSnapshot, started: boolean): McpQueryError {
  const { phase, error } = state;
  if (!started) {
    return new McpQueryError(
      'NOT_STARTED',
      'the MCP connection was never started (McpCacheSync not mounted, or rendered on the server?)',
    );
  }
  if (error instanceof McpQueryError) return error;
  return new McpQueryError(
    'NOT_CONNECTED',
    error ? `not connected: ${error.message}` : `the MCP connection is ${phase}`,
    { cause: error },
  );
}

/** A ready connection that ended; a client passed in is the host's to reconnect. */
export function connectionLost(reason: string, reconnectable: boolean): McpQueryError {
  return new McpQueryError(
    'CONNECTION_LOST',
    reconnectable
      ? reason
      : `${reason}; the client was passed in, so reconnect it and call reconnect()`,
  );
}
