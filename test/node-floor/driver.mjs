/**
 * Runs on the lowest Node the package claims (test/node-floor/runtime: node 20.3.0), driven by
 * floor.node.ts over stdin/stdout, one JSON message a line. It uses the built package the way a
 * server-side user does: `mcp-react-query/core` against real servers (a resource read, an update
 * notified and read again, a clean dispose, per server), and `mcp-react-query/server`'s Redis
 * event bus (one event from one bus to another). Plain JavaScript: Node 20.3 runs no TypeScript.
 */
import { createInterface } from 'node:readline';
import { QueryClient, QueryObserver } from '@tanstack/query-core';
import { McpCacheSync, mcpDiagnostics } from 'mcp-react-query/core';
import { createRedisEventBus } from 'mcp-react-query/server';
import { createClient } from 'redis';

const { servers, redisUrl } = JSON.parse(process.argv[2] ?? '{}');
const URI = 'config://app';

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function receive() {
  const { value, done } = await lines.next();
  if (done) throw new Error('the test went away');
  return JSON.parse(value);
}

/** Resolves once `check()` is true; the test's own timeout bounds the wait. */
function when(subscribe, check) {
  return new Promise((resolve) => {
    if (check()) return resolve();
    const stop = subscribe(() => {
      if (!check()) return;
      stop();
      resolve();
    });
  });
}

async function core(name, url) {
  const queryClient = new QueryClient();
  const sync = new McpCacheSync({ queryClient, url, lingerMs: 20 });
  const unmount = sync.mount();
  const observer = new QueryObserver(queryClient, sync.resourceQueryOptions(URI));
  const text = () => observer.getCurrentResult().data?.contents[0]?.text;
  const stop = observer.subscribe(() => {});
  const diagnostics = mcpDiagnostics(sync);
  const covered = () => diagnostics.getSnapshot().resources[0]?.acknowledged === true;
  await when(observer.subscribe.bind(observer), () => text() === 'v1');
  await when(diagnostics.subscribe, covered);
  send({ ready: name, era: sync.getState().era });
  await receive(); // the test changed the text on the server
  await when(observer.subscribe.bind(observer), () => text() === 'v2');
  stop();
  unmount();
  await sync.dispose();
  queryClient.clear();
  send({ updated: name, state: sync.getState().status });
}

async function bus(url) {
  const clients = [createClient({ url }), createClient({ url })];
  for (const client of clients) {
    client.on('error', () => {});
    await client.connect();
  }
  const channel = `node-floor:${process.pid}`;
  const [a, b] = clients.map((redis) => createRedisEventBus({ redis, channel }));
  await Promise.all([a.ready(), b.ready()]);
  const heard = new Promise((resolve) => b.subscribe(resolve));
  a.publish({ kind: 'resource_updated', uri: URI });
  const event = await heard;
  await Promise.all([a.close(), b.close()]);
  for (const client of clients) client.destroy();
  send({ bus: event });
}

send({ node: process.version });
for (const [name, url] of Object.entries(servers ?? {})) await core(name, url);
if (redisUrl) await bus(redisUrl);
send({ done: true });
