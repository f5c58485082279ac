/**
 * One instance of the scaled 2026-07-28 demo server: its own `createMcpHandler` with its own
 * event bus, on its own loopback port, serving `/mcp` and the control API's changes (`/demo/*`).
 * Data comes from the store every instance shares (the stand-in for a deployment's database), so
 * reads agree wherever they land; change notifications reach another instance's listen streams
 * only through the bus.
 *
 * Built like `test/scale/instance.ts`, plus what the dashboard shows: which listen streams are
 * open here and for which URIs, reads served, changes handled, events published and received.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  type McpHandlerRequestOptions,
  type McpHttpHandler,
  McpServer,
  type ServerEventBus,
} from '@modelcontextprotocol/server';
import type { ResourceStore } from '../../test/servers/index';
import {
  createCatalogService,
  createResourceService,
  failExchange,
  newCounters,
  resolveCapabilities,
  sortedUnique,
} from '../../test/servers/protocol';
import {
  installV2CatalogHandlers,
  installV2ResourceHandlers,
  v2Capabilities,
} from '../../test/servers/v2Handlers';
import { ENDPOINTS, type InstanceView } from '../shared/demo';
import type { Publisher } from './demoServer';

const HOST = '127.0.0.1';
const LISTEN_METHOD = 'subscriptions/listen';

/** An instance's bus and what the dashboard can ask it. */
export interface BusHandle {
  bus: ServerEventBus;
  /** Events other instances published that reached this one. */
  fromOthers(): number;
  /** Redis: the reading connection is up; `null` for an in-memory bus. */
  connected(): boolean | null;
  /** The handler to serve: Redis ends its listen streams after a gap (clients then re-read). */
  attach(handler: McpHttpHandler): McpHttpHandler;
  close(): Promise<void>;
}

interface ListenStream {
  res: ServerResponse;
  uris: string[];
}

/** The method and listen filter of a JSON-RPC POST, read from a clone (the SDK reads the body). */
async function peek(request: Request): Promise<{ method?: string; uris: string[] }> {
  if (request.method !== 'POST') return { uris: [] };
  try {
    const body = (await request.clone().json()) as {
      method?: unknown;
      params?: { notifications?: { resourceSubscriptions?: unknown } };
    };
    const method = typeof body?.method === 'string' ? body.method : undefined;
    const uris = body?.params?.notifications?.resourceSubscriptions;
    return {
      method,
      uris: Array.isArray(uris) ? uris.filter((u): u is string => typeof u === 'string') : [],
    };
  } catch {
    return { uris: [] };
  }
}

export type ControlRoute = (
  instance: DemoInstance,
  req: IncomingMessage,
  res: ServerResponse,
) => Promise<void>;

export class DemoInstance {
  readonly name: string;
  readonly handler: McpHttpHandler;
  /** Publishes on this instance's bus only (what `handler.notify` does). */
  readonly publisher: Publisher;
  readonly #busHandle: BusHandle;
  readonly #counters = newCounters();
  readonly #streams = new Set<ListenStream>();
  readonly #sockets = new Set<Socket>();
  readonly #http: Server;
  #origin = '';
  #published = 0;
  #changesHandled = 0;

  private constructor(options: { name: string; store: ResourceStore; bus: BusHandle }) {
    this.name = options.name;
    this.#busHandle = options.bus;
    const inner = options.bus.bus;
    const bus: ServerEventBus = {
      publish: (event) => {
        this.#published += 1;
        inner.publish(event);
      },
      subscribe: (listener) => inner.subscribe(listener),
    };
    const caps = resolveCapabilities(undefined);
    const service = createResourceService(options.store, this.#counters, undefined);
    const catalog = createCatalogService(options.store, this.#counters, undefined);
    this.handler = options.bus.attach(
      createMcpHandler(
        (ctx) => {
          // Without `subscribe: true` the SDK silently drops resourceSubscriptions from every ack.
          const server = new McpServer(
            { name: `playground-${this.name}`, version: '1.0.0' },
            { capabilities: v2Capabilities(caps) },
          );
          installV2ResourceHandlers(server, service, { cacheHints: ctx.era === 'modern' });
          installV2CatalogHandlers(server, catalog, caps);
          return server;
        },
        { bus },
      ),
    );
    this.publisher = {
      resourceUpdated: (uri) => this.handler.notify.resourceUpdated(uri),
      resourcesChanged: () => this.handler.notify.resourcesChanged(),
    };
    this.#http = createServer();
    this.#http.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(options: {
    name: string;
    store: ResourceStore;
    bus: BusHandle;
    control: ControlRoute;
  }): Promise<DemoInstance> {
    const instance = new DemoInstance(options);
    instance.#http.on('request', (req, res) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (path === ENDPOINTS.modern.path) void instance.#serveMcp(req, res);
      else if (path.startsWith('/demo/')) void options.control(instance, req, res);
      else failExchange(res, 404, -32601, `no route ${path} on ${instance.name}`);
    });
    await new Promise<void>((resolve) => instance.#http.listen(0, HOST, resolve));
    const { port } = instance.#http.address() as AddressInfo;
    instance.#origin = `http://${HOST}:${port}`;
    return instance;
  }

  get origin(): string {
    return this.#origin;
  }

  changeHandled(): void {
    this.#changesHandled += 1;
  }

  view(): InstanceView {
    return {
      name: this.name,
      origin: this.#origin,
      listenStreams: this.#streams.size,
      subscribedUris: sortedUnique([...this.#streams].flatMap((stream) => stream.uris)),
      reads: this.#counters.reads,
      changesHandled: this.#changesHandled,
      published: this.#published,
      fromOthers: this.#busHandle.fromOthers(),
      busConnected: this.#busHandle.connected(),
    };
  }

  /** Cuts this instance's listen streams like a network drop. */
  dropStreams(): void {
    for (const stream of [...this.#streams]) {
      this.#streams.delete(stream);
      stream.res.destroy();
    }
  }

  async close(): Promise<void> {
    await this.handler.close();
    const closed = new Promise<void>((resolve) => this.#http.close(() => resolve()));
    this.#http.closeAllConnections();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
    await this.#busHandle.close();
  }

  async #serveMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A fresh adapter per exchange, so the fetch face knows which Node response a listen
    // stream is written to (dropStreams needs that socket).
    const adapter = toNodeHandler({
      fetch: (request: Request, options?: McpHandlerRequestOptions) =>
        this.#observe(request, options, res),
    });
    try {
      await adapter(req, res);
    } catch {
      failExchange(res, 500, -32603, 'Internal server error');
    }
  }

  async #observe(
    request: Request,
    options: McpHandlerRequestOptions | undefined,
    res: ServerResponse,
  ): Promise<Response> {
    const { method, uris } = await peek(request);
    const response = await this.handler.fetch(request, options);
    const isStream = response.headers.get('content-type')?.startsWith('text/event-stream');
    if (method === LISTEN_METHOD && isStream) {
      // Honoured as asked: the handler declares `resources.subscribe`.
      const stream: ListenStream = { res, uris };
      this.#streams.add(stream);
      res.once('close', () => this.#streams.delete(stream));
    }
    return response;
  }
}
