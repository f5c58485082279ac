// @vitest-environment node
/**
 * Proves the test servers behave like real MCP servers of each kind, using the same client the
 * package uses (auto era negotiation). If these fail, integration test failures elsewhere say
 * nothing about the package.
 */
import {
  Client,
  type McpSubscription,
  ResourceNotFoundError,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/wait';
import {
  ResourceStore,
  SERVER_KINDS,
  type ServerKind,
  type StartServerOptions,
  type StoredResource,
  startServer,
  type TestServer,
} from './index';

const APP = 'config://app';
const OTHER = 'config://other';
const BLOB = 'image://logo';

function seed(): StoredResource[] {
  return [
    {
      uri: APP,
      name: 'app',
      title: 'App config',
      description: 'the main config',
      mimeType: 'text/plain',
      text: 'v0',
      ttlMs: 5000,
      cacheScope: 'public',
      annotations: { lastModified: '2026-01-01T00:00:00Z', priority: 0.5, audience: ['user'] },
      size: 2,
    },
    { uri: OTHER, name: 'other', text: 'o0' },
    { uri: BLOB, name: 'logo', mimeType: 'image/png', blob: 'iVBORw0KGgo=' },
  ];
}

interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  updates: string[];
  listChanges: number;
}

const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  // Clients first: a server closing under a live client only produces noise.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function serve(kind: ServerKind, options: StartServerOptions = {}): Promise<TestServer> {
  const server = await startServer(kind, { store: new ResourceStore(seed()), ...options });
  cleanups.push(() => server.close());
  return server;
}

/**
 * undici (Node's fetch) can keep an idle pooled socket whose FIN it has not read yet; after a
 * server restart the first request written into it fails with "other side closed". Seen here
 * about 1 run in 15 under heavy CPU load, only for the first request of a brand-new client after
 * restart(). It is a client pool artefact (the package's reconnect must cope with it anyway),
 * so test setup retries exactly that once instead of being flaky.
 */
function isStalePooledSocket(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = (e as Error & { cause?: unknown }).cause) {
    if ((e as Error & { code?: unknown }).code === 'UND_ERR_SOCKET') return true;
  }
  return false;
}

async function connect(server: TestServer): Promise<Connected> {
  try {
    return await connectOnce(server);
  } catch (error) {
    if (!isStalePooledSocket(error)) throw error;
    return connectOnce(server);
  }
}

