import type { CallToolResult, Task } from '@modelcontextprotocol/client';
import type { Query, QueryClient, QueryKey } from '@tanstack/query-core';
import { errorMessage } from './errors';
import { extendEverySync, internalsOf, type SyncInternals } from './internals';
import { createMcpKeys, type McpKeys } from './keys';
import { onEnd } from './lifetime';
import type { McpCacheSync } from './mcpCacheSync';
import { type McpQueryOptions, mcpQueryOptions, type ScopeOption } from './queryOptions';
import { RefetchCoordinator } from './refetchCoordinator';
import { defineNotification, defineRequest, notSupported, supports } from './requests';
import { anything, invalidArguments, isName, isObject } from './shapes';
import { TaskBook, type TaskStorage } from './taskBook';

export type { StoredTask, TaskStorage } from './taskBook';
export { TaskBook } from './taskBook';

/**
 * Tasks, as the 2025-11-25 revision defines them (experimental there): a tool call the server
 * runs in the background, answered at once with a task; its status by `tasks/get` (polled at
 * the server's `pollInterval`, and at once on `notifications/tasks/status`), its result by
 * `tasks/result`, fetched once; `tasks/cancel`, `tasks/list`. The tasks an app started are
 * kept in storage per server, scope and signed-in identity, so a reload, or another tab
 * taking over the connection, picks them up. 2026-07-28 moved tasks to an extension
 * (`io.modelcontextprotocol/tasks`) whose results the SDK (2.4) cannot receive: there, the
 * package does not declare it, a conforming server answers calls normally, and these say
 * `NOT_SUPPORTED`.
 */

/** A task's state and, once it ended, what it ended with (fetched once). */
export interface TaskData {
  task: Task;
  /** The tool's result (a completed task, or a failed one that answered `isError`). */
  result?: CallToolResult;
  /** Why a failed task's result could not be had (its JSON-RPC error). */
  error?: string;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
/** A server's `pollInterval`, kept within reason (it is the server's number). */
const MIN_POLL_MS = 100;
const MAX_POLL_MS = 60_000;
const DEFAULT_POLL_MS = 1000;
/** The longest task id kept (they are the server's strings). */
export const MAX_ID = 256;
/** Pages of `tasks/list` walked at most. */
const MAX_PAGES = 20;

export const isDone = (data: unknown): boolean => {
  const status = (data as TaskData | undefined)?.task?.status;
  return status !== undefined && TERMINAL.has(status);
};

/** How long to wait before asking again, from the server's hint. */
export function pollInterval(data: unknown): number {
  const hint = (data as TaskData | undefined)?.task?.pollInterval;
  const ms = typeof hint === 'number' && Number.isFinite(hint) ? hint : DEFAULT_POLL_MS;
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, ms));
}

const isTask = (value: unknown): value is Task =>
  isObject(value) && isName(value.taskId) && typeof value.status === 'string';

const TOOL_TASKS = 'tasks.requests.tools.call';

/** Whether `capabilities` declare `path` (`tasks.requests.tools.call`: tool calls as tasks). */
export function declares(capabilities: object | undefined, path: string): boolean {
  let declared: unknown = capabilities;
  for (const name of path.split('.')) declared = isObject(declared) ? declared[name] : undefined;
  return isObject(declared);
}

/** Whether the server runs tool calls as tasks (`tasks.requests.tools.call`). */
export function supportsToolTasks(capabilities: object | undefined): boolean {
  return declares(capabilities, TOOL_TASKS);
}

/** How long a task request waits for a connection that says what the server declared. */
const CONNECT_WAIT_MS = 30_000;

/**
 * Fails (nothing sent) unless the server declared `path`, waiting first, bounded, for a
 * connection (in any tab of the group: the state is the leader's there too).
 */
