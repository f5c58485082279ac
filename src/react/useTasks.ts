import type { CallToolResult, Task, TaskStatus } from '@modelcontextprotocol/client';
import { type UseQueryResult, useQueries, useQuery } from '@tanstack/react-query';
import { useCallback, useSyncExternalStore } from 'react';
import {
  cancelTask,
  dismissTask,
  startTask,
  supportsToolTasks,
  type TaskData,
  type TaskStorage,
  taskBook,
  taskListQueryOptions,
  taskQueryOptions,
} from '../core/tasks';
import { useMcpSync } from './context';
import { useMcp } from './useMcp';

/** A task this app started, as it stands. */
export interface TaskView {
  taskId: string;
  /** The tool it runs. */
  name: string;
  startedAt: number;
  /** Undefined until the first answer about it. */
  status: TaskStatus | undefined;
  statusMessage: string | undefined;
  /** What it ended with, once completed (fetched once). */
  result: CallToolResult | undefined;
  /** The query's error (the server forgot the task, the connection failed…). */
  error: Error | null;
  /** Ask the server to cancel it (`tasks/cancel`). */
  cancel(): Promise<void>;
  /** Forget it here (it is no longer listed, nor asked about). */
  dismiss(): void;
}

export interface UseTasksResult {
  /** The tasks this app started on this server, oldest first, in every tab and after a reload. */
  tasks: TaskView[];
  /** Start a tool call as a task. */
  start(name: string, args?: Record<string, unknown>, options?: { ttlMs?: number }): Promise<Task>;
  /** Whether the server runs tool calls as tasks (undefined until connected). */
  supported: boolean | undefined;
}

/**
 * The long tool calls this app runs as tasks (2025-11-25): start one, follow its status
 * (polled at the server's pace, at once when it announces a change), get its result once,
 * cancel it. The task ids are kept in `storage` (default `localStorage`) per server and
 * identity, so a reload, or another tab taking over the connection, picks them up.
 */
export function useTasks(options: { scope?: string; storage?: TaskStorage } = {}): UseTasksResult {
  const { scope, storage } = options;
  const sync = useMcpSync('useTasks', scope);
  const book = taskBook(sync, storage ? { storage } : {});
  const stored = useSyncExternalStore(book.subscribe, book.list, book.list);
  const { capabilities } = useMcp(scope);
  // The same function from render to render (an effect that depends on it runs once).
  const start = useCallback<UseTasksResult['start']>(
    (name, args, startOptions) =>
      startTask(sync, {
        name,
        ...(args && { arguments: args }),
        ...(startOptions?.ttlMs !== undefined && { ttlMs: startOptions.ttlMs }),
      }),
    [sync],
  );
  const queries = useQueries(
    {
      queries: stored.map(({ taskId }) => taskQueryOptions(taskId, { scope: sync.keys.scope })),
    },
    sync.queryClient,
  ) as UseQueryResult<TaskData, Error>[];
  return {
    tasks: stored.map((entry, index) => {
      const query = queries[index];
      const task = query?.data?.task;
      return {
        ...entry,
        status: task?.status,
        statusMessage: task?.statusMessage,
        result: query?.data?.result,
        error: query?.error ?? null,
        cancel: () => cancelTask(sync, entry.taskId),
        dismiss: () => dismissTask(sync, entry.taskId),
      };
    }),
    start,
    supported: capabilities && supportsToolTasks(capabilities),
  };
}

/** The server's own list of tasks (`tasks/list`), where it declared `tasks.list`. */
export function useTaskList(options: { scope?: string } = {}): UseQueryResult<Task[], Error> {
  const sync = useMcpSync('useTaskList', options.scope);
  return useQuery(taskListQueryOptions({ scope: sync.keys.scope }), sync.queryClient);
}
