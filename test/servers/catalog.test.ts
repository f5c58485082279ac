// @vitest-environment node
/**
 * Tools, prompts and resource templates on the three test servers, seen through the same client
 * the package uses (auto era negotiation): declared capabilities, lists straight from the store
 * (paged too), list_changed delivery (modern: only on listen streams that asked for it), tool
 * calls and counters.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { eventually } from '../support/wait';
import {
  ResourceStore,
  SERVER_KINDS,
  type ServerKind,
  type StartServerOptions,
  type StoredPrompt,
  type StoredTemplate,
  type StoredTool,
  startServer,
  type TestServer,
} from './index';

const TOOLS: StoredTool[] = [
  {
    name: 'echo',
    title: 'Echo',
    description: 'says it back',
    inputSchema: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
  },
  { name: 'noop' },
  { name: 'third', description: 'the odd one out' },
];

const PROMPTS: StoredPrompt[] = [
  {
    name: 'greet',
    title: 'Greeting',
    description: 'says hello',
    arguments: [{ name: 'who', description: 'whom to greet', required: true }],
  },
  { name: 'plain' },
  { name: 'last', description: 'the last one' },
];

const TEMPLATES: StoredTemplate[] = [
  {
    uriTemplate: 'file:///{path}',
    name: 'file',
    title: 'Files',
    description: 'any file',
    mimeType: 'text/plain',
  },
  { uriTemplate: 'config://{name}', name: 'config' },
  { uriTemplate: 'user://{id}/profile', name: 'profile' },
];

function seededStore(): ResourceStore {
  const store = new ResourceStore([{ uri: 'config://app', name: 'app', text: 'v0' }]);
  store.setTools(TOOLS);
  store.setPrompts(PROMPTS);
  store.setTemplates(TEMPLATES);
  return store;
}

interface Connected {
  client: Client;
  toolChanges: number;
  promptChanges: number;
  resourceChanges: number;
}

const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  // Clients first: a server closing under a live client only produces noise.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function serve(kind: ServerKind, options: StartServerOptions = {}): Promise<TestServer> {
  const server = await startServer(kind, { store: seededStore(), ...options });
  cleanups.push(() => server.close());
  return server;
}

async function connect(server: TestServer): Promise<Connected> {
  const client = new Client(
    { name: 'catalog-test', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  const connected: Connected = { client, toolChanges: 0, promptChanges: 0, resourceChanges: 0 };
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    connected.toolChanges += 1;
  });
  client.setNotificationHandler('notifications/prompts/list_changed', () => {
    connected.promptChanges += 1;
  });
  client.setNotificationHandler('notifications/resources/list_changed', () => {
    connected.resourceChanges += 1;
  });
  client.onerror = () => {};
  const streamsBefore = server.openStreams();
  cleanups.push(() => client.close());
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  if (server.kind !== 'modern') {
    // Legacy pushes ride the session's GET stream, opened in the background after connect().
    await eventually(() =>
      expect(server.openStreams() > streamsBefore, 'the GET SSE stream').toBe(true),
    );
  }
  return connected;
}

/**
 * Where list_changed notifications can reach this client: a listen stream with `bits` on modern,
 * the session itself on legacy (nothing to do). Returns the honored filter on modern.
 */
async function receiveLists(
  server: TestServer,
  { client }: Connected,
  bits: { toolsListChanged?: boolean; promptsListChanged?: boolean },
): Promise<Record<string, unknown> | undefined> {
  if (server.kind !== 'modern') return undefined;
  const sub = await client.listen({ ...bits, resourcesListChanged: true });
  return sub.honoredFilter as Record<string, unknown>;
}

