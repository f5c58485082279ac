// @vitest-environment node
/**
 * The interactive tools of the three test servers (`StoredTool.elicit`, `sample`, `listRoots`,
 * `progress`, `fail`), seen through a bare SDK client: each era asks the way a real server of that
 * kind does (2026-07-28 `input_required`, 2025 server-to-client requests on the call's stream), and
 * reports what the client answered, failed or never answered.
 */
import {
  Client,
  type ClientCapabilities,
  ProtocolError,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { deferred } from '../support/deferred';
import { eventually } from '../support/wait';
import {
  ResourceStore,
  SERVER_KINDS,
  type ServerKind,
  startServer,
  type TestServer,
} from './index';

const FORM = {
  type: 'object' as const,
  properties: {
    name: { type: 'string', default: 'Ada' },
    age: { type: 'integer' },
  },
};

function store(): ResourceStore {
  const result = new ResourceStore();
  result.setTools([
    { name: 'ask', elicit: { message: 'Who are you?', requestedSchema: FORM } },
    { name: 'think', sample: { prompt: 'say hi' } },
    { name: 'where', listRoots: true },
    { name: 'slow', progress: 3 },
    { name: 'broken', fail: true },
    { name: 'plain' },
  ]);
  return result;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function serve(kind: ServerKind): Promise<TestServer> {
  const server = await startServer(kind, { store: store() });
  cleanups.push(() => server.close());
  return server;
}

async function connect(server: TestServer, capabilities: ClientCapabilities): Promise<Client> {
  const client = new Client(
    { name: 'interactive-test', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' }, capabilities },
  );
  client.onerror = () => {};
  cleanups.push(() => client.close());
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return client;
}

const textOf = (result: { content?: unknown }) =>
  (result.content as { type: string; text: string }[])[0]?.text;

const ALL: ClientCapabilities = {
  elicitation: { form: {} },
  sampling: {},
  roots: { listChanged: true },
};

describe.each(SERVER_KINDS)('interactive tools (%s)', (kind) => {
  it('an elicit tool answers with what the user accepted, declined or cancelled', async () => {
    const server = await serve(kind);
    const client = await connect(server, ALL);
    const answers = [
      { action: 'accept', content: { name: 'Grace', age: 36 } },
      { action: 'decline' },
      { action: 'cancel' },
    ] as const;
    const asked: unknown[] = [];
    let next = 0;
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params);
      return answers[next++] as never;
    });
    expect(textOf(await client.callTool({ name: 'ask' }))).toBe(
      'answered accept {"name":"Grace","age":36}',
    );
    expect(textOf(await client.callTool({ name: 'ask' }))).toBe('answered decline');
    expect(textOf(await client.callTool({ name: 'ask' }))).toBe('answered cancel');
    expect(asked[0]).toMatchObject({ message: 'Who are you?', requestedSchema: FORM });
    expect(server.store.asks().map((ask) => ask.outcome.kind)).toEqual([
      'result',
      'result',
      'result',
    ]);
    expect(server.store.pendingAsks()).toBe(0);
  });

  it('a sample tool answers with the model output, a roots tool with the roots', async () => {
    const server = await serve(kind);
    const client = await connect(server, ALL);
    client.setRequestHandler('sampling/createMessage', (request) => {
      const asked = request.params.messages[0]?.content as { text?: string } | undefined;
      return {
        role: 'assistant',
        model: 'test-model',
        content: { type: 'text', text: `hi (${asked?.text})` },
      };
    });
    client.setRequestHandler('roots/list', () => ({
      roots: [{ uri: 'file:///a', name: 'a' }, { uri: 'file:///b' }],
    }));
    expect(textOf(await client.callTool({ name: 'think' }))).toBe('sampled hi (say hi)');
    expect(textOf(await client.callTool({ name: 'where' }))).toBe(
      'roots ["file:///a","file:///b"]',
    );
  });

  it('a progress tool sends n progress notifications, then answers', async () => {
    const server = await serve(kind);
    const client = await connect(server, {});
    const seen: unknown[] = [];
    const result = await client.callTool(
      { name: 'slow', arguments: { x: 1 } },
      { onprogress: (progress) => seen.push(progress) },
    );
    expect(textOf(result)).toBe('called slow with {"x":1}');
    expect(seen).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
  });

  it('a fail tool answers isError', async () => {
    const server = await serve(kind);
    const client = await connect(server, {});
    const result = await client.callTool({ name: 'broken' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('failed broken');
  });

  it('asking a client that cannot answer fails the way the era says', async () => {
    const server = await serve(kind);
    const client = await connect(server, {});
    if (kind === 'modern') {
      // The server itself refuses to embed a request the client did not declare (-32021).
      const error = await client.callTool({ name: 'ask' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProtocolError);
      expect(error).toMatchObject({ code: -32021 });
    } else {
      // 2025: the request goes out; the client without a handler answers -32601.
      const result = await client.callTool({ name: 'ask' });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^elicitation\/create failed: -32601 /);
      expect(server.store.asks()[0]?.outcome).toMatchObject({ kind: 'error', code: -32601 });
    }
  });

  it.skipIf(kind === 'modern')(
    'a server that gives up on its question cancels it on the client',
    async () => {
      const server = await serve(kind);
      const client = await connect(server, ALL);
      const aborted = deferred<void>();
      client.setRequestHandler('elicitation/create', (_request, ctx) => {
        ctx.mcpReq.signal.addEventListener('abort', () => aborted.resolve());
        return new Promise(() => {}); // the user never answers
      });
      const call = client.callTool({ name: 'ask' });
      await eventually(() => expect(server.store.pendingAsks()).toBe(1));
      expect(server.store.cancelAsks()).toBe(1);
      await aborted.promise;
      const result = await call;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe('elicitation/create cancelled by the server');
      expect(server.store.asks()).toEqual([
        { tool: 'ask', method: 'elicitation/create', outcome: { kind: 'cancelled' } },
      ]);
    },
  );

  it('counts notifications/roots/list_changed (2025 only)', async () => {
    const server = await serve(kind);
    const client = await connect(server, ALL);
    if (kind === 'modern') {
      await expect(client.sendRootsListChanged()).rejects.toThrow();
      expect(server.counters().rootsListChanged).toBe(0);
      return;
    }
    await client.sendRootsListChanged();
    await client.sendRootsListChanged();
    await eventually(() => expect(server.counters().rootsListChanged).toBe(2));
  });
});
