/**
 * A TCP relay to a Redis that can go silent: `freeze()` stops relaying on every connection open
 * at that moment, in both directions, without closing anything. That is what a network partition
 * (or a NAT that dropped the flow, or a hung Redis host) looks like to a client: its socket stays
 * open and writable, and no answer ever comes. Connections made after the freeze are relayed.
 */
import { type AddressInfo, createServer, Socket } from 'node:net';

const HOST = '127.0.0.1';

export interface StallProxy {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  /** Connections accepted so far. */
  accepted(): number;
  freeze(): void;
  close(): Promise<void>;
}

export async function startStallProxy(redisPort: number): Promise<StallProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let accepted = 0;
  const server = createServer((client) => {
    accepted += 1;
    const upstream = new Socket();
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    upstream.connect(redisPort, HOST, () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://${HOST}:${port}`,
    accepted: () => accepted,
    freeze() {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    close() {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
