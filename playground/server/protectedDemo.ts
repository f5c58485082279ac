/**
 * The sign-in demo's backend: the demo authorization server on its own loopback port, and the
 * demo MCP server on both eras behind bearer tokens it issues, mounted in the dev server at
 * `/mcp-protected` (2026-07-28) and `/mcp-protected-legacy` (2025), each with its RFC 9728
 * metadata at `/.well-known/oauth-protected-resource/<path>`.
 *
 * A request without a valid token answers 401 naming that metadata; the SDK in the page then
 * discovers the authorization server, registers the app (dynamic client registration) and
 * builds the authorization URL. The authorization server shows a page where the person picks
 * who signs in (`chooseUser`); the resource server serves that user's own `inbox://me`.
 *
 * Tokens are issued for the resource URL the page used (RFC 8707 `aud`), and that URL depends
 * on how the page reached the dev server (`localhost` or `127.0.0.1`): the metadata and the
 * token check are made per origin, from the request's Host header.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AuthServer,
  createLegacyEndpoint,
  createModernEndpoint,
  type McpEndpoint,
  ResourceStore,
  startAuthServer,
} from '../../test/servers/index';
import {
  createGuard,
  type Guard,
  RESOURCE_METADATA_PATH,
} from '../../test/servers/protectedResource';
import { DEMO_USERS, type EndpointId, PRIVATE_URIS, PROTECTED_ENDPOINTS } from '../shared/demo';
import { applyCors } from './cors';

/** Each user's own inbox: what `cacheScope: 'private'` keeps apart in the page's cache. */
const INBOXES: Record<(typeof DEMO_USERS)[number], string> = {
  alice:
    "Alice's inbox\n- Tea party at 4 (from the Hatter)\n- Croquet rules, revised (from the Queen)",
  bob: "Bob's inbox\n- Scaffolding delivery moved to Monday\n- Can we fix it? (from Wendy)",
};

const MAX_GUARDS = 32;

const PATHS = new Map<string, EndpointId>(
  (Object.entries(PROTECTED_ENDPOINTS) as [EndpointId, { path: string }][]).map(([id, e]) => [
    e.path,
    id,
  ]),
);

export class ProtectedDemo {
  readonly authServer: AuthServer;
  readonly store: ResourceStore;
  readonly #endpoints: Record<EndpointId, McpEndpoint>;
  /** Per origin the page used, then per endpoint. */
  readonly #guards = new Map<string, Guard>();

  private constructor(authServer: AuthServer) {
    this.authServer = authServer;
    this.store = new ResourceStore([
      {
        uri: PRIVATE_URIS.inbox,
        name: 'inbox',
        title: 'Your inbox',
        description: "The signed-in user's own messages (cacheScope: 'private')",
        mimeType: 'text/plain',
        text: 'nobody is signed in',
        textByUser: INBOXES,
        cacheScope: 'private',
      },
    ]);
    // Listed only to a signed-in user: the Servers page shows it once you signed in.
    this.store.setTools([
      { name: 'archive_inbox', description: 'Only a signed-in user can list or call this' },
    ]);
    this.#endpoints = {
      modern: createModernEndpoint({ store: this.store, name: 'playground-protected' }),
      legacy: createLegacyEndpoint({ store: this.store, name: 'playground-protected-legacy' }),
    };
  }

  static async start(): Promise<ProtectedDemo> {
    return new ProtectedDemo(await startAuthServer({ chooseUser: [...DEMO_USERS] }));
  }

  /** Serves the request when it is one of ours (an endpoint or its metadata); false otherwise. */
  handle(path: string, req: IncomingMessage, res: ServerResponse): boolean {
    if (path.startsWith(`${RESOURCE_METADATA_PATH}/`)) {
      const endpoint = PATHS.get(path.slice(RESOURCE_METADATA_PATH.length));
      if (!endpoint) return false;
      if (applyCors(req, res)) return true;
      return this.#guard(req, endpoint).serveMetadata(path, req, res);
    }
    const endpoint = PATHS.get(path);
    if (!endpoint) return false;
    if (applyCors(req, res)) return true;
    void this.#serve(endpoint, req, res);
    return true;
  }

  async close(): Promise<void> {
    await Promise.all([
      this.#endpoints.modern.close(),
      this.#endpoints.legacy.close(),
      this.authServer.close(),
    ]);
  }

  async #serve(endpoint: EndpointId, req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (!(await this.#guard(req, endpoint).admit(req, res))) return;
      await this.#endpoints[endpoint].handle(req, res);
    } catch {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32603, message: 'Internal error' },
        }),
      );
    }
  }

  #guard(req: IncomingMessage, endpoint: EndpointId): Guard {
    const origin = `http://${req.headers.host ?? '127.0.0.1'}`;
    const key = `${origin} ${endpoint}`;
    let guard = this.#guards.get(key);
    if (!guard) {
      // Host comes from the client: a dev server reached under many names stays bounded.
      if (this.#guards.size >= MAX_GUARDS) this.#guards.clear();
      const url = `${origin}${PROTECTED_ENDPOINTS[endpoint].path}`;
      guard = createGuard({ authServer: this.authServer }, () => url);
      this.#guards.set(key, guard);
    }
    return guard;
  }
}
