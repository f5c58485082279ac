/** @vitest-environment jsdom */
/**
 * Calls you can cancel (issue 21): `useCallTool().cancel()` on the three real servers and the
 * reference server. The server sees the cancellation (a held tool call records it; on 2025 a
 * `notifications/cancelled` arrives), and the call settles as cancelled: `idle`, no error, no
 * `onError`, `mutateAsync` rejecting with `CANCELLED`. A call is bounded by
 * `maxTotalTimeoutMs` however much progress comes.
 */
import type { Progress } from '@modelcontextprotocol/client';
import { QueryClient as CoreQueryClient } from '@tanstack/query-core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import {
  callTool,
  McpProvider,
  McpQueryError,
  type UseCallToolOptions,
  useCallTool,
} from '../../src';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import type { TestServer } from '../servers';
import { startEverythingServer } from '../servers/everything';
import { ERA_CASES, start } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  cleanup();
  await disposeSyncs();
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function serve(kind: (typeof ERA_CASES)[number]['kind']): Promise<TestServer> {
  const server = await start(kind);
  server.store.setTools([{ name: 'slow', progress: 1, hold: true }, { name: 'echo' }]);
  cleanups.push(() => server.close());
  return server;
}

interface Captured {
  call?: ReturnType<typeof useCallTool>;
  errors: Error[];
}

function Caller({ captured, options }: { captured: Captured; options: UseCallToolOptions }) {
  captured.call = useCallTool({ ...options, onError: (error) => captured.errors.push(error) });
  return null;
}

function app(url: string, options: UseCallToolOptions = {}) {
  const queryClient = new QueryClient();
  cleanups.push(() => queryClient.clear());
  const captured: Captured = { errors: [] };
  render(
    <QueryClientProvider client={queryClient}>
      <McpProvider url={url} lingerMs={20}>
        <Caller captured={captured} options={options} />
      </McpProvider>
    </QueryClientProvider>,
  );
  const call = () => {
    if (!captured.call) throw new Error('not rendered');
    return captured.call;
  };
  return { call, captured };
}

