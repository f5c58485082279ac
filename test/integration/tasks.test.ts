/** @vitest-environment jsdom */
/**
 * Tasks (issue 21, the 2025-11-25 revision): on the v1 server that runs tool calls as tasks,
 * the reference server, and servers that do not (2026-07-28, the v2 2025 server, a v1 server
 * without them). A task is started, followed (polled, or at once on
 * `notifications/tasks/status`), its result fetched once, cancelled, listed; it survives a
 * reload and a tab handover, its id kept in storage per server and identity. (jsdom: TanStack
 * polls — `refetchInterval` — only where there is a window, as in the browser.)
 */
import { QueryClient, QueryObserver } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { internalsOf } from '../../src/core/internals';
import { McpCacheSync, type McpCacheSyncOptions } from '../../src/core/mcpCacheSync';
import {
  cancelTask,
  startTask,
  type TaskData,
  type TaskStorage,
  taskBook,
  taskListQueryOptions,
  taskQueryOptions,
} from '../../src/core/tasks';
import { shareAcrossTabs } from '../../src/tabs';
import { type ServerKind, startTamperProxy, type TestServer } from '../servers';
import { startEverythingServer } from '../servers/everything';
import { deferred } from '../support/deferred';
import { start } from '../support/eras';
import { BrowserLocks, tabChannels } from '../support/tabs';
import { eventually, idle } from '../support/wait';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

/** One origin's localStorage, shared by its tabs. */
function memoryStorage(): TaskStorage & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    getItem: (key) => data.get(key) ?? null,
    setItem: (key, value) => void data.set(key, value),
  };
}

async function serve(kind: ServerKind = 'legacy-v1', tasks = true): Promise<TestServer> {
  const server = await start(kind, { capabilities: { tasks } });
  server.store.setTools([
    { name: 'job', hold: true, taskSupport: 'optional' },
    { name: 'quick', taskSupport: 'optional' },
  ]);
  cleanups.push(() => server.close());
  return server;
}

function open(url: string, storage: TaskStorage, options: Partial<McpCacheSyncOptions> = {}) {
  const queryClient = new QueryClient();
  const sync = new McpCacheSync({ queryClient, url, ...options });
  const release = sync.mount();
  const book = taskBook(sync, { storage });
  const close = async () => {
    release();
    await sync.dispose();
    queryClient.clear();
  };
  cleanups.push(close);
  return { sync, queryClient, book, close };
}

/** What `useTasks` does for one task: an observer polling its query. */
function follow(sync: McpCacheSync, taskId: string) {
  const observer = new QueryObserver<TaskData>(
    sync.queryClient,
    taskQueryOptions(taskId, { scope: sync.keys.scope }),
  );
  cleanups.push(observer.subscribe(() => {}));
  return () => observer.getCurrentResult();
}

