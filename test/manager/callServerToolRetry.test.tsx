/** @vitest-environment jsdom */
/**
 * Also: `useCallServerTool` has what `useCallTool` has for a call a user stops (`cancel()`,
 * `cancelled`, no `onError` for it), through the server manager.
 *
 * `useCallServerTool` retries as `useCallTool` does (rule 16, rule 8): never a call that was
 * cancelled (a retry would run the tool again on the server), nor one whose own durations no
 * timer can take (no retry can make it work), whatever `retry` says, the hook's or the
 * QueryClient's. On a real server.
 */
import { QueryClient, type QueryClientConfig, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render } from '@testing-library/react';
import { useEffect } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStorage } from '../../src/auth';
import {
  McpServersProvider,
  type UseCallServerToolOptions,
  useCallServerTool,
  useMcpServers,
} from '../../src/servers';
import type { TestServer } from '../servers';
import { atEnd, closeAll, FAST, serverOf } from '../support/manager';
import { eventually } from '../support/wait';

afterEach(async () => {
  cleanup();
  await closeAll();
});

interface Captured {
  call?: ReturnType<typeof useCallServerTool>;
  ready?: boolean;
}

function Caller({
  url,
  options,
  captured,
}: {
  url: string;
  options: UseCallServerToolOptions | undefined;
  captured: Captured;
}) {
  const { add, servers } = useMcpServers();
  captured.call = useCallServerTool(options);
  captured.ready = servers.some((server) => server.status === 'ready');
  useEffect(() => {
    add({ id: 'docs', name: 'Docs', url });
  }, [add, url]);
  return null;
}

async function app(
  server: TestServer,
  options: UseCallServerToolOptions | undefined,
  config: QueryClientConfig = {},
) {
  const queryClient = new QueryClient(config);
  atEnd(() => queryClient.clear());
  const captured: Captured = {};
  render(
    <QueryClientProvider client={queryClient}>
      <McpServersProvider storage={memoryStorage()} channel={null} reconnect={FAST} lingerMs={10}>
        <Caller url={server.url} options={options} captured={captured} />
      </McpServersProvider>
    </QueryClientProvider>,
  );
  await eventually(() => expect(captured.ready).toBe(true));
  return () => captured.call as ReturnType<typeof useCallServerTool>;
}

// Retries 1 s apart: a retried call would still be pending (or running again) when checked.
const RETRYING = [
  ['the hook’s retry', { retry: 3, retryDelay: 1000 }, {}],
  [
    'the QueryClient’s retry',
    undefined,
    { defaultOptions: { mutations: { retry: 3, retryDelay: 1000 } } },
  ],
] as const;

describe.each(RETRYING)('useCallServerTool with %s', (_, options, config) => {
  it('never retries a cancelled call: the tool runs once', async () => {
    const server = await serverOf('modern', 'docs', {
      tools: [{ name: 'slow', progress: 1, hold: true }],
    });
    const call = await app(server, options, config);
    const controller = new AbortController();
    let outcome: unknown;
    act(() => {
      call()
        .mutateAsync({ name: 'Docs__slow', signal: controller.signal })
        .then(
          (value) => {
            outcome = value;
          },
          (error: unknown) => {
            outcome = error;
          },
        );
    });
    await eventually(() => expect(call().progress).toBeDefined());
    expect(server.counters().toolCalls).toBe(1);
    act(() => controller.abort());
    await eventually(() => expect(outcome).toMatchObject({ code: 'CANCELLED' }), { timeout: 500 });
    // Settled as cancel() settles a call: no error, nothing left to retry.
    expect(call().cancelled).toBe(true);
    expect(call().failureCount).toBe(0);
    expect(server.counters().toolCalls).toBe(1);
  });

  it('never retries a call whose own durations cannot work: it fails at once, unsent', async () => {
    const server = await serverOf('modern', 'docs', { tools: [{ name: 'quick' }] });
    const call = await app(server, options, config);
    act(() => call().mutate({ name: 'Docs__quick', timeoutMs: Number.NaN }));
    await eventually(() => expect(call().isError).toBe(true), { timeout: 500 });
    expect(call().error).toMatchObject({ code: 'INVALID_OPTIONS' });
    expect(call().failureCount).toBe(1);
    expect(server.counters().toolCalls).toBe(0);
  });

  it('still retries what a retry can mend', async () => {
    const server = await serverOf('modern', 'docs', { tools: [{ name: 'quick' }] });
    const call = await app(
      server,
      options && { ...options, retryDelay: 10 },
      options ? {} : { defaultOptions: { mutations: { retry: 3, retryDelay: 10 } } },
    );
    // An unknown server is a failure like any other here: retried as `retry` says.
    act(() => call().mutate({ name: 'Nobody__quick' }));
    await eventually(() => expect(call().isError).toBe(true));
    expect(call().error).toMatchObject({ code: 'UNKNOWN_SERVER' });
    expect(call().failureCount).toBe(4);
  });
});

describe.each(['modern', 'legacy-v2'] as const)('useCallServerTool on %s: cancel()', (kind) => {
  it('tells the server, and the call ends cancelled, not failed', async () => {
    const server = await serverOf(kind, 'docs', {
      tools: [{ name: 'slow', progress: 1, hold: true }],
    });
    const onError = vi.fn();
    const call = await app(server, { onError });
    let outcome: unknown;
    act(() => {
      call()
        .mutateAsync({ name: 'Docs__slow' })
        .catch((error: unknown) => {
          outcome = error;
        });
    });
    await eventually(() => expect(call().progress?.progress).toBe(1));
    act(() => call().cancel());
    await eventually(() => expect(outcome).toMatchObject({ code: 'CANCELLED' }));
    await eventually(() => expect(server.store.extras.cancelledCalls).toEqual(['slow']));
    expect(call()).toMatchObject({ status: 'idle', cancelled: true, progress: undefined });
    expect(onError).not.toHaveBeenCalled();
    expect(server.counters().toolCalls).toBe(1);
  });
});