describe.each(ERA_CASES)('cancelling a tool call (rule 16, $kind)', ({ kind, era }) => {
  it('cancel() tells the server and settles the call as cancelled, not as an error', async () => {
    const server = await serve(kind);
    const { call, captured } = app(server.url);
    let outcome: unknown;
    act(() => {
      call()
        .mutateAsync({ name: 'slow' })
        .then(
          (value) => {
            outcome = value;
          },
          (error: unknown) => {
            outcome = error;
          },
        );
    });
    await eventually(() => expect(call().progress?.progress).toBe(1));
    expect(call().status).toBe('pending');
    act(() => call().cancel());
    expect(call().status).toBe('idle');
    expect(call().cancelled).toBe(true);
    expect(call().error).toBeNull();
    expect(call().progress).toBeUndefined();
    await eventually(() => expect(server.store.extras.cancelledCalls).toEqual(['slow']));
    // 2025: a notification says so. 2026-07-28 over HTTP: closing the call's stream does.
    expect(server.counters().methods['notifications/cancelled']).toBe(
      era === 'legacy' ? 1 : undefined,
    );
    await eventually(() => expect(outcome).toBeInstanceOf(McpQueryError));
    expect((outcome as McpQueryError).code).toBe('CANCELLED');
    expect(captured.errors).toEqual([]);
    // The next call starts afresh.
    await act(async () => {
      await call().mutateAsync({ name: 'echo' });
    });
    await eventually(() => expect(call().status).toBe('success'));
    expect(call().cancelled).toBe(false);
  });

  it('cancel() while a retry waits ends the call: the tool is not run again', async () => {
    const server = await serve(kind);
    // Each attempt times out (the held tool never answers); the retry waits a second.
    const { call, captured } = app(server.url, { retry: 1, retryDelay: 1000 });
    cleanups.push(() => server.store.extras.release());
    let outcome: unknown;
    act(() => {
      call()
        .mutateAsync({ name: 'slow', timeoutMs: 50 })
        .then(
          (value) => {
            outcome = value;
          },
          (error: unknown) => {
            outcome = error;
          },
        );
    });
    await eventually(() => expect(call().failureCount).toBe(1));
    expect(call().status).toBe('pending');
    expect(server.counters().toolCalls).toBe(1);
    act(() => call().cancel());
    expect(call().cancelled).toBe(true);
    await eventually(() => expect(outcome).toBeInstanceOf(McpQueryError), { timeout: 5000 });
    expect((outcome as McpQueryError).code).toBe('CANCELLED');
    // Settled: no attempt is left to run.
    expect(server.counters().toolCalls).toBe(1);
    expect(call().cancelled).toBe(true);
    expect(call().status).toBe('idle');
    expect(captured.errors).toEqual([]);
  });

  it('a call whose own signal aborts settles as cancel() does: idle, cancelled, no error', async () => {
    const server = await serve(kind);
    const { call, captured } = app(server.url);
    const controller = new AbortController();
    let outcome: unknown;
    act(() => {
      call()
        .mutateAsync({ name: 'slow', signal: controller.signal })
        .catch((error: unknown) => {
          outcome = error;
        });
    });
    await eventually(() => expect(call().progress?.progress).toBe(1));
    act(() => controller.abort('left the page'));
    await eventually(() => expect(server.store.extras.cancelledCalls).toEqual(['slow']));
    await eventually(() => expect(outcome).toBeInstanceOf(McpQueryError));
    expect((outcome as McpQueryError).code).toBe('CANCELLED');
    await eventually(() => expect(call().cancelled).toBe(true));
    expect(call().status).toBe('idle');
    expect(call().error).toBeNull();
    expect(captured.errors).toEqual([]);
  });

  it('cancel() with no call running does nothing', async () => {
    const server = await serve(kind);
    const { call } = app(server.url);
    await act(async () => {
      await call().mutateAsync({ name: 'echo' });
    });
    await eventually(() => expect(call().status).toBe('success'));
    act(() => call().cancel());
    expect(call().status).toBe('success');
    expect(call().cancelled).toBe(false);
  });

  it('callTool with a signal, without React: aborting it is CANCELLED, and the server knows', async () => {
    const server = await serve(kind);
    const sync = new McpCacheSync({ queryClient: new CoreQueryClient(), url: server.url });
    cleanups.push(() => sync.dispose());
    sync.mount();
    const controller = new AbortController();
    const seen: Progress[] = [];
    const running = callTool(sync, {
      name: 'slow',
      signal: controller.signal,
      onProgress: (progress) => seen.push(progress),
    });
    running.catch(() => {});
    await eventually(() => expect(seen).toHaveLength(1));
    controller.abort('user pressed stop');
    await expect(running).rejects.toMatchObject({ code: 'CANCELLED', cause: 'user pressed stop' });
    await eventually(() => expect(server.store.extras.cancelledCalls).toEqual(['slow']));
  });

  it('a call is bounded by maxTotalTimeoutMs, whatever its timeoutMs', async () => {
    const server = await serve(kind);
    const sync = new McpCacheSync({ queryClient: new CoreQueryClient(), url: server.url });
    cleanups.push(() => sync.dispose());
    sync.mount();
    const running = callTool(sync, { name: 'slow', timeoutMs: 60_000, maxTotalTimeoutMs: 300 });
    await expect(running).rejects.toThrow(/timed out|timeout/i);
    await eventually(() => expect(server.store.extras.cancelledCalls).toEqual(['slow']));
  });
});

it('cancelling a long-running operation of the reference server (server-everything)', async () => {
  const server = await startEverythingServer();
  cleanups.push(() => server.close());
  const { call } = app(server.url);
  act(() => {
    call()
      .mutateAsync({
        name: 'trigger-long-running-operation',
        arguments: { duration: 60, steps: 120 },
      })
      .catch(() => {});
  });
  await eventually(() => expect(call().progress?.progress).toBe(1));
  act(() => call().cancel());
  expect(call().cancelled).toBe(true);
  await eventually(() => expect(server.methods()['notifications/cancelled']).toBe(1));
});