describe('tasks on a server that runs tool calls as tasks (legacy-v1)', () => {
  it('a task is started, followed to its end, and its result fetched once', async () => {
    const server = await serve();
    const { sync, book } = open(server.url, memoryStorage());
    const task = await startTask(sync, { name: 'job', arguments: { n: 1 }, ttlMs: 60_000 });
    expect(task.status).toBe('working');
    expect(book.list().map((entry) => [entry.taskId, entry.name])).toEqual([[task.taskId, 'job']]);
    const result = follow(sync, task.taskId);
    await eventually(() =>
      expect(server.counters().methods['tasks/get']).toBeGreaterThanOrEqual(2),
    );
    expect(result().data?.task.status).toBe('working');
    expect(server.store.extras.release()).toBe(1);
    await eventually(() => expect(result().data?.task.status).toBe('completed'));
    expect(result().data?.result?.content).toEqual([
      { type: 'text', text: 'called job with {"n":1}' },
    ]);
    // Ended: no more polling, and asking again answers from what was fetched.
    await sync.queryClient.refetchQueries({ queryKey: sync.keys.task(task.taskId) });
    await idle(sync.queryClient);
    expect(server.counters().methods['tasks/result']).toBe(1);
  });

  it('a status notification is acted on at once, without waiting for the next poll', async () => {
    const server = await serve();
    server.store.extras.taskNotifications = true;
    server.store.extras.taskPollInterval = 60_000;
    const { sync } = open(server.url, memoryStorage());
    const task = await startTask(sync, { name: 'job' });
    const result = follow(sync, task.taskId);
    await eventually(() => expect(result().data?.task.pollInterval).toBe(60_000));
    server.store.extras.release();
    await eventually(() => expect(result().data?.result).toBeDefined());
    expect(result().data?.task.status).toBe('completed');
  });

  it('status notifications that come while tasks/get is in flight cost one tasks/get after it, not one each (rule 3)', async () => {
    const server = await serve();
    server.store.extras.taskPollInterval = 60_000;
    const proxy = await startTamperProxy(server.url);
    cleanups.push(() => proxy.close());
    const { sync } = open(proxy.url, memoryStorage());
    const task = await startTask(sync, { name: 'job' });
    const result = follow(sync, task.taskId);
    await eventually(() => expect(result().data?.task.pollInterval).toBe(60_000));
    await idle(sync.queryClient);
    const before = proxy.stats('tasks/get').requests;
    let notified = 0;
    cleanups.push(
      internalsOf(sync).events.bus.subscribe((event) => {
        if (event.type === 'task') notified += 1;
      }),
    );
    const answer = deferred();
    proxy.setRules({
      hold: (exchange) => (exchange.method === 'tasks/get' ? answer.promise : undefined),
    });
    const status = {
      jsonrpc: '2.0' as const,
      method: 'notifications/tasks/status',
      params: { taskId: task.taskId, status: 'working' },
    };
    proxy.inject(status);
    await eventually(() => expect(proxy.stats('tasks/get').inFlight).toBe(1));
    // One at a time, each handled and a ping's round trip let pass before the next, so that a
    // read restarted for each (as TanStack's invalidateQueries does) would reach the wire: a
    // storm slower than one chunk, faster than the server answers.
    const client = await internalsOf(sync).upstream.client();
    for (let i = 2; i <= 30; i++) {
      proxy.inject(status);
      await eventually(() => expect(notified).toBe(i));
      await client.ping();
    }
    // The task ends while the read is held (answered "working"): the read after it sees that.
    server.store.extras.release();
    proxy.setRules(undefined);
    answer.resolve();
    await eventually(() => expect(result().data?.task.status).toBe('completed'));
    await idle(sync.queryClient);
    expect(proxy.stats('tasks/get').requests - before).toBe(2);
    expect(proxy.stats('notifications/cancelled').requests).toBe(0);
  });

  it('cancel sends tasks/cancel; the task ends cancelled and the tool is stopped', async () => {
    const server = await serve();
    const { sync } = open(server.url, memoryStorage());
    const task = await startTask(sync, { name: 'job' });
    const result = follow(sync, task.taskId);
    await cancelTask(sync, task.taskId);
    expect(server.counters().methods['tasks/cancel']).toBe(1);
    await eventually(() => expect(result().data?.task.status).toBe('cancelled'));
    await eventually(() => expect(server.store.extras.cancelledCalls).toEqual(['job']));
  });

  it("tasks are listed (tasks/list), the server's own view", async () => {
    const server = await serve();
    const { sync, queryClient } = open(server.url, memoryStorage());
    const a = await startTask(sync, { name: 'job' });
    const b = await startTask(sync, { name: 'quick' });
    const listed = await queryClient.fetchQuery(taskListQueryOptions());
    expect(listed.map((task) => task.taskId).sort()).toEqual([a.taskId, b.taskId].sort());
  });

  it('a task survives a reload: the next page finds its id and picks up the result', async () => {
    const server = await serve();
    const storage = memoryStorage();
    const first = open(server.url, storage);
    const task = await startTask(first.sync, { name: 'job' });
    await first.close();
    server.store.extras.release();
    const reloaded = open(server.url, storage);
    const [stored] = reloaded.book.list();
    expect(stored?.taskId).toBe(task.taskId);
    const result = follow(reloaded.sync, task.taskId);
    await eventually(() => expect(result().data?.task.status).toBe('completed'));
    expect(result().data?.result?.content).toEqual([{ type: 'text', text: 'called job with {}' }]);
  });

  it('a task is picked up by the next leading tab when the one that started it closes', async () => {
    const server = await serve();
    const storage = memoryStorage();
    const locks = new BrowserLocks();
    const tab = () => {
      const { locks: tabLocks } = locks.tab();
      const channels = tabChannels();
      cleanups.push(() => channels.closeAll());
      return open(server.url, storage, {
        shareAcrossTabs: shareAcrossTabs({
          locks: tabLocks,
          channel: channels.open,
          livenessMs: 100,
        }),
        lingerMs: 10,
      });
    };
    const leader = tab();
    const task = await startTask(leader.sync, { name: 'job' });
    const follower = tab();
    expect(follower.book.list().map((entry) => entry.taskId)).toEqual([task.taskId]);
    const result = follow(follower.sync, task.taskId);
    await eventually(() => expect(result().data?.task.status).toBe('working'));
    const sessionsBefore = server.counters().methods.initialize ?? 0;
    await leader.close();
    // The follower leads now, on a connection (and, on 2025, a session) of its own.
    await eventually(() => expect(server.counters().methods.initialize).toBe(sessionsBefore + 1));
    server.store.extras.release();
    await eventually(() => expect(result().data?.task.status).toBe('completed'));
    expect(result().data?.result?.content).toEqual([{ type: 'text', text: 'called job with {}' }]);
  });

  it('storage someone else wrote nonsense into is read as no tasks, not a crash', async () => {
    const server = await serve();
    const storage = memoryStorage();
    const { sync, book } = open(server.url, storage);
    const name = () => [...storage.data.keys()][0] as string;
    await startTask(sync, { name: 'quick' });
    for (const junk of [
      '{',
      '"x"',
      '[{"taskId":7}]',
      JSON.stringify([{ taskId: 'x'.repeat(300) }]),
    ]) {
      storage.setItem(name(), junk);
      expect(book.list()).toEqual([]);
    }
  });
});

