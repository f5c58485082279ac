/**
 * The plainest load balancer: each HTTP request goes to the next upstream in turn, no stickiness,
 * no buffering. This is what makes the listen stream and the change land on different instances.
 */
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Forwarder, RoundRobin } from '../servers/forwarder';

const HOST = '127.0.0.1';

export interface RoundRobinProxy {
  /** `http://127.0.0.1:<port>`, without a path. */
  origin: string;
  /** Requests forwarded to each upstream, by index. */
  hits: number[];
  /** Sends no more requests to upstream `index` (a load balancer draining an instance). */
  drain(index: number): void;
  close(): Promise<void>;
}

export async function startRoundRobinProxy(upstreams: string[]): Promise<RoundRobinProxy> {
  const hits = upstreams.map(() => 0);
  const turns = new RoundRobin(upstreams.length);
  const drained = new Set<number>();
  const forwarder = new Forwarder();
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    let index = turns.take();
    while (drained.has(index) && drained.size < upstreams.length) index = turns.take();
    hits[index] = (hits[index] ?? 0) + 1;
    forwarder.forward(req, res, upstreams[index] as string);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${HOST}:${port}`,
    hits,
    drain(index) {
      drained.add(index);
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      forwarder.close();
      await closed;
    },
  };
}
