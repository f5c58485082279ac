/** @vitest-environment jsdom */
/**
 * `useTasks()` (issue 21): start a tool call as a task from a component, see it run and end
 * with its result, cancel one, dismiss one; on a server without tasks it says so and sends
 * nothing.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import { useEffect } from 'react';
import { afterEach, expect, it } from 'vitest';
import { McpProvider, useTasks } from '../../src';
import type { TaskStorage } from '../../src/core/tasks';
import type { ServerKind, TestServer } from '../servers';
import { start } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  cleanup();
  await disposeSyncs();
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function serve(kind: ServerKind, tasks: boolean): Promise<TestServer> {
  const server = await start(kind, { capabilities: { tasks } });
  server.store.setTools([{ name: 'job', hold: true, taskSupport: 'optional' }]);
  cleanups.push(() => server.close());
  return server;
}

function storage(): TaskStorage {
  const data = new Map<string, string>();
  return {
    getItem: (key) => data.get(key) ?? null,
    setItem: (key, value) => void data.set(key, value),
  };
}

interface Handle {
  tasks?: ReturnType<typeof useTasks>;
}

function Tasks({ handle, store }: { handle: Handle; store: TaskStorage }) {
  const tasks = useTasks({ storage: store });
  handle.tasks = tasks;
  return (
    <ul data-testid="tasks" data-supported={String(tasks.supported)}>
      {tasks.tasks.map((task) => (
        <li key={task.taskId}>
          {task.name} {task.status ?? '…'}
          {task.result?.content[0]?.type === 'text' && ` ${task.result.content[0].text}`}
        </li>
      ))}
    </ul>
  );
}

function app(url: string) {
  const queryClient = new QueryClient();
  cleanups.push(() => queryClient.clear());
  const handle: Handle = {};
  render(
    <QueryClientProvider client={queryClient}>
      <McpProvider url={url} lingerMs={20}>
        <Tasks handle={handle} store={storage()} />
      </McpProvider>
    </QueryClientProvider>,
  );
  const tasks = () => {
    if (!handle.tasks) throw new Error('not rendered');
    return handle.tasks;
  };
  return tasks;
}

const shown = () => screen.getByTestId('tasks');

it('starts a task, follows it to its result, cancels another, dismisses them', async () => {
  const server = await serve('legacy-v1', true);
  const tasks = app(server.url);
  await eventually(() => expect(shown().dataset.supported).toBe('true'));
  await act(async () => {
    await tasks().start('job', { n: 1 });
  });
  await eventually(() => expect(shown().textContent).toBe('job working'));
  act(() => void server.store.extras.release());
  await eventually(() => expect(shown().textContent).toBe('job completed called job with {"n":1}'));
  await act(async () => {
    await tasks().start('job');
  });
  await eventually(() => expect(tasks().tasks[1]?.status).toBe('working'));
  await act(async () => {
    await tasks().tasks[1]?.cancel();
  });
  await eventually(() => expect(tasks().tasks[1]?.status).toBe('cancelled'));
  act(() => {
    for (const task of tasks().tasks) task.dismiss();
  });
  expect(shown().textContent).toBe('');
});

it('on a server without tasks (2026-07-28) it says so, and start sends nothing', async () => {
  const server = await serve('modern', false);
  const tasks = app(server.url);
  await eventually(() => expect(shown().dataset.supported).toBe('false'));
  await expect(tasks().start('job')).rejects.toMatchObject({ code: 'NOT_SUPPORTED' });
  expect(server.counters().methods['tools/call']).toBeUndefined();
});

/** A host's "start the job once this shows": an effect on `start`, as the hook rules ask. */
function StartOnShow({ starts }: { starts: Set<unknown> }) {
  const { start, tasks } = useTasks({ storage: storage() });
  starts.add(start);
  useEffect(() => void start('job').catch(() => {}), [start]);
  return <ul data-testid="tasks">{tasks.map((task) => `${task.name} ${task.status ?? '…'}`)}</ul>;
}

it('start is the same function from render to render: an effect on it starts one task', async () => {
  const server = await serve('legacy-v1', true);
  const queryClient = new QueryClient();
  cleanups.push(() => queryClient.clear());
  const starts = new Set<unknown>();
  render(
    <QueryClientProvider client={queryClient}>
      <McpProvider url={server.url} lingerMs={20}>
        <StartOnShow starts={starts} />
      </McpProvider>
    </QueryClientProvider>,
  );
  await eventually(() => expect(shown().textContent).toBe('job working'));
  expect(starts.size).toBe(1);
  act(() => void server.store.extras.release());
  await eventually(() => expect(shown().textContent).toBe('job completed'));
  expect(starts.size).toBe(1);
  expect(server.counters().toolCalls).toBe(1);
});
