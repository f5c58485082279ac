/**
 * The 2025-era ("legacy") server shape shared by the v2-package server and the v1 SDK server:
 * one McpServer + Streamable HTTP transport per client session, routed by `Mcp-Session-Id`.
 *
 * Neither SDK implements resources/subscribe for a server: it neither tracks subscriptions nor
 * filters `notifications/resources/updated`. This core does both, per session, because a real
 * server that broadcast every update to every session would hide client bugs (an update for a
 * URI the client never subscribed to must not arrive).
 *
 * The SDK-specific part (which classes, which error types) is a `LegacySessionFactory`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type CatalogService,
  countMethods,
  createCatalogService,
  createResourceService,
  endpointName,
  failExchange,
  finishEndpoint,
  HandlerFailure,
  headerValue,
  newCounters,
  type ResolvedCapabilities,
  type ResourceService,
  readJsonBody,
  resolveCapabilities,
  type SubscriptionHooks,
  sortedUnique,
} from './protocol';
import { ResourceStore } from './resourceStore';
import type { EndpointOptions, McpEndpoint } from './types';

export interface LegacySession {
  readonly sessionId: string | undefined;
  handleRequest(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  sendResourceUpdated(uri: string): Promise<void>;
  sendResourceListChanged(): Promise<void>;
  sendToolListChanged(): Promise<void>;
  sendPromptListChanged(): Promise<void>;
  close(): Promise<void>;
}

export interface LegacySessionSetup {
  name: string;
  caps: ResolvedCapabilities;
  service: ResourceService;
  catalog: CatalogService;
  subscriptions: SubscriptionHooks;
  onInitialized(sessionId: string): void;
  onClosed(): void;
  onError(error: Error): void;
}

export type LegacySessionFactory = (setup: LegacySessionSetup) => Promise<LegacySession>;

interface SessionEntry {
  session: LegacySession | undefined;
  id: string | undefined;
  subscriptions: Set<string>;
}

function isInitializeRequest(body: unknown): boolean {
  return (
    body !== null &&
    typeof body === 'object' &&
    !Array.isArray(body) &&
    (body as { method?: unknown }).method === 'initialize'
  );
}

export function createLegacyCoreEndpoint(
  kind: 'legacy-v2' | 'legacy-v1',
  options: EndpointOptions,
  openSession: LegacySessionFactory,
): McpEndpoint {
  const store = options.store ?? new ResourceStore();
  const caps = resolveCapabilities(options.capabilities);
  const counters = newCounters();
  const service = createResourceService(store, counters, options.pageSize);
  const catalog = createCatalogService(store, counters, options.pageSize);
  const name = endpointName(kind, options);
  const onError = (error: unknown) =>
    options.onError?.(error instanceof Error ? error : new Error(String(error)));
  const sessions = new Map<string, SessionEntry>();
  // Entries whose initialize is still in flight have no id yet but must still be closable.
  const entries = new Set<SessionEntry>();
  const getStreams = new Set<ServerResponse>();
  let closed = false;

  async function startSession(): Promise<SessionEntry> {
    const entry: SessionEntry = { session: undefined, id: undefined, subscriptions: new Set() };
    entries.add(entry);
    entry.session = await openSession({
      name,
      caps,
      service,
      catalog,
      subscriptions: {
        subscribe(uri) {
          counters.subscribeRequests += 1;
          if (!caps.subscribe) {
            throw new HandlerFailure({ kind: 'method-not-found', method: 'resources/subscribe' });
          }
          entry.subscriptions.add(uri);
        },
        unsubscribe(uri) {
          counters.unsubscribeRequests += 1;
          if (!caps.subscribe) {
            throw new HandlerFailure({ kind: 'method-not-found', method: 'resources/unsubscribe' });
          }
          entry.subscriptions.delete(uri);
        },
      },
      onInitialized(id) {
        entry.id = id;
        sessions.set(id, entry);
      },
      onClosed() {
        entries.delete(entry);
        if (entry.id !== undefined) sessions.delete(entry.id);
        entry.subscriptions.clear();
      },
      onError,
    });
    return entry;
  }

  function trackGet(res: ServerResponse): void {
    getStreams.add(res);
    res.once('close', () => getStreams.delete(res));
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (closed) {
      failExchange(res, 503, -32000, 'Server is shutting down');
      return;
    }
    let body: unknown;
    if (req.method === 'POST') {
      try {
        body = await readJsonBody(req);
      } catch {
        failExchange(res, 400, -32700, 'Parse error');
        return;
      }
      countMethods(counters, body);
    }
    const sessionId = headerValue(req, 'mcp-session-id');
    if (sessionId !== undefined) {
      const entry = sessions.get(sessionId);
      if (!entry?.session) {
        // What the usual 2025 wiring answers for an expired session (e.g. after a restart):
        // the spec tells the client to start over with a fresh initialize.
        failExchange(res, 404, -32001, 'Session not found');
        return;
      }
      if (req.method === 'GET') trackGet(res);
      await entry.session.handleRequest(req, res, body);
      return;
    }
    if (req.method === 'POST' && isInitializeRequest(body)) {
      const entry = await startSession();
      await entry.session?.handleRequest(req, res, body);
      if (entry.id === undefined) {
        // initialize was refused (bad params, wrong version): nothing will ever use this pair.
        entries.delete(entry);
        await entry.session?.close().catch(onError);
      }
      return;
    }
    // Includes the `server/discover` probe of auto-negotiating clients: this 400 is their cue
    // to fall back to initialize, as with any deployed 2025 server.
    failExchange(res, 400, -32000, 'Bad Request: No valid session ID provided');
  }

  return finishEndpoint({
    kind,
    store,
    counters,
    async handle(req, res) {
      try {
        await route(req, res);
      } catch (error) {
        onError(error);
        failExchange(res, 500, -32603, 'Internal server error');
      }
    },
    resourceUpdated(uri) {
      for (const entry of sessions.values()) {
        if (!entry.subscriptions.has(uri)) continue;
        entry.session?.sendResourceUpdated(uri).catch(onError);
      }
    },
    resourcesChanged() {
      if (!caps.listChanged) return;
      for (const entry of sessions.values())
        entry.session?.sendResourceListChanged().catch(onError);
    },
    toolsChanged() {
      // Both SDKs refuse to send it without the capability; not declared means not sent.
      if (!caps.tools) return;
      for (const entry of sessions.values()) entry.session?.sendToolListChanged().catch(onError);
    },
    promptsChanged() {
      if (!caps.prompts) return;
      for (const entry of sessions.values()) entry.session?.sendPromptListChanged().catch(onError);
    },
    subscribedUris() {
      return sortedUnique([...sessions.values()].flatMap((entry) => [...entry.subscriptions]));
    },
    openStreams() {
      // A GET the transport refused (405/409) also passes through here briefly; only an
      // accepted event stream counts.
      let open = 0;
      for (const res of getStreams) {
        if (res.headersSent && res.statusCode === 200 && !res.writableEnded) open += 1;
      }
      return open;
    },
    liveSessions() {
      return sessions.size;
    },
    dropStreams() {
      for (const res of [...getStreams]) {
        getStreams.delete(res);
        res.destroy();
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      const open = [...entries];
      entries.clear();
      sessions.clear();
      await Promise.all(open.map((entry) => entry.session?.close().catch(onError)));
      for (const res of getStreams) res.destroy();
      getStreams.clear();
    },
  });
}
