import { McpQueryError } from './errors';

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

const PERMANENT_STATUS = new Set([400, 404, 405, 406, 410, 415, 501]);

interface Inspected {
  status: number | undefined;
  code: string | undefined;
  name: string | undefined;
  body: string | undefined;
}

/** The first HTTP status, SDK code and error name found along the `cause` chain. */
function inspect(error: unknown): Inspected {
  const found: Inspected = { status: undefined, code: undefined, name: undefined, body: undefined };
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current !== null && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    const value = current as {
      status?: unknown;
      code?: unknown;
      name?: unknown;
      data?: { status?: unknown; text?: unknown };
      cause?: unknown;
    };
    const status = value.status ?? value.data?.status;
    if (found.status === undefined && typeof status === 'number') found.status = status;
    if (found.body === undefined && typeof value.data?.text === 'string') {
      found.body = value.data.text;
    }
    if (typeof value.code === 'string') {
      // The innermost concrete reason wins over the SDK's "negotiation failed" wrapper.
      if (found.code === undefined || found.code === 'ERA_NEGOTIATION_FAILED')
        found.code = value.code;
    }
    if (typeof value.name === 'string' && found.name !== 'UnauthorizedError') {
      if (found.name === undefined || value.name !== 'Error') found.name = value.name;
    }
    current = value.cause;
  }
  return found;
}

function looksLikeJsonRpc(body: string | undefined): boolean {
  const text = body?.trimStart() ?? '';
  return text.startsWith('{') && text.includes('"jsonrpc"');
}

function kindOf({ status, code, name, body }: Inspected): FailureKind {
  if (
    name === 'UnauthorizedError' ||
    name === 'InsufficientScopeError' ||
    status === 401 ||
    status === 403 ||
    code === 'CLIENT_HTTP_AUTHENTICATION' ||
    code === 'CLIENT_HTTP_FORBIDDEN'
  ) {
    return 'unauthorized';
  }
  if (status !== undefined) {
    if (PERMANENT_STATUS.has(status)) return 'permanent';
    // A 500 whose body is not JSON-RPC is an error page of something that is
    // not an MCP server; a gateway's 502-504 during a restart is not.
    if (status === 500 && !looksLikeJsonRpc(body)) return 'permanent';
    return 'transient';
  }
  if (
    name === 'SyntaxError' ||
    code === 'CLIENT_HTTP_UNEXPECTED_CONTENT' ||
    code === 'ERR_INVALID_URL' ||
    name === 'UnsupportedProtocolVersionError' ||
    name === 'IssuerMismatchError' ||
    name === 'AuthorizationServerMismatchError' ||
    name === 'InsecureTokenEndpointError' ||
    name === 'RegistrationRejectedError'
  ) {
    return 'permanent';
  }
  return 'transient';
}

/** An HTML error page says nothing useful: keep the text of a short body, never markup. */
function bodyHint(body: string | undefined): string {
  if (!body) return '';
  const text = body
    .replace(/<[^>]{0,2000}>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return text ? ` — ${text.slice(0, 160)}` : '';
}

/** Classify a failed connection attempt or request, with a message a developer can act on. */
export function classifyFailure(error: unknown, url: string): Failure {
  if (error instanceof McpQueryError) {
    return { kind: error.code === 'INVALID_OPTIONS' ? 'permanent' : 'transient', error };
  }
  const found = inspect(error);
  const kind = kindOf(found);
  const original = error instanceof Error ? error.message : String(error);
  const http =
    found.status === undefined ? '' : ` answered HTTP ${found.status}${bodyHint(found.body)}`;
  const what =
    kind === 'unauthorized'
      ? `${url} needs authorization${found.status === undefined ? '' : ` (HTTP ${found.status})`}`
      : kind === 'permanent'
        ? found.status !== undefined
          ? `${url}${http}: is this an MCP endpoint?`
          : `${url} is not an MCP endpoint we can talk to (${original})`
        : found.status !== undefined
          ? `${url}${http}`
          : `${url} is unreachable (${original})`;
  return { kind, error: new McpQueryError('NOT_CONNECTED', what, { cause: error }) };
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
