/**
 * A small OAuth 2.1 authorization server on 127.0.0.1 for tests and the playground: just what an
 * MCP client needs to sign in, with nothing to click.
 *
 * - RFC 8414 metadata at `/.well-known/oauth-authorization-server` (issuer = the origin, no
 *   path), advertising RFC 9207 `iss` in authorization responses.
 * - RFC 7591 dynamic client registration at `/register` (public clients, no secret).
 * - `/authorize` approves at once and redirects to the registered `redirect_uri` with `code`,
 *   `state` and `iss`. Who signs in is `setUser()`'s user, or the `user` query parameter added
 *   to the authorization URL (a test plays the user choosing an account). `deny=1` answers
 *   `error=access_denied` instead. With `chooseUser` (the playground), a URL naming nobody gets
 *   a small HTML page instead, where a person picks one of those users (or cancels).
 * - `/token`: `authorization_code` with PKCE S256 (the verifier must match the challenge), and
 *   `refresh_token`. Access tokens are JWT-shaped (`header.payload.signature`, HMAC-SHA256) and
 *   carry `sub`, `scope`, `aud` (the RFC 8707 `resource`), `client_id`, `iat`, `exp`, `jti`;
 *   with `opaqueTokens` they are random strings that say nothing (as many real servers issue).
 *   Granted scope is what the client asked for (no consent screen trims it).
 * - RFC 7009 revocation at `/revoke` (advertised as `revocation_endpoint` unless
 *   `revocation: false`): a refresh token revoked there no longer works.
 *
 * Resource servers verify tokens in process (`verify`), which also honours `expireAccessTokens`:
 * a test makes every access token stale at a moment of its choosing instead of waiting for a
 * lifetime to pass. Every endpoint answers CORS, so a browser app on another origin can sign in.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface AuthServerOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Who `/authorize` signs in when the URL names nobody (default `alice`). */
  user?: string;
  /** Access token lifetime (ms, default one hour). `expires_in` is this, rounded up to seconds. */
  accessTokenTtlMs?: number;
  /** Advertised in the metadata (`scopes_supported`); omitted when not set. */
  scopesSupported?: string[];
  /** Issue a new refresh token on every refresh and retire the old one (default false). */
  rotateRefreshTokens?: boolean;
  /**
   * `/authorize` without `user` (and without `deny`) answers an HTML page offering these users,
   * each a button that comes back to `/authorize` with `user=<name>`. Unset: approves at once.
   */
  chooseUser?: string[];
  /** Issue opaque access tokens (no readable claims) instead of JWT-shaped ones (default false). */
  opaqueTokens?: boolean;
  /** Advertise and serve `/revoke` (RFC 7009; default true). */
  revocation?: boolean;
  /**
   * `code_challenge_methods_supported` in the metadata (default `['S256']`; `null` leaves it
   * out). PKCE with S256 is required either way.
   */
  pkceMethods?: string[] | null;
}

/** What a valid access token says. */
export interface TokenClaims {
  iss: string;
  sub: string;
  /** Space-separated, as in the token. */
  scope: string;
  /** The resource (RFC 8707) the token was issued for, if the client named one. */
  aud?: string;
  client_id: string;
  iat: number;
  exp: number;
  jti: string;
}

export interface AuthServerStats {
  metadataRequests: number;
  registrations: number;
  /** `/authorize` requests (approved or not). */
  authorizations: number;
  /** Successful `authorization_code` exchanges. */
  codeExchanges: number;
  /** Successful `refresh_token` grants. */
  refreshes: number;
  /** Token requests answered with an OAuth error. */
  tokenErrors: number;
  /** `/revoke` requests, and which tokens they named (in order). */
  revocations: number;
  revokedTokens: string[];
}

export interface AuthServer {
  /** `http://127.0.0.1:<port>`, also the issuer. */
  readonly url: string;
  readonly issuer: string;
  /** Who `/authorize` signs in from now on. */
  setUser(user: string): void;
  /** The claims of a token this server issued that is valid now; undefined otherwise. */
  verify(token: string): TokenClaims | undefined;
  /** Whose refresh token this is, while it still works. */
  refreshSubject(token: string | undefined): string | undefined;
  /** Every access token issued so far stops being valid (refresh tokens still work). */
  expireAccessTokens(): void;
  /** Every refresh token issued so far stops working (the next refresh fails invalid_grant). */
  revokeRefreshTokens(): void;
  /** The scopes each `/authorize` request asked for, in order (`''` for none). */
  requestedScopes(): string[];
  stats(): AuthServerStats;
  resetStats(): void;
  close(): Promise<void>;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  scope: string;
  resource: string | undefined;
  sub: string;
  expiresAt: number;
}