async function ensureDeclared(sync: object, path: string): Promise<void> {
  const { getState, subscribeState } = sync as Pick<McpCacheSync, 'getState' | 'subscribeState'>;
  const known = () => getState().capabilities !== undefined || getState().status === 'error';
  if (!known()) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, CONNECT_WAIT_MS);
      const stop = subscribeState(() => known() && done());
      function done() {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
  }
  if (!declares(getState().capabilities, path)) throw notSupported(path);
}

/** The task and task-list queries, and task status notifications. */
export function defineTasks(): void {
  defineRequest('task', {
    staleTime: (data) => (isDone(data) ? Number.POSITIVE_INFINITY : pollInterval(data)),
    async run(client, [taskId], { signal, timeout, cached }) {
      // Ended, with what it ended with: the result is fetched once.
      if (isDone(cached)) return cached;
      if (!supports(client.getServerCapabilities(), 'tasks')) throw notSupported('tasks');
      if (!isName(taskId) || taskId.length > MAX_ID) throw invalidArguments('not a task id');
      const options = { signal, timeout };
      const task = await client.request(
        { method: 'tasks/get', params: { taskId } },
        anything,
        options,
      );
      if (!isTask(task) || task.taskId !== taskId) {
        throw invalidArguments(`tasks/get answered something else than task ${taskId}`);
      }
      const data: TaskData = { task };
      if (task.status === 'completed' || task.status === 'failed') {
        try {
          data.result = (await client.request(
            { method: 'tasks/result', params: { taskId } },
            anything,
            options,
          )) as CallToolResult;
        } catch (error) {
          signal.throwIfAborted();
          data.error = errorMessage(error);
        }
      }
      return data;
    },
  });
  defineRequest('tasks', {
    async run(client, _parts, { signal, timeout }) {
      const declared = client.getServerCapabilities()?.tasks as { list?: unknown } | undefined;
      if (!isObject(declared?.list)) throw notSupported('tasks.list');
      const tasks: Task[] = [];
      let cursor: unknown;
      for (let page = 0; page < MAX_PAGES; page += 1) {
        const answer = (await client.request(
          { method: 'tasks/list', params: typeof cursor === 'string' ? { cursor } : {} },
          anything,
          { signal, timeout },
        )) as { tasks?: unknown; nextCursor?: unknown };
        if (Array.isArray(answer.tasks)) tasks.push(...answer.tasks.filter(isTask));
        cursor = answer.nextCursor;
        if (typeof cursor !== 'string') break;
      }
      return tasks;
    },
  });
  defineNotification('notifications/tasks/status', ({ taskId, status }) =>
    isName(taskId) && taskId.length <= MAX_ID && typeof status === 'string'
      ? { type: 'task', taskId, status: status.slice(0, 64) }
      : 'no task id or status',
  );
}

defineTasks();

/**
 * One task: its status, polled at the server's `pollInterval` until it ends (and at once when
 * the server announces a change), then what it ended with, fetched once.
 */
export function taskQueryOptions(
  taskId: string,
  { scope }: ScopeOption = {},
): McpQueryOptions<TaskData> & {
  refetchInterval: (query: Query<TaskData, Error, TaskData, QueryKey>) => number | false;
} {
  return {
    ...mcpQueryOptions<TaskData>(createMcpKeys(scope).task(taskId), scope),
    refetchInterval: (query) =>
      isDone(query.state.data) || query.state.status === 'error'
        ? false
        : pollInterval(query.state.data),
  };
}

/** The server's tasks (`tasks/list`, every page), where it declared `tasks.list`. */
export function taskListQueryOptions({ scope }: ScopeOption = {}): McpQueryOptions<Task[]> {
  return mcpQueryOptions<Task[]>(createMcpKeys(scope).tasks(), scope);
}

interface Attached {
  internals: SyncInternals;
  keys: McpKeys;
  queryClient: QueryClient;
  /** Made on first use, with the storage given then. */
  book?: TaskBook;
}

const attached = new WeakMap<object, Attached>();

