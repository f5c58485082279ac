// @vitest-environment node
/**
 * Proves the test servers' issue-21 parts behave like real servers of each kind, with the bare
 * SDK client the package uses: `prompts/get` with arguments, `completion/complete`, log
 * messages at the level asked for (`logging/setLevel` on 2025, the request's `_meta` on
 * 2026-07-28), tool calls that hold until released and see the client's cancellation, and
 * 2025-11-25 tasks that outlive the session that started them.
 */
import {
  Client,
  LOG_LEVEL_META_KEY,
  type LoggingMessageNotification,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/wait';
import {
  ResourceStore,
  SERVER_KINDS,
  type ServerKind,
  type StartServerOptions,
  startServer,
  type TestServer,
} from './index';

const anything = {
  '~standard': { version: 1 as const, vendor: 'test', validate: (value: unknown) => ({ value }) },
};

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

function seeded(): ResourceStore {
  const store = new ResourceStore();
  store.setPrompts([
    {
      name: 'greet',
      arguments: [{ name: 'who', required: true }, { name: 'tone' }],
      text: 'Hello {who}, {tone}',
      completions: { who: ['Alice', 'Albert', 'Bob'] },
    },
  ]);
  store.setTemplates([
    { uriTemplate: 'file:///{path}', name: 'file', completions: { path: ['a.txt', 'b.txt'] } },
  ]);
  store.setTools([
    {
      name: 'chatty',
      log: [
        { level: 'debug', data: 'noise' },
        { level: 'error', data: 'bad' },
      ],
    },
    { name: 'slow', progress: 1, hold: true },
    { name: 'job', hold: true, taskSupport: 'optional' },
  ]);
  return store;
}

async function serve(kind: ServerKind, options: StartServerOptions = {}): Promise<TestServer> {
  const server = await startServer(kind, { store: seeded(), ...options });
  cleanups.push(() => server.close());
  return server;
}

async function connect(server: TestServer): Promise<{ client: Client; logs: unknown[] }> {
  const client = new Client(
    { name: 'extras-test', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  const logs: unknown[] = [];
  client.setNotificationHandler('notifications/message', (notification) => {
    logs.push((notification as LoggingMessageNotification).params.data);
  });
  client.onerror = () => {};
  cleanups.push(() => client.close());
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return { client, logs };
}

describe.each(SERVER_KINDS)('%s server: prompts, completions, logs, cancellation', (kind) => {
  const modern = kind === 'modern';

  it('declares completions and logging, and answers prompts/get with the arguments', async () => {
    const server = await serve(kind);
    const { client } = await connect(server);
    expect(client.getServerCapabilities()).toMatchObject({ completions: {}, logging: {} });
    const result = await client.getPrompt({ name: 'greet', arguments: { who: 'Ann', tone: 'hi' } });
    expect(result.messages[0]?.content).toEqual({ type: 'text', text: 'Hello Ann, hi' });
    await expect(client.getPrompt({ name: 'greet', arguments: {} })).rejects.toMatchObject({
      code: -32602,
    });
    expect(server.counters().promptGets).toBe(2);
  });

  it('completes prompt arguments and template variables by prefix', async () => {
    const server = await serve(kind);
    const { client } = await connect(server);
    const prompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'greet' },
      argument: { name: 'who', value: 'al' },
    });
    expect(prompt.completion.values).toEqual(['Alice', 'Albert']);
    const template = await client.complete({
      ref: { type: 'ref/resource', uri: 'file:///{path}' },
      argument: { name: 'path', value: 'b' },
    });
    expect(template.completion.values).toEqual(['b.txt']);
  });

  it('sends a tool’s log messages at the level the client asked for', async () => {
    const server = await serve(kind);
    const { client, logs } = await connect(server);
    if (modern) {
      // 2026-07-28: per request, in `_meta`; none without it.
      await client.callTool({ name: 'chatty', _meta: { [LOG_LEVEL_META_KEY]: 'warning' } });
      await client.callTool({ name: 'chatty' });
    } else {
      await client.setLoggingLevel('warning');
      await client.callTool({ name: 'chatty' });
      expect(server.counters().setLevelRequests).toBe(1);
    }
    await eventually(() => expect(logs).toEqual(['bad']));
  });

  it('a held tool call sees the client cancel it', async () => {
    const server = await serve(kind);
    const { client } = await connect(server);
    const controller = new AbortController();
    const call = client.callTool({ name: 'slow' }, { signal: controller.signal });
    call.catch(() => {});
    await eventually(() => expect(server.store.extras.held()).toBe(1));
    controller.abort('stop');
    await expect(call).rejects.toThrow();
    await eventually(() => expect(server.store.extras.cancelledCalls).toEqual(['slow']));
    if (!modern) expect(server.counters().methods['notifications/cancelled']).toBe(1);
  });

  it('does not declare tasks (unless a legacy-v1 server is asked to), nor completions and logging when off', async () => {
    const server = await serve(kind, {
      capabilities: { completions: false, logging: false, tasks: kind !== 'legacy-v1' },
    });
    const { client } = await connect(server);
    const declared = client.getServerCapabilities();
    expect(declared).not.toHaveProperty('tasks');
    expect(declared).not.toHaveProperty('completions');
    expect(declared).not.toHaveProperty('logging');
  });
});

describe.each(['legacy-v1'] as const)('%s server: 2025-11-25 tasks', (kind) => {
  it('runs a tool call as a task, found again from another session', async () => {
    const server = await serve(kind, { capabilities: { tasks: true } });
    const first = await connect(server);
    expect(first.client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const created = (await first.client.request(
      { method: 'tools/call', params: { name: 'job', task: { ttl: 60_000 } } },
      anything,
    )) as { task: { taskId: string; status: string } };
    expect(created.task.status).toBe('working');
    const { taskId } = created.task;
    await first.client.close();

    const second = await connect(server);
    const get = () =>
      second.client.request({ method: 'tasks/get', params: { taskId } }, anything) as Promise<{
        status: string;
      }>;
    expect((await get()).status).toBe('working');
    const listed = (await second.client.request(
      { method: 'tasks/list', params: {} },
      anything,
    )) as { tasks: { taskId: string }[] };
    expect(listed.tasks.map((task) => task.taskId)).toEqual([taskId]);
    expect(server.store.extras.release()).toBe(1);
    await eventually(async () => expect((await get()).status).toBe('completed'));
    const result = (await second.client.request(
      { method: 'tasks/result', params: { taskId } },
      anything,
    )) as { content: { text: string }[] };
    expect(result.content[0]?.text).toBe('called job with {}');
  });

  it('cancels a working task, and refuses to cancel it twice', async () => {
    const server = await serve(kind, { capabilities: { tasks: true } });
    const { client } = await connect(server);
    const { task } = (await client.request(
      { method: 'tools/call', params: { name: 'job', task: {} } },
      anything,
    )) as { task: { taskId: string } };
    const cancel = () =>
      client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, anything);
    expect(await cancel()).toMatchObject({ status: 'cancelled' });
    await eventually(() => expect(server.store.extras.cancelledCalls).toEqual(['job']));
    await expect(cancel()).rejects.toMatchObject({ code: -32602 });
  });
});