describe.each([
  ['modern', true],
  ['legacy-v2', true],
  ['legacy-v1', false],
] as const)('tasks on a server without them (%s)', (kind, ask) => {
  it('startTask is NOT_SUPPORTED and sends nothing; a task query too', async () => {
    const server = await serve(kind, ask);
    const { sync, queryClient } = open(server.url, memoryStorage());
    await expect(startTask(sync, { name: 'job' })).rejects.toMatchObject({ code: 'NOT_SUPPORTED' });
    await expect(queryClient.fetchQuery(taskQueryOptions('task-1'))).rejects.toMatchObject({
      code: 'NOT_SUPPORTED',
    });
    expect(server.counters().methods['tools/call']).toBeUndefined();
    expect(server.counters().methods['tasks/get']).toBeUndefined();
  });
});

it('a task on the reference server (server-everything): its research query, to the report', async () => {
  const server = await startEverythingServer();
  cleanups.push(() => server.close());
  const { sync } = open(server.url, memoryStorage());
  const task = await startTask(sync, {
    name: 'simulate-research-query',
    arguments: { topic: 'tides' },
  });
  const result = follow(sync, task.taskId);
  await eventually(() => expect(result().data?.task.status).toBe('completed'), { timeout: 15_000 });
  const [content] = result().data?.result?.content ?? [];
  expect(content?.type === 'text' && content.text).toContain('# Research Report: tides');
  expect(server.methods()['tasks/result']).toBe(1);
});