function attach(owner: object, internals: SyncInternals): Attached {
  const existing = attached.get(owner);
  if (existing) return existing;
  const { keys, queryClient } = owner as { keys: McpKeys; queryClient: QueryClient };
  const entry: Attached = { internals, keys, queryClient };
  // A task the server says changed is asked about now rather than at the next poll, single
  // flight with one trailing read (rule 3): TanStack's invalidateQueries cancels the read in
  // flight and starts another at each notification, so a storm faster than the server answers
  // would cost a tasks/get each (and a notifications/cancelled on 2025) and never let one end.
  // The coordinator (and what feeds it the cache's events) is made at the first notification.
  let coordinator: RefetchCoordinator | undefined;
  const stop = internals.events.bus.subscribe((event) => {
    if (event.type !== 'task') return;
    if (!coordinator) {
      const made = new RefetchCoordinator(queryClient, () => false);
      const unsubscribe = queryClient.getQueryCache().subscribe((change) => {
        if (keys.requestOf(change.query.queryKey)?.kind === 'task') made.onCacheEvent(change);
      });
      onEnd(internals.signal, () => {
        unsubscribe();
        made.stop();
      });
      coordinator = made;
    }
    coordinator.signal(keys.task(event.taskId));
  });
  onEnd(internals.signal, stop);
  attached.set(owner, entry);
  return entry;
}

extendEverySync((owner, internals) => void attach(owner, internals));

function bookOf(sync: object, storage?: TaskStorage): Attached & { book: TaskBook } {
  const entry = attach(sync, internalsOf(sync));
  entry.book ??= new TaskBook(entry.internals, entry.keys, storage ?? defaultStorage());
  return entry as Attached & { book: TaskBook };
}

function defaultStorage(): TaskStorage | undefined {
  try {
    return (globalThis as { localStorage?: Storage }).localStorage;
  } catch {
    return undefined;
  }
}

/**
 * The tasks an McpCacheSync's app started (`useTasks` reads it). `storage`: where they are
 * kept, for the first call per McpCacheSync (default `localStorage`).
 */
export function taskBook(sync: object, options: { storage?: TaskStorage } = {}): TaskBook {
  return bookOf(sync, options.storage).book;
}

/**
 * Start a tool call as a task (a server that declared `tasks.requests.tools.call`; otherwise
 * `NOT_SUPPORTED`, nothing sent). Resolves with the task as created; it is kept in the task
 * book, and its query (`taskQueryOptions`) follows it from there.
 */
export async function startTask(
  sync: object,
  variables: { name: string; arguments?: Record<string, unknown>; ttlMs?: number },
): Promise<Task> {
  const { book, internals, keys, queryClient } = bookOf(sync);
  await ensureDeclared(sync, TOOL_TASKS);
  const created = (await internals.upstream.request('tools/call', {
    name: variables.name,
    ...(variables.arguments && { arguments: variables.arguments }),
    task: variables.ttlMs === undefined ? {} : { ttl: variables.ttlMs },
  })) as { task?: unknown };
  if (!isTask(created.task)) throw invalidArguments('the server answered the call without a task');
  const { task } = created;
  book.add({
    taskId: task.taskId,
    name: variables.name,
    startedAt: internals.events.bus.clock.now(),
  });
  queryClient.setQueryData<TaskData>(keys.task(task.taskId), (data) => data ?? { task });
  return task;
}

/** Ask the server to cancel a task (`tasks/cancel`); its query then shows what became of it. */
export async function cancelTask(sync: object, taskId: string): Promise<void> {
  const { internals, keys, queryClient } = attach(sync, internalsOf(sync));
  await ensureDeclared(sync, 'tasks.cancel');
  await internals.upstream.request('tasks/cancel', { taskId });
  await queryClient.invalidateQueries({ queryKey: keys.task(taskId), exact: true });
}

/** Forget a task this app started (its entry in the book and in the cache). */
export function dismissTask(sync: object, taskId: string): void {
  const { book, keys, queryClient } = bookOf(sync);
  book.remove(taskId);
  queryClient.removeQueries({ queryKey: keys.task(taskId), exact: true });
}