interface Grant {
  clientId: string;
  sub: string;
  scope: string;
  resource: string | undefined;
}

interface Client {
  redirectUris: string[];
}

const CODE_TTL_MS = 60_000;
const HOUR_MS = 3_600_000;

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');
const escapeHtml = (value: string) =>
  value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
const random = () => randomBytes(24).toString('base64url');

function newStats(): AuthServerStats {
  return {
    metadataRequests: 0,
    registrations: 0,
    authorizations: 0,
    codeExchanges: 0,
    refreshes: 0,
    tokenErrors: 0,
    revocations: 0,
    revokedTokens: [],
  };
}

class OAuthFailure extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(`${code}: ${description}`);
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(JSON.stringify(body));
}

function cors(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('access-control-allow-origin', req.headers.origin ?? '*');
  res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
  res.setHeader(
    'access-control-allow-headers',
    'authorization, content-type, mcp-protocol-version',
  );
  res.setHeader('access-control-max-age', '600');
}

class DemoAuthServer implements AuthServer {
  readonly #options: AuthServerOptions;
  readonly #secret = randomBytes(32);
  readonly #clients = new Map<string, Client>();
  readonly #codes = new Map<string, PendingCode>();
  readonly #refreshTokens = new Map<string, Grant>();
  /** jti → expiry (ms) of every access token issued; gone or past = invalid. */
  readonly #accessTokens = new Map<string, number>();
  /** Opaque access token → its claims (`opaqueTokens`). */
  readonly #opaque = new Map<string, TokenClaims>();
  readonly #sockets = new Set<Socket>();
  readonly #http = createServer((req, res) => void this.#serve(req, res));
  #user: string;
  #stats = newStats();
  #requestedScopes: string[] = [];
  #port = 0;

