/**
 * A server's configuration: what the user typed in (never a token), as it is
 * stored, shared with the other tabs and turned into a connection. Anything
 * that comes from outside (the user, the storage, another tab) goes through
 * `checkServer` before it is used.
 */

import { randomState } from '../auth/signIn';

/** How a server signs in: `oauth` from the start, `none` never; unset, on its first 401. */
export type ServerAuth = 'oauth' | 'none';

/** What `add()` takes. */
export interface McpServerInput {
  url: string;
  name: string;
  /**
   * How every hook names the server (`{ scope: id }`); derived from the name
   * when omitted, never a scope the app's own providers use.
   */
  id?: string;
  /** Sent with every request to the server's origin (an API key, a tenant header). */
  headers?: Record<string, string>;
  auth?: ServerAuth;
}

/** One server as stored: the URL absolute and canonical, the id fixed. */
export interface McpServerConfig {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly auth?: ServerAuth;
  /**
   * Random, made by `add()` (and anew when the URL changes): part of the storage key of the
   * server's tokens, so tokens kept for an earlier add of the same id and URL (in a tab that
   * could not forget them) are never found. Unset in a list stored by an earlier version: its
   * tokens stay under the key they had.
   */
  readonly nonce?: string;
}

/** Why an `add()` or `update()` was refused. */
export type ServerConfigProblem =
  | 'invalid-url'
  | 'invalid-name'
  | 'invalid-id'
  | 'invalid-headers'
  | 'invalid-auth'
  | 'duplicate-url'
  | 'duplicate-name'
  | 'duplicate-id'
  | 'too-many'
  | 'unknown-server';

export type ServerConfigResult =
  | { ok: true; server: McpServerConfig }
  | { ok: false; problem: ServerConfigProblem; message: string };

export const MAX_SERVERS = 100;
const MAX_NAME = 64;
const MAX_HEADERS = 32;
const MAX_HEADER_VALUE = 8192;
const ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** No `:` or `#`: a nonce cannot make one storage key read as another. */
export const NONCE = /^[A-Za-z0-9_-]{1,64}$/;
/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Set by the transport itself: a server entry cannot override them. */
const RESERVED_HEADERS =
  /^(host|content-length|content-type|accept|connection|mcp-session-id|mcp-protocol-version|last-event-id)$/i;

const refuse = (problem: ServerConfigProblem, message: string): ServerConfigResult => ({
  ok: false,
  problem,
  message,
});

/**
 * An absolute http(s) URL without a fragment, or why not. Absolute only: a
 * user typing `example.com/mcp` means a server, not a path of this page.
 */
export function canonicalUrl(value: unknown): { url: string } | { error: string } {
  if (typeof value !== 'string' || value.trim() === '') return { error: 'a URL is required' };
  const text = value.trim();
  if (!URL.canParse(text)) {
    return {
      error: `${JSON.stringify(text)} is not an absolute URL (like https://example.com/mcp)`,
    };
  }
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { error: `${JSON.stringify(text)} is not an http(s) URL` };
  }
  if (url.username || url.password) {
    return { error: 'a server URL cannot carry credentials: use headers or sign in' };
  }
  url.hash = '';
  return { url: url.href };
}

/** A lowercase id made of the name: `My Server` → `my-server`. */
export function idFromName(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48);
  return ID.test(slug) ? slug : 'server';
}

/** `base`, or `base-2`, `base-3`… whichever no server has. */
export function uniqueId(base: string, taken: { has(id: string): boolean }): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n += 1) {
    const id = `${base}-${n}`;
    if (!taken.has(id)) return id;
  }
}

function checkHeaders(value: unknown): Record<string, string> | string | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return 'headers must be an object of strings';
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_HEADERS) return `at most ${MAX_HEADERS} headers`;
  const headers: Record<string, string> = {};
  for (const [name, text] of entries) {
    if (!HEADER_NAME.test(name)) return `${JSON.stringify(name)} is not a header name`;
    if (RESERVED_HEADERS.test(name)) return `the ${name} header is set by the transport`;
    if (typeof text !== 'string' || /[\r\n\0]/.test(text) || text.length > MAX_HEADER_VALUE) {
      return `the ${name} header needs a single-line string value`;
    }
    headers[name] = text;
  }
  return entries.length === 0 ? undefined : headers;
}

/**
 * One server as it may be used: each field checked and normalised, and the
 * URL, name and id unique among `others`. Also how stored entries and other
 * tabs' messages are read, so a tampered entry is refused, never connected.
 * A new server's id is never a scope the app's own providers use
 * (`appScope`): a derived one goes around it, a given one is refused.
 */
