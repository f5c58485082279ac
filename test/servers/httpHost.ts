/**
 * Hosts an McpEndpoint on node:http at 127.0.0.1/mcp. The host owns the port and the sockets;
 * the endpoint owns the MCP state. Keeping them apart is what makes `restart()` honest: the
 * port and the store survive, everything the old endpoint held (sessions, streams, a closed
 * modern handler that would only answer 500) is thrown away and rebuilt.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createGuard, type Guard, type ProtectionOptions } from './protectedResource';
import { addCounters, failExchange, newCounters } from './protocol';
import type {
  EndpointCounters,
  McpEndpoint,
  RequestRecord,
  RestartOptions,
  TestServer,
} from './types';

export const MCP_PATH = '/mcp';
const HOST = '127.0.0.1';

interface Listening {
  http: Server;
  sockets: Set<Socket>;
}

async function listen(
  endpoint: () => McpEndpoint,
  port: number,
  guard: Guard | undefined,
  log: RequestRecord[],
): Promise<Listening> {
  const sockets = new Set<Socket>();
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const header = (name: string) => {
      const value = req.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    log.push({
      method: req.method ?? 'GET',
      path,
      authorization: header('authorization'),
      sessionId: header('mcp-session-id'),
    });
    if (guard?.serveMetadata(path, req, res)) return;
    if (path !== MCP_PATH) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    if (guard && !(await guard.admit(req, res))) return;
    await endpoint().handle(req, res);
  };
  const http = createServer((req, res) => {
    serve(req, res).catch(() => failExchange(res, 500, -32603, 'Internal server error'));
  });
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, HOST, () => {
      http.off('error', reject);
      resolve();
    });
  });
  return { http, sockets };
}

async function stop(listening: Listening): Promise<void> {
  const closed = new Promise<void>((resolve) => listening.http.close(() => resolve()));
  // close() alone waits for keep-alive and streaming connections, which never end on their own.
  listening.http.closeAllConnections();
  for (const socket of listening.sockets) socket.destroy();
  await closed;
}

// Clients in this same process (tests) pool idle keep-alive sockets to us. Without a pause, the
// first request after a restart is routinely written into a pooled socket whose FIN the client
// has not processed yet and fails with "other side closed". The pause fixes the common case; a
// rare idle socket that is not reading at all only notices on its next use (see servers.test.ts).
const RESTART_SETTLE_MS = 50;

class HostedServer implements TestServer {
  readonly #make: () => McpEndpoint;
  readonly #guard: Guard | undefined;
  #endpoint: McpEndpoint;
  #listening: Listening | undefined;
  #port = 0;
  #previousCounters: EndpointCounters = newCounters();
  readonly #log: RequestRecord[] = [];
  #closed = false;

  constructor(make: () => McpEndpoint, protect: ProtectionOptions | undefined) {
    this.#make = make;
    this.#endpoint = make();
    this.#guard = protect && createGuard(protect, () => this.url);
  }

  get protection() {
    return this.#guard;
  }

  async open(port: number): Promise<void> {
    this.#listening = await listen(() => this.#endpoint, port, this.#guard, this.#log);
    this.#port = (this.#listening.http.address() as AddressInfo).port;
  }

  get port(): number {
    return this.#port;
  }
  get url(): string {
    return `http://${HOST}:${this.#port}${MCP_PATH}`;
  }
  get kind() {
    return this.#endpoint.kind;
  }
  get store() {
    return this.#endpoint.store;
  }

  handle: McpEndpoint['handle'] = (req, res) => this.#endpoint.handle(req, res);
  resourceUpdated = (uri: string) => this.#endpoint.resourceUpdated(uri);
  resourcesChanged = () => this.#endpoint.resourcesChanged();
  setText = (uri: string, text: string) => this.#endpoint.setText(uri, text);
  addResource: McpEndpoint['addResource'] = (resource) => this.#endpoint.addResource(resource);
  removeResource = (uri: string) => this.#endpoint.removeResource(uri);
  toolsChanged = () => this.#endpoint.toolsChanged();
  promptsChanged = () => this.#endpoint.promptsChanged();
  setTools: McpEndpoint['setTools'] = (tools) => this.#endpoint.setTools(tools);
  setPrompts: McpEndpoint['setPrompts'] = (prompts) => this.#endpoint.setPrompts(prompts);
  setTemplates: McpEndpoint['setTemplates'] = (templates) => this.#endpoint.setTemplates(templates);
  subscribedUris = () => this.#endpoint.subscribedUris();
  openStreams = () => this.#endpoint.openStreams();
  liveSessions = () => this.#endpoint.liveSessions();
  dropStreams = () => this.#endpoint.dropStreams();
  counters = () => addCounters(this.#previousCounters, this.#endpoint.counters());
  requests = () => [...this.#log];
  resetCounters = () => {
    this.#previousCounters = newCounters();
    this.#endpoint.resetCounters();
  };

  restart = async (options: RestartOptions = {}): Promise<void> => {
    if (this.#closed || !this.#listening) throw new Error('TestServer.restart: server is closed');
    const old = this.#endpoint;
    if (options.graceful) await old.close();
    await stop(this.#listening);
    if (!options.graceful) await old.close();
    this.#previousCounters = addCounters(this.#previousCounters, old.counters());
    this.#endpoint = this.#make();
    await new Promise((resolve) => setTimeout(resolve, RESTART_SETTLE_MS));
    await this.open(this.#port);
  };

  close = async (): Promise<void> => {
    if (this.#closed) return;
    this.#closed = true;
    await this.#endpoint.close();
    if (this.#listening) await stop(this.#listening);
  };
}

/**
 * Listens on 127.0.0.1 (port 0 picks a free one) and routes `/mcp` to the endpoint `make()`
 * builds. `make` is called again on every restart and must reuse the same store. With
 * `protect`, `/mcp` wants bearer tokens from that authorization server (`protectedResource.ts`).
 */
export function startHostedServer(
  make: () => McpEndpoint,
  options: { port?: number; protect?: ProtectionOptions | undefined } = {},
): Promise<TestServer> {
  const server = new HostedServer(make, options.protect);
  return server.open(options.port ?? 0).then(
    () => server,
    async (error: unknown) => {
      await server.close();
      throw error;
    },
  );
}
