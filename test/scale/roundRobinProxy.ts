/**
 * The plainest load balancer: each HTTP request goes to the next upstream in turn, no stickiness,
 * no buffering (an SSE listen stream is piped through chunk by chunk). This is what makes the
 * listen stream and the change land on different instances.
 */
import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

const HOST = '127.0.0.1';
// Hop-by-hop headers belong to one connection, not to the message being forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())),
  );
}

export interface RoundRobinProxy {
  /** `http://127.0.0.1:<port>`, without a path. */
  origin: string;
  /** Requests forwarded to each upstream, by index. */
  hits: number[];
  close(): Promise<void>;
}

export async function startRoundRobinProxy(upstreams: string[]): Promise<RoundRobinProxy> {
  const targets = upstreams.map((origin) => new URL(origin));
  const hits = targets.map(() => 0);
  const agent = new Agent({ keepAlive: true });
  const sockets = new Set<Socket>();
  let next = 0;

  function forward(req: IncomingMessage, res: ServerResponse): void {
    const index = next;
    next = (next + 1) % targets.length;
    hits[index] = (hits[index] ?? 0) + 1;
    const target = targets[index] as URL;
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...endToEnd(req.headers), host: target.host },
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        // Headers first, so a stream whose first frame comes later is already open.
        res.flushHeaders();
        answer.pipe(res);
        answer.once('error', () => res.destroy());
      },
    );
    upstream.once('error', () => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502).end();
    });
    // The client went away (a closed listen stream): end the upstream exchange with it.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  const server = createServer(forward);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${HOST}:${port}`,
    hits,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      agent.destroy();
      await closed;
    },
  };
}
