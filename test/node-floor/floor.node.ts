/**
 * The package claims Node >= 20.3.0 (`engines`) for its server-side code. This runs that code on
 * Node 20.3.0 itself (test/node-floor/runtime, the `node` npm package), against the real test
 * servers and Redis of this process: driver.mjs over stdin/stdout. `npm run check:node-floor`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisServer } from '../scale/redisServer';
import type { TestServer } from '../servers';
import { ERA_CASES, start, text } from '../support/eras';

const NODE =
  process.env.NODE_FLOOR_BIN ??
  fileURLToPath(new URL('runtime/node_modules/.bin/node', import.meta.url));
const DRIVER = fileURLToPath(new URL('driver.mjs', import.meta.url));
const URI = 'config://app';

const servers = new Map<string, TestServer>();
let redis: RedisServer;
let child: ChildProcess | undefined;

beforeAll(async () => {
  for (const { kind } of ERA_CASES) {
    const server = await start(kind);
    server.store.upsert(text(URI, 'v1'));
    servers.set(kind, server);
  }
  redis = await RedisServer.start();
});

afterAll(async () => {
  child?.kill('SIGKILL');
  for (const server of servers.values()) await server.close();
  await redis?.stop();
});

it('the Node-side entries work on Node 20.3.0: /core against both eras, /server on Redis', async () => {
  const config = {
    servers: Object.fromEntries([...servers].map(([kind, server]) => [kind, server.url])),
    redisUrl: redis.url,
  };
  const driver = spawn(NODE, [DRIVER, JSON.stringify(config)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child = driver;
  const lines = createInterface({ input: driver.stdout as NodeJS.ReadableStream })[
    Symbol.asyncIterator
  ]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`the driver exited (${driver.exitCode})`);
    return JSON.parse(value as string);
  };

  expect(await next()).toEqual({ node: 'v20.3.0' });
  for (const { kind, era } of ERA_CASES) {
    expect(await next()).toEqual({ ready: kind, era });
    (servers.get(kind) as TestServer).setText(URI, 'v2');
    driver.stdin?.write('{}\n');
    expect(await next()).toEqual({ updated: kind, state: 'closed' });
  }
  expect(await next()).toEqual({ bus: { kind: 'resource_updated', uri: URI } });
  expect(await next()).toEqual({ done: true });
});
