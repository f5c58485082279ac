/**
 * A throwaway redis-server per test file: its own free loopback port, no persistence, killed in
 * afterAll. `stop()` / `start()` on the same port simulate an outage (a restart without
 * persistence loses every key, like a crashed cache node).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createServer, Socket } from 'node:net';
import { createClient } from 'redis';
import { afterAll, beforeAll } from 'vitest';
import { eventually } from '../support/wait';

const HOST = '127.0.0.1';

function findBinary(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path !== '' ? path : undefined;
}

export const REDIS_SERVER = findBinary();
export const SKIP_REASON = 'redis-server is not installed (apt-get install redis-server): skipped';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** PING over a raw socket: no client library state to clean up between attempts. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(200, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    socket.connect(port, HOST, () => socket.write('PING\r\n'));
  });
}

export class RedisServer {
  readonly port: number;
  #child: ChildProcess | undefined;

  private constructor(port: number) {
    this.port = port;
  }

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://${HOST}:${this.port}`;
  }

  async start(): Promise<void> {
    if (!REDIS_SERVER) throw new Error(SKIP_REASON);
    const child = spawn(
      REDIS_SERVER,
      ['--port', String(this.port), '--bind', HOST, '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.#child = child;
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode})`);
      if (!(await ping(this.port))) throw new Error('redis-server did not answer PING');
    });
  }

  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // SIGKILL: an outage, not a graceful shutdown (and no shutdown save to wait for).
    child.kill('SIGKILL');
    await exited;
  }

  /** A client for the test itself (admin commands, hostile writes). */
  async client() {
    const client = createClient({ url: this.url, socket: { reconnectStrategy: 50 } });
    client.on('error', () => {});
    await client.connect();
    return client;
  }
}

type AdminClient = Awaited<ReturnType<RedisServer['client']>>;

/**
 * A redis-server for the calling file's tests, with an admin client on it: started before them,
 * stopped after them. Its fields are set once the file's tests run.
 */
export function redisForFile(): { redis: RedisServer; admin: AdminClient } {
  const file = {} as { redis: RedisServer; admin: AdminClient };
  beforeAll(async () => {
    file.redis = await RedisServer.start();
    file.admin = await file.redis.client();
  });
  afterAll(async () => {
    file.admin?.destroy();
    await file.redis?.stop();
  });
  return file;
}

/** Kills every bus reading connection (`CLIENT SETNAME mcp-event-bus`); returns how many. */
export async function killBusConnections(admin: {
  sendCommand(args: string[]): Promise<unknown>;
}): Promise<number> {
  const ids = await busConnectionIds(admin);
  // One ID per CLIENT KILL: several ID filters in one call are ANDed.
  await Promise.all(ids.map((id) => admin.sendCommand(['CLIENT', 'KILL', 'ID', id])));
  return ids.length;
}

/** The ids of the bus reading connections (`CLIENT SETNAME mcp-event-bus`). */
export async function busConnectionIds(admin: { sendCommand(args: string[]): Promise<unknown> }) {
  const list = String(await admin.sendCommand(['CLIENT', 'LIST']));
  return list
    .split('\n')
    .filter((line) => / name=mcp-event-bus /.test(line))
    .map((line) => /^id=(\d+)/.exec(line)?.[1])
    .filter((id): id is string => id !== undefined);
}