describe.each(SERVER_KINDS)('%s server catalog', (kind) => {
  const modern = kind === 'modern';

  it('declares tools and prompts with listChanged by default', async () => {
    const server = await serve(kind);
    const { client } = await connect(server);
    const declared = client.getServerCapabilities();
    expect(declared?.tools).toEqual({ listChanged: true });
    expect(declared?.prompts).toEqual({ listChanged: true });
    expect(declared?.resources).toMatchObject({ subscribe: true, listChanged: true });
  });

  it('lists a tool with its _meta and answers a read with the content _meta (MCP Apps)', async () => {
    const server = await serve(kind);
    const ui = { resourceUri: 'ui://app/view.html', visibility: ['app'] };
    server.setTools([{ name: 'show', _meta: { ui } }]);
    const csp = { connectDomains: ['https://api.example.com'] };
    server.addResource({
      uri: 'ui://app/view.html',
      name: 'view',
      mimeType: 'text/html;profile=mcp-app',
      text: '<!doctype html><p>view</p>',
      _meta: { ui: { csp } },
    });
    const { client } = await connect(server);
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'show')?._meta).toEqual({ ui });
    const read = await client.readResource({ uri: 'ui://app/view.html' });
    expect(read.contents[0]).toMatchObject({
      mimeType: 'text/html;profile=mcp-app',
      _meta: { ui: { csp } },
    });
  });

  it('declares neither when they are off, and still answers templates', async () => {
    const server = await serve(kind, { capabilities: { tools: false, prompts: false } });
    const { client } = await connect(server);
    const declared = client.getServerCapabilities();
    expect(declared).not.toHaveProperty('tools');
    expect(declared).not.toHaveProperty('prompts');
    expect(declared?.resources).toMatchObject({ subscribe: true, listChanged: true });
    // The server really has no handler: a raw request is refused as unknown. On modern the
    // JSON-RPC -32601 comes back with HTTP 404, which the client raises as an SdkHttpError.
    const refused = modern
      ? { code: 'CLIENT_HTTP_NOT_IMPLEMENTED', data: { status: 404 } }
      : { code: -32601 };
    await expect(client.request({ method: 'tools/list', params: {} })).rejects.toMatchObject(
      refused,
    );
    await expect(client.request({ method: 'prompts/list', params: {} })).rejects.toMatchObject(
      refused,
    );
    await expect(
      client.request({ method: 'tools/call', params: { name: 'echo', arguments: {} } }),
    ).rejects.toMatchObject(refused);
    // The client itself does not even ask when the capability is absent (and says so).
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    try {
      expect((await client.listTools()).tools).toEqual([]);
    } finally {
      debug.mockRestore();
    }
    const { resourceTemplates } = await client.listResourceTemplates(undefined, {
      cacheMode: 'bypass',
    });
    expect(resourceTemplates.map((t) => t.name)).toEqual(['file', 'config', 'profile']);
    expect(server.counters()).toMatchObject({
      toolListRequests: 0,
      promptListRequests: 0,
      templateListRequests: 1,
      toolCalls: 0,
    });
  });

  it("lists the store's tools, prompts and templates with their metadata", async () => {
    const server = await serve(kind);
    const { client } = await connect(server);
    const bypass = { cacheMode: 'bypass' } as const;
    const { tools } = await client.listTools(undefined, bypass);
    expect(tools).toEqual([
      { ...TOOLS[0] },
      { name: 'noop', inputSchema: { type: 'object' } },
      { name: 'third', description: 'the odd one out', inputSchema: { type: 'object' } },
    ]);
    const { prompts } = await client.listPrompts(undefined, bypass);
    expect(prompts).toEqual(PROMPTS);
    const { resourceTemplates } = await client.listResourceTemplates(undefined, bypass);
    expect(resourceTemplates).toEqual(TEMPLATES);
    // No cache hints of ours: the 2026 encoder stamps its defaults (ttlMs 0 = do not cache),
    // 2025 results have none.
    const again = await client.listTools(undefined, bypass);
    if (modern) expect(again).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
    else expect(again).not.toHaveProperty('ttlMs');
    expect(server.counters()).toMatchObject({
      toolListRequests: 2,
      promptListRequests: 1,
      templateListRequests: 1,
      listRequests: 0,
    });
    server.resetCounters();
    expect(server.counters()).toMatchObject({
      toolListRequests: 0,
      promptListRequests: 0,
      templateListRequests: 0,
    });
  });

  it('pages every list when pageSize is set', async () => {
    const server = await serve(kind, { pageSize: 2 });
    const { client } = await connect(server);
    const bypass = { cacheMode: 'bypass' } as const;
    // Without a cursor the client walks the pages itself: 3 entries in pages of 2.
    expect((await client.listTools(undefined, bypass)).tools.map((t) => t.name)).toEqual(
      TOOLS.map((t) => t.name),
    );
    expect((await client.listPrompts(undefined, bypass)).prompts.map((p) => p.name)).toEqual(
      PROMPTS.map((p) => p.name),
    );
    expect(
      (await client.listResourceTemplates(undefined, bypass)).resourceTemplates.map((t) => t.name),
    ).toEqual(TEMPLATES.map((t) => t.name));
    expect(server.counters()).toMatchObject({
      toolListRequests: 2,
      promptListRequests: 2,
      templateListRequests: 2,
    });
    // By hand: the first page carries the cursor of the second.
    const first = await client.request({ method: 'tools/list', params: {} });
    expect(first.tools.map((t) => t.name)).toEqual(['echo', 'noop']);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.listTools({ cursor: first.nextCursor }, bypass);
    expect(second.tools.map((t) => t.name)).toEqual(['third']);
    expect(second.nextCursor).toBeUndefined();
    await expect(client.listPrompts({ cursor: 'bogus' }, bypass)).rejects.toMatchObject({
      code: -32602,
    });
  });

  it('delivers tools and prompts list_changed and serves the new lists', async () => {
    const server = await serve(kind);
    const conn = await connect(server);
    const honored = await receiveLists(server, conn, {
      toolsListChanged: true,
      promptsListChanged: true,
    });
    if (modern) {
      expect(honored).toEqual({
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
      });
    }
    server.toolsChanged();
    await eventually(() => expect(conn.toolChanges === 1, 'tools list_changed').toBe(true));
    server.promptsChanged();
    await eventually(() => expect(conn.promptChanges === 1, 'prompts list_changed').toBe(true));

    server.setTools([{ name: 'fresh' }]);
    await eventually(() =>
      expect(conn.toolChanges === 2, 'tools list_changed from setTools').toBe(true),
    );
    const { tools } = await conn.client.listTools(undefined, { cacheMode: 'bypass' });
    expect(tools.map((t) => t.name)).toEqual(['fresh']);

    server.setPrompts([]);
    await eventually(() =>
      expect(conn.promptChanges === 2, 'prompts list_changed from setPrompts').toBe(true),
    );
    expect((await conn.client.listPrompts(undefined, { cacheMode: 'bypass' })).prompts).toEqual([]);

    server.setTemplates([{ uriTemplate: 'new://{x}', name: 'new' }]);
    await eventually(() =>
      expect(conn.resourceChanges === 1, 'resources list_changed from setTemplates').toBe(true),
    );
    const { resourceTemplates } = await conn.client.listResourceTemplates(undefined, {
      cacheMode: 'bypass',
    });
    expect(resourceTemplates).toEqual([{ uriTemplate: 'new://{x}', name: 'new' }]);
    expect(server.store.tools()).toEqual([{ name: 'fresh' }]);
    // Only the convenience calls and publishes, never a stray extra one.
    expect(conn.toolChanges).toBe(2);
    expect(conn.promptChanges).toBe(2);
  });

  it('does not deliver tools or prompts list_changed when they are off', async () => {
    const server = await serve(kind, { capabilities: { tools: false, prompts: false } });
    const conn = await connect(server);
    const honored = await receiveLists(server, conn, {
      toolsListChanged: true,
      promptsListChanged: true,
    });
    // The SDK narrows the acknowledged filter to the declared capabilities.
    if (modern) expect(honored).toEqual({ resourcesListChanged: true });
    server.toolsChanged();
    server.promptsChanged();
    server.setTools([{ name: 'fresh' }]);
    // Same stream, same order: once this marker is in, the others would have been too.
    server.resourcesChanged();
    await eventually(() =>
      expect(conn.resourceChanges === 1, 'the marker list_changed').toBe(true),
    );
    expect(conn.toolChanges).toBe(0);
    expect(conn.promptChanges).toBe(0);
  });

  it('calls stored tools and counts the calls', async () => {
    const server = await serve(kind);
    const { client } = await connect(server);
    const result = await client.callTool({ name: 'echo', arguments: { x: 1 } });
    expect(result.content).toEqual([{ type: 'text', text: 'called echo with {"x":1}' }]);
    expect(result.isError).toBeFalsy();
    const bare = await client.callTool({ name: 'noop' });
    expect(bare.content).toEqual([{ type: 'text', text: 'called noop with {}' }]);
    // An unknown tool gets what McpServer of that SDK would answer.
    const unknown = client.callTool({ name: 'nope', arguments: {} });
    if (kind === 'legacy-v1') {
      await expect(unknown).resolves.toEqual({
        content: [{ type: 'text', text: 'MCP error -32602: Tool nope not found' }],
        isError: true,
      });
    } else {
      await expect(unknown).rejects.toMatchObject({ code: -32602 });
    }
    expect(server.counters().toolCalls).toBe(3);
  });
});