async function connectOnce(server: TestServer): Promise<Connected> {
  const client = new Client(
    { name: 'servers-test', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  const connected: Connected = {
    client,
    transport: new StreamableHTTPClientTransport(new URL(server.url)),
    updates: [],
    listChanges: 0,
  };
  client.setNotificationHandler('notifications/resources/updated', (n) => {
    connected.updates.push(n.params.uri);
  });
  client.setNotificationHandler('notifications/resources/list_changed', () => {
    connected.listChanges += 1;
  });
  // Drops and restarts are provoked on purpose here; their transport errors are expected.
  client.onerror = () => {};
  const streamsBefore = server.openStreams();
  cleanups.push(() => client.close());
  await client.connect(connected.transport);
  if (server.kind !== 'modern') {
    // A 2025 server can only push on the session's GET stream, which the client opens in the
    // background after connect() resolved: anything published before it is silently lost.
    await eventually(() =>
      expect(server.openStreams() > streamsBefore, 'the GET SSE stream').toBe(true),
    );
  }
  return connected;
}

interface Subscription {
  close(): Promise<void>;
  modern?: McpSubscription;
}

async function subscribe(
  server: TestServer,
  { client }: Connected,
  uris: string[],
): Promise<Subscription> {
  if (server.kind === 'modern') {
    const modern = await client.listen({ resourcesListChanged: true, resourceSubscriptions: uris });
    return { modern, close: () => modern.close() };
  }
  for (const uri of uris) await client.subscribeResource({ uri });
  return {
    async close() {
      for (const uri of uris) await client.unsubscribeResource({ uri });
    },
  };
}

async function readText(client: Client, uri: string): Promise<string | undefined> {
  const result = await client.readResource({ uri }, { cacheMode: 'bypass' });
  const content = result.contents[0];
  return content && 'text' in content ? content.text : undefined;
}

describe.each(SERVER_KINDS)('%s server', (kind) => {
  const modern = kind === 'modern';

  it('negotiates the right era and declares both resource capabilities', async () => {
    const server = await serve(kind);
    const { client } = await connect(server);
    expect(client.getProtocolEra()).toBe(modern ? 'modern' : 'legacy');
    expect(client.getServerCapabilities()?.resources).toMatchObject({
      subscribe: true,
      listChanged: true,
    });
  });

  it("lists the store's resources in insertion order with their metadata", async () => {
    const server = await serve(kind);
    const { client } = await connect(server);
    const { resources } = await client.listResources(undefined, { cacheMode: 'bypass' });
    expect(resources.map((r) => r.uri)).toEqual([APP, OTHER, BLOB]);
    expect(resources[0]).toMatchObject({
      name: 'app',
      title: 'App config',
      description: 'the main config',
      mimeType: 'text/plain',
      annotations: { lastModified: '2026-01-01T00:00:00Z', priority: 0.5, audience: ['user'] },
      size: 2,
    });
    expect(server.counters().listRequests).toBe(1);
  });

  it('pages the list when pageSize is set and rejects a bogus cursor', async () => {
    const server = await serve(kind, { pageSize: 2 });
    const { client } = await connect(server);
    // Without a cursor the client walks every page itself: 3 resources in pages of 2.
    const all = await client.listResources(undefined, { cacheMode: 'bypass' });
    expect(all.resources.map((r) => r.uri)).toEqual([APP, OTHER, BLOB]);
    expect(server.counters().listRequests).toBe(2);
    await expect(
      client.listResources({ cursor: 'bogus' }, { cacheMode: 'bypass' }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it('reads text and blob content and counts reads', async () => {
    const server = await serve(kind);
    const { client } = await connect(server);
    const result = await client.readResource({ uri: APP }, { cacheMode: 'bypass' });
    expect(result.contents).toEqual([{ uri: APP, mimeType: 'text/plain', text: 'v0' }]);
    if (modern) expect(result).toMatchObject({ ttlMs: 5000, cacheScope: 'public' });
    else expect(result).not.toHaveProperty('ttlMs');
    const blob = await client.readResource({ uri: BLOB }, { cacheMode: 'bypass' });
    expect(blob.contents).toEqual([{ uri: BLOB, mimeType: 'image/png', blob: 'iVBORw0KGgo=' }]);
    expect(server.store.reads(APP)).toBe(1);
    expect(server.store.reads()).toBe(2);
    expect(server.counters().reads).toBe(2);
  });

  it("answers an unknown URI with the SDK's native not-found error", async () => {
    const server = await serve(kind);
    const { client } = await connect(server);
    const error = await client
      .readResource({ uri: 'missing://nope' }, { cacheMode: 'bypass' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    // Every kind answers -32602; only the v2 SDK attaches data.uri, which is what lets the
    // client rebuild a ResourceNotFoundError. v1 (1.32.2) sends a bare InvalidParams.
    expect(error).toMatchObject({ code: -32602 });
    if (kind === 'legacy-v1') {
      expect(error).not.toBeInstanceOf(ResourceNotFoundError);
      expect(String((error as Error).message)).toContain('Resource missing://nope not found');
    } else {
      expect(error).toBeInstanceOf(ResourceNotFoundError);
      expect(error).toMatchObject({ data: { uri: 'missing://nope' } });
    }
    expect(server.store.reads('missing://nope')).toBe(1);
  });

  it('delivers updates for subscribed URIs only, and tracks subscriptions server-side', async () => {
    const server = await serve(kind);
    const conn = await connect(server);
    const sub = await subscribe(server, conn, [APP]);
    expect(server.subscribedUris()).toEqual([APP]);
    if (modern) expect(server.counters().listenRequests).toBe(1);
    else expect(server.counters().subscribeRequests).toBe(1);

    // Same stream, so order is preserved: once the second APP update is in, an OTHER update
    // would have been too.
    server.setText(APP, 'v1');
    server.resourceUpdated(OTHER);
    server.resourceUpdated(APP);
    await eventually(() => expect(conn.updates.length >= 2, 'two updates').toBe(true));
    expect(conn.updates).toEqual([APP, APP]);
    expect(await readText(conn.client, APP)).toBe('v1');

    await sub.close();
    await eventually(() =>
      expect(server.subscribedUris().length === 0, 'the subscription to go away').toBe(true),
    );
    if (!modern) expect(server.counters().unsubscribeRequests).toBe(1);
  });

  it('delivers list_changed and serves the new list', async () => {
    const server = await serve(kind);
    const conn = await connect(server);
    await subscribe(server, conn, [APP]);
    server.addResource({ uri: 'config://new', name: 'new', text: 'n0' });
    await eventually(() => expect(conn.listChanges === 1, 'list_changed').toBe(true));
    const { resources } = await conn.client.listResources(undefined, { cacheMode: 'bypass' });
    expect(resources.map((r) => r.uri)).toEqual([APP, OTHER, BLOB, 'config://new']);
    expect(server.removeResource('config://new')).toBe(true);
    await eventually(() => expect(conn.listChanges === 2, 'second list_changed').toBe(true));
  });

  it('dropStreams cuts the notification stream without stopping the server', async () => {
    const server = await serve(kind);
    const conn = await connect(server);
    const sub = await subscribe(server, conn, [APP]);
    expect(server.openStreams()).toBe(1);
    server.dropStreams();
    if (sub.modern) {
      await expect(sub.modern.closed).resolves.toBe('remote');
      await eventually(() =>
        expect(server.openStreams() === 0, 'the stream to be gone').toBe(true),
      );
      expect(server.subscribedUris()).toEqual([]);
    } else {
      // The session and its subscriptions outlive the stream; the client re-opens GET after
      // about a second (not awaited here).
      expect(server.openStreams()).toBe(0);
      expect(server.subscribedUris()).toEqual([APP]);
    }
    expect(await readText(conn.client, APP)).toBe('v0');
  });

  it('restart keeps the port and the store but loses live state', async () => {
    const server = await serve(kind);
    const conn = await connect(server);
    const sub = await subscribe(server, conn, [APP]);
    server.setText(APP, 'before restart');
    const port = server.port;
    await server.restart();
    expect(server.port).toBe(port);
    expect(server.url).toBe(`http://127.0.0.1:${port}/mcp`);
    expect(server.subscribedUris()).toEqual([]);
    expect(server.openStreams()).toBe(0);
    if (sub.modern) await expect(sub.modern.closed).resolves.toBe('remote');
    const fresh = await connect(server);
    expect(await readText(fresh.client, APP)).toBe('before restart');
    // Counters carry over restarts, so a test can diff them around one.
    expect(server.counters().reads).toBe(1);
  });

  it('a graceful restart ends modern listen streams with a result', async () => {
    const server = await serve(kind);
    const conn = await connect(server);
    const sub = await subscribe(server, conn, [APP]);
    await server.restart({ graceful: true });
    if (sub.modern) await expect(sub.modern.closed).resolves.toBe('graceful');
    const fresh = await connect(server);
    expect(await readText(fresh.client, APP)).toBe('v0');
  });

  it('does not declare subscribe when it is off', async () => {
    const server = await serve(kind, { capabilities: { subscribe: false } });
    const conn = await connect(server);
    const declared = conn.client.getServerCapabilities()?.resources;
    expect(declared?.subscribe).toBeFalsy();
    expect(declared?.listChanged).toBe(true);
    if (modern) {
      const sub = await conn.client.listen({
        resourcesListChanged: true,
        resourceSubscriptions: [APP],
      });
      // The SDK narrows the acknowledged filter to the declared capabilities.
      expect(sub.honoredFilter).toEqual({ resourcesListChanged: true });
      expect(server.subscribedUris()).toEqual([]);
      expect(server.openStreams()).toBe(1);
    } else {
      await expect(conn.client.subscribeResource({ uri: APP })).rejects.toMatchObject({
        code: -32601,
      });
      expect(server.counters().subscribeRequests).toBe(1);
      expect(server.subscribedUris()).toEqual([]);
    }
  });

  it('does not declare or deliver list_changed when it is off', async () => {
    const server = await serve(kind, { capabilities: { listChanged: false } });
    const conn = await connect(server);
    const declared = conn.client.getServerCapabilities()?.resources;
    expect(declared?.listChanged).toBeFalsy();
    expect(declared?.subscribe).toBe(true);
    const sub = await subscribe(server, conn, [APP]);
    if (sub.modern) expect(sub.modern.honoredFilter).toEqual({ resourceSubscriptions: [APP] });
    server.addResource({ uri: 'config://new', name: 'new', text: 'n0' });
    server.resourceUpdated(APP);
    await eventually(() => expect(conn.updates.length === 1, 'the marker update').toBe(true));
    expect(conn.listChanges).toBe(0);
  });

  it('failReads fails reads with the given error and leaves the store alone', async () => {
    const server = await serve(kind);
    const { client } = await connect(server);
    server.store.failReads(APP, { code: -32050, message: 'backend down' });
    const error = await client.readResource({ uri: APP }, { cacheMode: 'bypass' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: -32050 });
    expect(String((error as Error).message)).toContain('backend down');
    expect(server.store.get(APP)?.text).toBe('v0');
    expect(server.store.reads(APP)).toBe(1);
    server.store.failReads(APP, null);
    expect(await readText(client, APP)).toBe('v0');
  });

  it('the onRead hook can hold a read open', async () => {
    const server = await serve(kind);
    const { client } = await connect(server);
    const gate: { release?: () => void } = {};
    const held = new Promise<void>((resolve) => {
      gate.release = resolve;
    });
    const entered: string[] = [];
    server.store.onRead(async (uri) => {
      entered.push(uri);
      await held;
    });
    let settled = false;
    const pending = readText(client, APP).finally(() => {
      settled = true;
    });
    await eventually(() => expect(entered.length === 1, 'the read to reach the hook').toBe(true));
    server.setText(APP, 'changed while held');
    // Another request answered meanwhile: the held one still is not.
    await client.listResources();
    expect(settled).toBe(false);
    server.store.onRead(undefined);
    gate.release?.();
    // The outcome was fixed when the read arrived: a slow response carries old content.
    expect(await pending).toBe('v0');
    expect(await readText(client, APP)).toBe('changed while held');
  });
});

describe('modern server listen streams', () => {
  it('subscribedUris is the union over open streams only', async () => {
    const server = await serve('modern');
    const { client } = await connect(server);
    const a = await client.listen({ resourceSubscriptions: [APP, OTHER] });
    const b = await client.listen({ resourceSubscriptions: [OTHER, BLOB] });
    expect(server.subscribedUris()).toEqual([OTHER, APP, BLOB].sort());
    expect(server.openStreams()).toBe(2);
    await a.close();
    await eventually(() => expect(server.openStreams() === 1, 'one stream to close').toBe(true));
    expect(server.subscribedUris()).toEqual([OTHER, BLOB]);
    await b.close();
    await eventually(() => expect(server.openStreams() === 0, 'both streams to close').toBe(true));
    expect(server.counters().listenRequests).toBe(2);
  });

  it('an empty acknowledged filter ends the stream at once', async () => {
    const server = await serve('modern', {
      capabilities: { subscribe: false, listChanged: false },
    });
    const { client } = await connect(server);
    const sub = await client.listen({ resourcesListChanged: true, resourceSubscriptions: [APP] });
    expect(sub.honoredFilter).toEqual({});
    await expect(sub.closed).resolves.toBe('graceful');
  });
});

describe('legacy servers filter per session', () => {
  it.each(['legacy-v2', 'legacy-v1'] as const)('%s', async (kind) => {
    const server = await serve(kind);
    const one = await connect(server);
    const two = await connect(server);
    await one.client.subscribeResource({ uri: APP });
    await two.client.subscribeResource({ uri: OTHER });
    expect(server.subscribedUris()).toEqual([APP, OTHER]);
    expect(server.openStreams()).toBe(2);
    server.setText(OTHER, 'o1');
    server.setText(APP, 'v1');
    await eventually(() =>
      expect(one.updates.length === 1 && two.updates.length === 1, 'one update each').toBe(true),
    );
    expect(one.updates).toEqual([APP]);
    expect(two.updates).toEqual([OTHER]);
    // Ending a session (DELETE) drops its subscriptions; a client that just closes does not.
    await two.transport.terminateSession();
    expect(server.subscribedUris()).toEqual([APP]);
  });
});