  constructor(options: AuthServerOptions) {
    this.#options = options;
    this.#user = options.user ?? 'alice';
    this.#http.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  async open(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#http.once('error', reject);
      this.#http.listen(port, '127.0.0.1', () => {
        this.#http.off('error', reject);
        resolve();
      });
    });
    this.#port = (this.#http.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  get issuer(): string {
    return this.url;
  }

  setUser(user: string): void {
    this.#user = user;
  }

  refreshSubject(token: string | undefined): string | undefined {
    return token === undefined ? undefined : this.#refreshTokens.get(token)?.sub;
  }

  verify(token: string): TokenClaims | undefined {
    const opaque = this.#opaque.get(token);
    if (opaque) {
      const expiresAt = this.#accessTokens.get(opaque.jti);
      return expiresAt !== undefined && Date.now() < expiresAt ? opaque : undefined;
    }
    const [header, payload, signature] = token.split('.');
    if (!header || !payload || !signature) return undefined;
    const expected = this.#sign(`${header}.${payload}`);
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let claims: TokenClaims;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TokenClaims;
    } catch {
      return undefined;
    }
    const expiresAt = this.#accessTokens.get(claims.jti);
    if (expiresAt === undefined || Date.now() >= expiresAt) return undefined;
    return claims;
  }

  expireAccessTokens(): void {
    this.#accessTokens.clear();
  }

  revokeRefreshTokens(): void {
    this.#refreshTokens.clear();
  }

  requestedScopes(): string[] {
    return [...this.#requestedScopes];
  }

  stats(): AuthServerStats {
    return { ...this.#stats, revokedTokens: [...this.#stats.revokedTokens] };
  }

  resetStats(): void {
    this.#stats = newStats();
    this.#requestedScopes = [];
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#http.close(() => resolve()));
    this.#http.closeAllConnections();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  // ── endpoints ─────────────────────────────────────────────────────────────

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    cors(req, res);
    const url = new URL(req.url ?? '/', this.url);
    try {
      if (req.method === 'OPTIONS') {
        res.writeHead(204).end();
        return;
      }
      switch (`${req.method} ${url.pathname}`) {
        case 'GET /.well-known/oauth-authorization-server':
          this.#stats.metadataRequests += 1;
          send(res, 200, this.#metadata());
          return;
        case 'POST /register':
          send(res, 201, this.#register(JSON.parse((await readBody(req)) || '{}')));
          return;
        case 'GET /authorize':
          if (
            this.#options.chooseUser &&
            !url.searchParams.has('user') &&
            !url.searchParams.has('deny')
          ) {
            this.#chooser(url.searchParams, this.#options.chooseUser, res);
          } else this.#authorize(url.searchParams, res);
          return;
        case 'POST /token':
          send(res, 200, this.#token(new URLSearchParams(await readBody(req))));
          return;
        case 'POST /revoke':
          if (this.#options.revocation === false) break;
          this.#revoke(new URLSearchParams(await readBody(req)));
          res.writeHead(200, { 'cache-control': 'no-store' }).end();
          return;
      }
      send(res, 404, { error: 'not_found' });
    } catch (error) {
      if (url.pathname === '/token') this.#stats.tokenErrors += 1;
      const failure =
        error instanceof OAuthFailure
          ? error
          : new OAuthFailure('invalid_request', error instanceof Error ? error.message : 'bad');
      if (!res.headersSent) {
        send(res, failure.status, { error: failure.code, error_description: failure.description });
      }
    }
  }

  #metadata() {
    return {
      issuer: this.issuer,
      authorization_endpoint: `${this.url}/authorize`,
      token_endpoint: `${this.url}/token`,
      registration_endpoint: `${this.url}/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      ...(this.#options.pkceMethods !== null && {
        code_challenge_methods_supported: this.#options.pkceMethods ?? ['S256'],
      }),
      ...(this.#options.revocation !== false && { revocation_endpoint: `${this.url}/revoke` }),
      token_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
      ...(this.#options.scopesSupported && { scopes_supported: this.#options.scopesSupported }),
    };
  }

  #register(metadata: { redirect_uris?: unknown }) {
    const uris = metadata.redirect_uris;
    if (!Array.isArray(uris) || uris.length === 0 || !uris.every((u) => typeof u === 'string')) {
      throw new OAuthFailure('invalid_redirect_uri', 'redirect_uris must be a non-empty list');
    }
    const clientId = `client-${random()}`;
    this.#clients.set(clientId, { redirectUris: uris });
    this.#stats.registrations += 1;
    return {
      ...metadata,
      client_id: clientId,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      token_endpoint_auth_method: 'none',
    };
  }

  /** Never redirect to a URI that was not registered: answer here instead. */
  #checkClient(params: URLSearchParams): { clientId: string; redirectUri: string } {
    const clientId = params.get('client_id') ?? '';
    const redirectUri = params.get('redirect_uri') ?? '';
    const client = this.#clients.get(clientId);
    if (!client) throw new OAuthFailure('invalid_client', `unknown client ${clientId}`);
    if (!client.redirectUris.includes(redirectUri)) {
      throw new OAuthFailure('invalid_request', `redirect_uri ${redirectUri} is not registered`);
    }
    return { clientId, redirectUri };
  }

  /** The page a person sees: pick a user; the form comes back here with the same parameters. */
  #chooser(params: URLSearchParams, users: string[], res: ServerResponse): void {
    this.#checkClient(params);
    const hidden = [...params]
      .map(([n, v]) => `<input type="hidden" name="${escapeHtml(n)}" value="${escapeHtml(v)}">`)
      .join('');
    const buttons = users
      .map(
        (u) =>
          `<button name="user" value="${escapeHtml(u)}" data-testid="as-${escapeHtml(u)}">Continue as ${escapeHtml(u)}</button>`,
      )
      .join('');
    const scope = params.get('scope');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title><link rel="icon" href="data:,">
<style>body{font:15px system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem}
button{display:block;width:100%;margin:.5rem 0;padding:.6rem;font:inherit;cursor:pointer}</style></head>
<body><h1>Demo authorization server</h1>
<p>${escapeHtml(params.get('client_id') ?? '')} asks to act for you${scope ? ` (scope <code>${escapeHtml(scope)}</code>)` : ''}.</p>
<form method="get" action="/authorize">${hidden}${buttons}
<button name="deny" value="1" data-testid="deny">Cancel</button></form></body></html>`);
  }

  #authorize(params: URLSearchParams, res: ServerResponse): void {
    this.#stats.authorizations += 1;
    this.#requestedScopes.push(params.get('scope') ?? '');
    const { clientId, redirectUri } = this.#checkClient(params);
    const back = new URL(redirectUri);
    const state = params.get('state');
    if (state !== null) back.searchParams.set('state', state);
    back.searchParams.set('iss', this.issuer);
    const challenge = params.get('code_challenge');
    if (params.get('deny') === '1') {
      back.searchParams.set('error', 'access_denied');
    } else if (params.get('response_type') !== 'code') {
      back.searchParams.set('error', 'unsupported_response_type');
    } else if (!challenge || params.get('code_challenge_method') !== 'S256') {
      back.searchParams.set('error', 'invalid_request');
      back.searchParams.set('error_description', 'PKCE with S256 is required');
    } else {
      const code = random();
      this.#codes.set(code, {
        clientId,
        redirectUri,
        challenge,
        scope: params.get('scope') ?? '',
        resource: params.get('resource') ?? undefined,
        sub: params.get('user') ?? this.#user,
        expiresAt: Date.now() + CODE_TTL_MS,
      });
      back.searchParams.set('code', code);
    }
    res.writeHead(302, { location: back.href }).end();
  }

  #token(params: URLSearchParams) {
    const grantType = params.get('grant_type');
    const clientId = params.get('client_id') ?? '';
    if (!this.#clients.has(clientId)) {
      throw new OAuthFailure('invalid_client', `unknown client ${clientId}`, 401);
    }
    if (grantType === 'authorization_code') {
      const code = params.get('code') ?? '';
      const pending = this.#codes.get(code);
      this.#codes.delete(code); // one use, whatever happens next
      if (!pending || pending.expiresAt < Date.now() || pending.clientId !== clientId) {
        throw new OAuthFailure('invalid_grant', 'unknown, used or expired code');
      }
      if (params.get('redirect_uri') !== pending.redirectUri) {
        throw new OAuthFailure('invalid_grant', 'redirect_uri differs from the authorization');
      }
      const verifier = params.get('code_verifier') ?? '';
      if (base64url(createHash('sha256').update(verifier).digest()) !== pending.challenge) {
        throw new OAuthFailure('invalid_grant', 'code_verifier does not match the challenge');
      }
      const resource = params.get('resource') ?? pending.resource;
      this.#stats.codeExchanges += 1;
      return this.#issue({ clientId, sub: pending.sub, scope: pending.scope, resource }, true);
    }
    if (grantType === 'refresh_token') {
      const token = params.get('refresh_token') ?? '';
      const grant = this.#refreshTokens.get(token);
      if (!grant || grant.clientId !== clientId) {
        throw new OAuthFailure('invalid_grant', 'unknown or revoked refresh token');
      }
      const asked = params.get('scope');
      if (asked) {
        const granted = new Set(grant.scope.split(' '));
        if (!asked.split(' ').every((scope) => granted.has(scope))) {
          throw new OAuthFailure('invalid_scope', 'a refresh cannot widen the scope');
        }
      }
      const rotate = this.#options.rotateRefreshTokens === true;
      if (rotate) this.#refreshTokens.delete(token);
      this.#stats.refreshes += 1;
      const issued = this.#issue({ ...grant, scope: asked || grant.scope }, rotate);
      return rotate ? issued : { ...issued, refresh_token: token };
    }
    throw new OAuthFailure('unsupported_grant_type', `grant_type ${grantType}`);
  }

  /** RFC 7009: the named token stops working; the answer is 200 whether or not it was known. */
  #revoke(params: URLSearchParams): void {
    this.#stats.revocations += 1;
    const token = params.get('token') ?? '';
    this.#stats.revokedTokens.push(token);
    const grant = this.#refreshTokens.get(token);
    if (grant && grant.clientId === params.get('client_id')) this.#refreshTokens.delete(token);
  }

  #issue(grant: Grant, withRefreshToken: boolean) {
    const ttl = this.#options.accessTokenTtlMs ?? HOUR_MS;
    const now = Date.now();
    const jti = random();
    const claims: TokenClaims = {
      iss: this.issuer,
      sub: grant.sub,
      scope: grant.scope,
      ...(grant.resource !== undefined && { aud: grant.resource }),
      client_id: grant.clientId,
      iat: Math.floor(now / 1000),
      exp: Math.ceil((now + ttl) / 1000),
      jti,
    };
    this.#accessTokens.set(jti, now + ttl);
    let accessToken: string;
    if (this.#options.opaqueTokens) {
      accessToken = `at-${random()}`;
      this.#opaque.set(accessToken, claims);
    } else {
      const head = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
      const body = base64url(JSON.stringify(claims));
      accessToken = `${head}.${body}.${this.#sign(`${head}.${body}`).toString()}`;
    }
    let refreshToken: string | undefined;
    if (withRefreshToken) {
      refreshToken = `rt-${random()}`;
      this.#refreshTokens.set(refreshToken, { ...grant });
    }
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: Math.ceil(ttl / 1000),
      ...(grant.scope && { scope: grant.scope }),
      ...(refreshToken && { refresh_token: refreshToken }),
    };
  }

  #sign(input: string): Buffer {
    return Buffer.from(createHmac('sha256', this.#secret).update(input).digest('base64url'));
  }
}

/** Starts the demo authorization server on 127.0.0.1. */
export async function startAuthServer(options: AuthServerOptions = {}): Promise<AuthServer> {
  const server = new DemoAuthServer(options);
  await server.open(options.port ?? 0);
  return server;
}