export function checkServer(
  input: unknown,
  others: readonly McpServerConfig[],
  makeId = true,
  appScope: (id: string) => boolean = () => false,
): ServerConfigResult {
  if (input === null || typeof input !== 'object') return refuse('invalid-url', 'no server given');
  const raw = input as Record<string, unknown>;
  const url = canonicalUrl(raw.url);
  if ('error' in url) return refuse('invalid-url', url.error);
  const name = typeof raw.name === 'string' ? raw.name.trim() : '';
  if (name === '' || name.length > MAX_NAME) {
    return refuse('invalid-name', `a name of 1 to ${MAX_NAME} characters is required`);
  }
  const headers = checkHeaders(raw.headers);
  if (typeof headers === 'string') return refuse('invalid-headers', headers);
  if (raw.auth !== undefined && raw.auth !== 'oauth' && raw.auth !== 'none') {
    return refuse('invalid-auth', "auth is 'oauth', 'none' or unset");
  }
  const nonce = raw.nonce;
  if (nonce !== undefined && (typeof nonce !== 'string' || !NONCE.test(nonce))) {
    return refuse('invalid-id', 'a nonce is 1 to 64 of A-Z, a-z, 0-9, _ and -');
  }
  const sameUrl = others.find((other) => other.url === url.url);
  if (sameUrl) return refuse('duplicate-url', `${url.url} is already added as "${sameUrl.name}"`);
  if (others.some((other) => other.name.toLowerCase() === name.toLowerCase())) {
    return refuse('duplicate-name', `a server named "${name}" is already added`);
  }
  let id = raw.id;
  if (id === undefined && makeId) {
    const ids = new Set(others.map((other) => other.id));
    id = uniqueId(idFromName(name), { has: (taken) => ids.has(taken) || appScope(taken) });
  }
  if (typeof id !== 'string' || !ID.test(id)) {
    return refuse(
      'invalid-id',
      'an id is 1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit',
    );
  }
  if (others.some((other) => other.id === id)) {
    return refuse('duplicate-id', `a server with id "${id}" is already added`);
  }
  if (appScope(id)) {
    return refuse('duplicate-id', `"${id}" is the scope of one of the app's own providers`);
  }
  return {
    ok: true,
    server: {
      id,
      name,
      url: url.url,
      ...(headers && { headers }),
      ...(raw.auth !== undefined && { auth: raw.auth as ServerAuth }),
      ...(nonce !== undefined && { nonce }),
    },
  };
}

/**
 * What `add()` keeps: `input` checked against `others`, at most MAX_SERVERS, with a nonce of
 * its own (never the input's): a sign-in kept for an earlier add of it is not its own.
 */
export function checkAdded(
  input: unknown,
  others: readonly McpServerConfig[],
  appScope: (id: string) => boolean,
): ServerConfigResult {
  if (others.length >= MAX_SERVERS) return refuse('too-many', `at most ${MAX_SERVERS} servers`);
  const fresh =
    input !== null && typeof input === 'object' ? { ...input, nonce: randomState() } : input;
  return checkServer(fresh, others, true, appScope);
}

/**
 * What `update()` keeps: `current` with `patch`, checked against `others`. Its nonce stays
 * while its URL does; a server moved to another URL gets a new one, so moving it back later
 * does not find the sign-in it had there.
 */
export function checkUpdated(
  current: McpServerConfig,
  patch: object,
  others: readonly McpServerConfig[],
): ServerConfigResult {
  const result = checkServer(
    { ...current, ...patch, id: current.id, nonce: current.nonce },
    others,
  );
  if (!result.ok || result.server.url === current.url) return result;
  return { ok: true, server: { ...result.server, nonce: randomState() } };
}

/** `update()` of server `id` in `servers`: the result, and the list with it when it is kept. */
export function updateIn(
  servers: readonly McpServerConfig[],
  id: string,
  patch: object,
): { result: ServerConfigResult; servers?: McpServerConfig[] } {
  const current = servers.find((server) => server.id === id);
  if (!current) return { result: refuse('unknown-server', `no server with id "${id}"`) };
  const result = checkUpdated(
    current,
    patch,
    servers.filter((server) => server !== current),
  );
  if (!result.ok) return { result };
  return {
    result,
    servers: servers.map((server) => (server === current ? result.server : server)),
  };
}

/**
 * Whether two configurations sign in with the same stored tokens: the same URL, and the same
 * add of it (`nonce`).
 */
export function sameSignIn(
  a: Pick<McpServerConfig, 'url' | 'nonce'>,
  b: Pick<McpServerConfig, 'url' | 'nonce'>,
): boolean {
  return a.url === b.url && a.nonce === b.nonce;
}

/** Whether a change of configuration needs a new connection (anything but the name). */
export function sameConnection(a: McpServerConfig, b: McpServerConfig): boolean {
  return (
    sameSignIn(a, b) &&
    a.auth === b.auth &&
    JSON.stringify(a.headers ?? {}) === JSON.stringify(b.headers ?? {})
  );
}

/**
 * The list with `config`'s server signing in with OAuth from now on, or
 * undefined when there is nothing to change (it already says how it signs
 * in, or it moved to another URL, or was removed and added again, meanwhile).
 */
export function withOAuth(
  servers: readonly McpServerConfig[],
  config: McpServerConfig,
): McpServerConfig[] | undefined {
  const current = servers.find((server) => server.id === config.id);
  if (!current || !sameSignIn(current, config) || current.auth !== undefined) return undefined;
  return servers.map((server) => (server === current ? { ...server, auth: 'oauth' } : server));
}