describe('modern server catalog listen streams', () => {
  it('tools and prompts list_changed only reach streams that asked for them', async () => {
    const server = await serve('modern');
    const asked = await connect(server);
    const other = await connect(server);
    await asked.client.listen({ toolsListChanged: true, promptsListChanged: true });
    await other.client.listen({ resourcesListChanged: true });
    // A stream asking for tools only does not get prompts.
    const toolsOnly = await connect(server);
    await toolsOnly.client.listen({ toolsListChanged: true, resourcesListChanged: true });
    expect(server.openStreams()).toBe(3);
    server.toolsChanged();
    server.promptsChanged();
    server.resourcesChanged();
    await eventually(() =>
      expect(asked.toolChanges === 1 && asked.promptChanges === 1, 'asked stream').toBe(true),
    );
    await eventually(() =>
      expect(other.resourceChanges === 1, 'the marker on the other stream').toBe(true),
    );
    await eventually(() =>
      expect(toolsOnly.resourceChanges === 1, 'the marker on the tools-only stream').toBe(true),
    );
    expect(other.toolChanges).toBe(0);
    expect(other.promptChanges).toBe(0);
    expect(toolsOnly.toolChanges).toBe(1);
    expect(toolsOnly.promptChanges).toBe(0);
    expect(asked.resourceChanges).toBe(0);
    // A client with no listen stream at all gets nothing either.
    const idle = await connect(server);
    server.toolsChanged();
    await eventually(() =>
      expect(asked.toolChanges === 2, 'the second tools list_changed').toBe(true),
    );
    // It has no stream the server could have written to.
    expect(idle.toolChanges).toBe(0);
  });
});
