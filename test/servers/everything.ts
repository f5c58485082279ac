/**
 * `@modelcontextprotocol/server-everything` (the reference server: completions, logging,
 * long-running operations with progress, prompts with arguments, 2025-11-25 tasks), started in
 * the test on 127.0.0.1.
 *
 * Its own Streamable HTTP mode (`dist/index.js streamableHttp`) is express listening on every
 * interface at `PORT`; a test binds to loopback only, so this hosts the same thing on node:http:
 * the package's `createServer()` per session, behind the v1 SDK's
 * `StreamableHTTPServerTransport`, routed by `Mcp-Session-Id` as its transport file does. Every
 * JSON-RPC message that arrives is counted by method (`methods`), which is how a test sees a
 * `notifications/cancelled` or a `logging/setLevel` reach the server.
 */
import { randomUUID } from 'node:crypto';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createServer } from '@modelcontextprotocol/server-everything/dist/server/index.js';
import { failExchange, headerValue, readJsonBody } from './protocol';

export interface EverythingServer {
  /** http://127.0.0.1:<port>/mcp */
  readonly url: string;
  /** JSON-RPC messages received, by method. */
  methods(): Record<string, number>;
  liveSessions(): number;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  close(): Promise<void>;
}

export async function startEverythingServer(): Promise<EverythingServer> {
  const sessions = new Map<string, Session>();
  const opening = new Set<Session>();
  const methods: Record<string, number> = {};
  const sockets = new Set<Socket>();

  async function open(): Promise<Session> {
    const { server, cleanup } = createServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, session);
        opening.delete(session);
      },
    });
    const session: Session = {
      transport,
      close: async () => {
        await server.close().catch(() => {});
      },
    };
    opening.add(session);
    server.server.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined) sessions.delete(id);
      opening.delete(session);
      cleanup(id);
    };
    await server.connect(transport);
    return session;
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if ((req.url ?? '/').split('?')[0] !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    let body: unknown;
    if (req.method === 'POST') {
      body = await readJsonBody(req);
      for (const message of Array.isArray(body) ? body : [body]) {
        const method = (message as { method?: unknown } | null)?.method;
        if (typeof method === 'string') methods[method] = (methods[method] ?? 0) + 1;
      }
    }
    const id = headerValue(req, 'mcp-session-id');
    const existing = id === undefined ? undefined : sessions.get(id);
    if (existing) {
      await existing.transport.handleRequest(req, res, body);
      return;
    }
    if (id === undefined && req.method === 'POST') {
      const session = await open();
      await session.transport.handleRequest(req, res, body);
      return;
    }
    // What its express host answers too (the SDK's discover probe falls back on it).
    failExchange(res, 400, -32000, 'Bad Request: No valid session ID provided');
  }

  const http = createHttpServer((req, res) => {
    route(req, res).catch(() => failExchange(res, 500, -32603, 'Internal server error'));
  });
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    methods: () => ({ ...methods }),
    liveSessions: () => sessions.size,
    async close() {
      const all = [...sessions.values(), ...opening];
      sessions.clear();
      opening.clear();
      await Promise.all(all.map((session) => session.close()));
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
