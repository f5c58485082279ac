/**
 * One instance of a horizontally scaled 2026-07-28 server: its own `createMcpHandler` on its own
 * port and its own event bus, serving resources from a store that all instances share (the
 * stand-in for the deployment's database, so reads agree whichever instance answers).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  type McpHttpHandler,
  McpServer,
  type ServerEventBus,
} from '@modelcontextprotocol/server';
import { createResourceService, newCounters } from '../servers/protocol';
import type { ResourceStore } from '../servers/resourceStore';
import { installV2ResourceHandlers } from '../servers/v2Handlers';

const HOST = '127.0.0.1';

export interface Instance {
  name: string;
  /** `http://127.0.0.1:<port>`, without a path. */
  origin: string;
  handler: McpHttpHandler;
  /** `subscriptions/listen` streams open on this instance right now. */
  listenStreams(): number;
  close(): Promise<void>;
}

/** Counts the listen-stream listeners the SDK registers, whatever the bus behind them. */
function countingBus(inner: ServerEventBus): { bus: ServerEventBus; count: () => number } {
  let count = 0;
  return {
    count: () => count,
    bus: {
      publish: (event) => inner.publish(event),
      subscribe(listener) {
        count += 1;
        const off = inner.subscribe(listener);
        let live = true;
        return () => {
          if (!live) return;
          live = false;
          count -= 1;
          off();
        };
      },
    },
  };
}

export async function startInstance(options: {
  name: string;
  store: ResourceStore;
  bus: ServerEventBus;
  /** What the HTTP server serves instead of the handler itself (a Redis bus's `attach`). */
  serve?: (handler: McpHttpHandler) => McpHttpHandler;
}): Promise<Instance> {
  const { name, store } = options;
  const service = createResourceService(store, newCounters(), undefined);
  const { bus, count } = countingBus(options.bus);
  const handler = createMcpHandler(
    (ctx) => {
      const server = new McpServer(
        { name, version: '1.0.0' },
        // Without `subscribe: true` the SDK silently drops resourceSubscriptions from every ack.
        { capabilities: { resources: { subscribe: true, listChanged: true } } },
      );
      installV2ResourceHandlers(server, service, { cacheHints: ctx.era === 'modern' });
      return server;
    },
    { bus },
  );
  const serve = toNodeHandler(options.serve?.(handler) ?? handler);
  const sockets = new Set<Socket>();
  const http: Server = createServer((req, res) => {
    serve(req, res).catch(() => res.destroy());
  });
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(0, HOST, resolve));
  const { port } = http.address() as AddressInfo;
  return {
    name,
    origin: `http://${HOST}:${port}`,
    handler,
    listenStreams: count,
    async close() {
      await handler.close();
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
