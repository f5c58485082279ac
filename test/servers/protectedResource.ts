/**
 * Bearer-token protection in front of an MCP endpoint (the MCP server as an OAuth resource
 * server), checked against an `AuthServer` in process:
 *
 * - RFC 9728 protected-resource metadata at `/.well-known/oauth-protected-resource/mcp` (the
 *   path-based location for the `/mcp` resource), naming the authorization server.
 * - A request without a valid token (none, wrong signature, expired, for another resource)
 *   answers 401 `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` (+
 *   `error="invalid_token"` when a token was sent). The 401 challenge names only the base scopes,
 *   so a client asks for those first.
 * - A valid token without the scope a request needs (the base scopes, or a tool's or resource's
 *   extra scope) answers 403 `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`,
 *   naming everything that request needs, the way a server asks for step-up.
 * - An accepted request carries `req.auth` (the SDKs' `authInfo`), with the user in
 *   `extra.sub`: servers use it to serve per-user content (`StoredResource.textByUser`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthServer } from './authServer';
import { readJsonBody } from './protocol';

export interface ProtectionOptions {
  /** Who issues the tokens this server accepts. */
  authServer: AuthServer;
  /** Scopes every request needs (default `['mcp']`). */
  scopes?: string[];
  /** Tool name → the extra scope its `tools/call` needs. */
  toolScopes?: Record<string, string>;
  /** Resource URI → the extra scope its `resources/read` needs. */
  resourceScopes?: Record<string, string>;
  /** Listed as `scopes_supported` in the resource metadata (default: every scope named here). */
  scopesSupported?: string[];
}

export interface ProtectionStats {
  /** 401 answers (no token, or one that is not valid now). */
  challenged: number;
  /** 403 insufficient_scope answers. */
  forbidden: number;
  /** Requests let through with a valid token. */
  accepted: number;
  /** Resource metadata documents served. */
  metadataRequests: number;
}

/** What a protected server adds to a `TestServer`. */
export interface Protection {
  readonly authServer: AuthServer;
  /** The RFC 9728 metadata URL named in every challenge. */
  readonly resourceMetadataUrl: string;
  stats(): ProtectionStats;
  resetStats(): void;
}

export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The `authInfo` the SDKs hand to handlers (`req.auth`). */
export interface AuthInfo {
  token: string;
  clientId: string;
  scopes: string[];
  expiresAt?: number;
  resource?: URL;
  extra: { sub: string };
}

export interface Guard extends Protection {
  /** Serves the metadata document when `path` is its location; true when it answered. */
  serveMetadata(path: string, req: IncomingMessage, res: ServerResponse): boolean;
  /** Lets the request through (true, with `req.auth` and a parsed `req.body`) or answers it. */
  admit(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
}

function newStats(): ProtectionStats {
  return { challenged: 0, forbidden: 0, accepted: 0, metadataRequests: 0 };
}

type Message = { method?: unknown; params?: { name?: unknown; uri?: unknown } };

/** The scopes one JSON-RPC message needs beyond the base ones. */
function extraScopes(message: Message, options: ProtectionOptions): string[] {
  const params = message.params;
  if (message.method === 'tools/call' && typeof params?.name === 'string') {
    const scope = options.toolScopes?.[params.name];
    return scope ? [scope] : [];
  }
  if (message.method === 'resources/read' && typeof params?.uri === 'string') {
    const scope = options.resourceScopes?.[params.uri];
    return scope ? [scope] : [];
  }
  return [];
}

/**
 * `resourceUrl` is the MCP endpoint (`http://127.0.0.1:<port>/mcp`); tokens must have been issued
 * for it (`aud`) when the client named a resource.
 */
export function createGuard(options: ProtectionOptions, resourceUrl: () => string): Guard {
  const base = options.scopes ?? ['mcp'];
  const named = [
    ...base,
    ...Object.values(options.toolScopes ?? {}),
    ...Object.values(options.resourceScopes ?? {}),
  ];
  const supported = options.scopesSupported ?? [...new Set(named)];
  let stats = newStats();
  const metadataUrl = () => {
    const url = new URL(resourceUrl());
    return `${url.origin}${RESOURCE_METADATA_PATH}${url.pathname}`;
  };
  const quoted = (scopes: string[]) => `scope="${[...new Set(scopes)].join(' ')}"`;

  const challenge = (res: ServerResponse, invalidToken: boolean) => {
    stats.challenged += 1;
    const error = invalidToken ? 'error="invalid_token", ' : '';
    res.writeHead(401, {
      'content-type': 'application/json',
      'www-authenticate': `Bearer ${error}resource_metadata="${metadataUrl()}", ${quoted(base)}`,
    });
    res.end(JSON.stringify({ error: 'invalid_token', error_description: 'sign in first' }));
  };

  return {
    authServer: options.authServer,
    get resourceMetadataUrl() {
      return metadataUrl();
    },
    stats: () => ({ ...stats }),
    resetStats() {
      stats = newStats();
    },
    serveMetadata(path, _req, res) {
      if (path !== `${RESOURCE_METADATA_PATH}${new URL(resourceUrl()).pathname}`) return false;
      stats.metadataRequests += 1;
      res.writeHead(200, {
        'content-type': 'application/json',
        'access-control-allow-origin': '*',
      });
      res.end(
        JSON.stringify({
          resource: resourceUrl(),
          authorization_servers: [options.authServer.issuer],
          scopes_supported: supported,
          bearer_methods_supported: ['header'],
        }),
      );
      return true;
    },
    async admit(req, res) {
      const header = req.headers.authorization;
      const token = header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
      const claims = token === undefined ? undefined : options.authServer.verify(token);
      if (!token || !claims || (claims.aud !== undefined && claims.aud !== resourceUrl())) {
        challenge(res, token !== undefined);
        return false;
      }
      let messages: Message[] = [];
      if (req.method === 'POST') {
        let body: unknown;
        try {
          body = await readJsonBody(req);
        } catch {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: null,
              error: { code: -32700, message: 'Parse error' },
            }),
          );
          return false;
        }
        // The endpoints read a body parsed upstream (like express.json's) from here.
        (req as IncomingMessage & { body?: unknown }).body = body;
        messages = (Array.isArray(body) ? body : [body]).filter(
          (m): m is Message => m !== null && typeof m === 'object',
        );
      }
      const granted = new Set(claims.scope.split(' ').filter(Boolean));
      const needed = [...base, ...messages.flatMap((m) => extraScopes(m, options))];
      if (!needed.every((scope) => granted.has(scope))) {
        stats.forbidden += 1;
        res.writeHead(403, {
          'content-type': 'application/json',
          'www-authenticate': `Bearer error="insufficient_scope", ${quoted(needed)}, resource_metadata="${metadataUrl()}"`,
        });
        res.end(JSON.stringify({ error: 'insufficient_scope' }));
        return false;
      }
      stats.accepted += 1;
      const auth: AuthInfo = {
        token,
        clientId: claims.client_id,
        scopes: [...granted],
        expiresAt: claims.exp,
        ...(claims.aud !== undefined && { resource: new URL(claims.aud) }),
        extra: { sub: claims.sub },
      };
      (req as IncomingMessage & { auth?: AuthInfo }).auth = auth;
      return true;
    },
  };
}
