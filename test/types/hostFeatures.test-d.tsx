/**
 * What issue 21's hooks and helpers return, as an app sees it: prompts, completions, server
 * logs, cancellable calls, tasks, the keep-alive.
 */
import type {
  CallToolResult,
  CompleteResult,
  GetPromptResult,
  Task,
  TaskStatus,
} from '@modelcontextprotocol/client';
import { QueryClient, useQuery } from '@tanstack/react-query';
import { expectTypeOf } from 'expect-type';
import {
  completionQueryOptions,
  keepAlive,
  McpProvider,
  mcpKeys,
  promptQueryOptions,
  type ServerLogEntry,
  startTask,
  type TaskData,
  taskQueryOptions,
  useCallTool,
  useCompletion,
  usePrompt,
  useServerLog,
  useTasks,
} from 'mcp-react-query';

// Never called: tsc checks the types, nothing renders.
export function HostFeatures() {
  const prompt = usePrompt('greet', { who: 'Ann' });
  expectTypeOf(prompt.data).toEqualTypeOf<GetPromptResult | undefined>();
  const count = usePrompt('greet', undefined, { select: (r) => r.messages.length });
  expectTypeOf(count.data).toEqualTypeOf<number | undefined>();
  expectTypeOf(useQuery(promptQueryOptions('greet')).data).toEqualTypeOf<
    GetPromptResult | undefined
  >();

  const completion = useCompletion({
    ref: { type: 'ref/prompt', name: 'greet' },
    argument: 'who',
    value: 'a',
  });
  expectTypeOf(completion.values).toEqualTypeOf<string[]>();
  expectTypeOf(completion.supported).toEqualTypeOf<boolean | undefined>();
  const options = completionQueryOptions({
    ref: { type: 'ref/resource', uri: 'file:///{path}' },
    argument: 'path',
    value: '',
  });
  expectTypeOf(useQuery(options).data).toEqualTypeOf<CompleteResult | undefined>();

  const log = useServerLog({ level: 'warning' });
  expectTypeOf(log.entries).toEqualTypeOf<readonly ServerLogEntry[]>();
  expectTypeOf(log.dropped).toEqualTypeOf<number>();
  // @ts-expect-error not a log level
  useServerLog({ level: 'loud' });

  const call = useCallTool();
  expectTypeOf(call.cancel).toEqualTypeOf<() => void>();
  expectTypeOf(call.cancelled).toEqualTypeOf<boolean>();
  call.mutate({ name: 'slow', timeoutMs: 1000, maxTotalTimeoutMs: 60_000 });

  const tasks = useTasks();
  expectTypeOf(tasks.tasks[0]?.status).toEqualTypeOf<TaskStatus | undefined>();
  expectTypeOf(tasks.tasks[0]?.result).toEqualTypeOf<CallToolResult | undefined>();
  expectTypeOf(tasks.start).returns.toEqualTypeOf<Promise<Task>>();
  expectTypeOf(useQuery(taskQueryOptions('t')).data).toEqualTypeOf<TaskData | undefined>();
  expectTypeOf(startTask).returns.toEqualTypeOf<Promise<Task>>();

  expectTypeOf(mcpKeys.prompt('greet')).toMatchTypeOf<readonly unknown[]>();
  return (
    <McpProvider
      url="/mcp"
      keepAlive={keepAlive({ pingIntervalMs: 15_000 })}
      queryClient={new QueryClient()}
    >
      {null}
    </McpProvider>
  );
}
