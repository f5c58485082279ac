/** @vitest-environment jsdom */
/**
 * `useCallTool` as a TanStack user drives it: with `retry` (the hook's, or the QueryClient's
 * mutation default) and `reset()` while a call runs. A cancelled call is over: no retry runs the
 * tool again on the server. After `reset()` the hook has let go of the call: its progress, still
 * arriving, does not show on the idle mutation.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import { useEffect } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { McpProvider, type UseCallToolOptions, useCallTool } from '../../src';
import type { TestServer } from '../servers';
import { atEnd, closeAll } from '../support/atEnd';
import { ERA_CASES, serve as serveEra } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

afterEach(async () => {
  cleanup();
  await disposeSyncs();
  await closeAll();
});

async function serve(kind: (typeof ERA_CASES)[number]['kind']): Promise<TestServer> {
  const server = await serveEra(kind);
  server.store.setTools([
    { name: 'slow', progress: 1, hold: true },
    { name: 'stepped', progress: 3, stepMs: 150 },
  ]);
  return server;
}

interface Captured {
  call?: ReturnType<typeof useCallTool>;
}

function Caller({
  options,
  captured,
  cancelOnUnmount = false,
}: {
  options?: UseCallToolOptions;
  captured: Captured;
  cancelOnUnmount?: boolean;
}) {
  const call = useCallTool(options);
  captured.call = call;
  // A host's "stop the call when this component goes": an effect whose cleanup is cancel.
  useEffect(() => (cancelOnUnmount ? call.cancel : undefined), [cancelOnUnmount, call.cancel]);
  return <div data-testid="progress">{call.progress ? String(call.progress.progress) : '-'}</div>;
}

function app(
  server: TestServer,
  options?: UseCallToolOptions,
  queryClient = new QueryClient(),
  cancelOnUnmount = false,
) {
  atEnd(() => queryClient.clear());
  const captured: Captured = {};
  const tree = (caller: boolean) => (
    <QueryClientProvider client={queryClient}>
      <McpProvider url={server.url} lingerMs={20}>
        {caller && (
          <Caller options={options} captured={captured} cancelOnUnmount={cancelOnUnmount} />
        )}
      </McpProvider>
    </QueryClientProvider>
  );
  const { rerender } = render(tree(true));
  const call = () => {
    if (!captured.call) throw new Error('not rendered');
    return captured.call;
  };
  return Object.assign(call, { unmountCaller: () => rerender(tree(false)) });
}

/** Settles once the call's promise does, however it ends. */
function run(promise: Promise<unknown>) {
  const outcome: { settled: boolean; value?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(outcome, { settled: true, value }),
    (error: unknown) => Object.assign(outcome, { settled: true, value: error }),
  );
  return outcome;
}

describe.each(ERA_CASES)('useCallTool under TanStack options ($kind)', ({ kind }) => {
  it.each([
    ['the hook’s retry', { retry: 2, retryDelay: 10 }, undefined],
    ['the QueryClient’s mutation retry', undefined, { retry: 2, retryDelay: 10 }],
  ])('a cancelled call is not retried (%s)', async (_, options, mutations) => {
    const server = await serve(kind);
    const call = app(server, options, new QueryClient({ defaultOptions: { mutations } }));
    let outcome = { settled: false } as ReturnType<typeof run>;
    act(() => {
      outcome = run(call().mutateAsync({ name: 'slow' }));
    });
    await eventually(() => expect(call().progress?.progress).toBe(1));
    act(() => call().cancel());
    await eventually(() => expect(outcome.settled).toBe(true));
    expect(outcome.value).toMatchObject({ code: 'CANCELLED' });
    await eventually(() => expect(server.store.extras.cancelledCalls).toEqual(['slow']));
    // A retry would have sent the call again by now (retryDelay 10 ms): the promise settles
    // only after the last attempt.
    expect(server.counters().toolCalls).toBe(1);
    expect(call().status).toBe('idle');
  });

  it('retry still applies to a call that failed (timed out)', async () => {
    const server = await serve(kind);
    const call = app(server, { retry: 1, retryDelay: 10 });
    let outcome = { settled: false } as ReturnType<typeof run>;
    act(() => {
      outcome = run(call().mutateAsync({ name: 'slow', timeoutMs: 100 }));
    });
    await eventually(() => expect(outcome.settled).toBe(true));
    expect(outcome.value).toBeInstanceOf(Error);
    expect(server.counters().toolCalls).toBe(2);
  });

  it('reset() while a call runs: the call’s later progress does not show', async () => {
    const server = await serve(kind);
    const call = app(server);
    let outcome = { settled: false } as ReturnType<typeof run>;
    act(() => {
      outcome = run(call().mutateAsync({ name: 'stepped' }));
    });
    await eventually(() => expect(screen.getByTestId('progress').textContent).toBe('1'));
    act(() => call().reset());
    expect(screen.getByTestId('progress').textContent).toBe('-');
    expect(call().status).toBe('idle');
    // The call runs on (TanStack's reset cancels nothing) and reports its two other steps.
    await eventually(() => expect(outcome.settled).toBe(true), { timeout: 3000 });
    expect(outcome.value).toMatchObject({ content: [{ type: 'text' }] });
    expect(screen.getByTestId('progress').textContent).toBe('-');
    expect(call().progress).toBeUndefined();
    expect(call().status).toBe('idle');
  });

  it('an effect whose cleanup is cancel() stops the call when the component goes, not when it re-renders', async () => {
    const server = await serve(kind);
    const call = app(server, undefined, undefined, true);
    act(() => {
      run(call().mutateAsync({ name: 'slow' }));
    });
    // The progress notification re-renders the component: the call runs on.
    await eventually(() => expect(screen.getByTestId('progress').textContent).toBe('1'));
    expect(call().status).toBe('pending');
    expect(call().cancelled).toBe(false);
    act(() => call.unmountCaller());
    await eventually(() => expect(server.store.extras.cancelledCalls).toEqual(['slow']));
  });

  it('cancel() taken before the call started (a handler or timer made earlier) still cancels it', async () => {
    const server = await serve(kind);
    const call = app(server);
    const { cancel } = call();
    let outcome = { settled: false } as ReturnType<typeof run>;
    act(() => {
      outcome = run(call().mutateAsync({ name: 'slow' }));
    });
    await eventually(() => expect(call().progress?.progress).toBe(1));
    act(() => cancel());
    expect(call().cancelled).toBe(true);
    expect(call().status).toBe('idle');
    await eventually(() => expect(server.store.extras.cancelledCalls).toEqual(['slow']));
    await eventually(() => expect(outcome.settled).toBe(true));
    expect(outcome.value).toMatchObject({ code: 'CANCELLED' });
  });

  it('the QueryClient’s mutation onMutate runs for a call, and its onError not for a cancelled one', async () => {
    const server = await serve(kind);
    const started: unknown[] = [];
    const failed: unknown[] = [];
    const mutations = {
      onMutate: (variables: unknown) => void started.push(variables),
      onError: (error: unknown) => void failed.push(error),
    };
    const call = app(server, undefined, new QueryClient({ defaultOptions: { mutations } }));
    let outcome = { settled: false } as ReturnType<typeof run>;
    act(() => {
      outcome = run(call().mutateAsync({ name: 'slow' }));
    });
    await eventually(() => expect(call().progress?.progress).toBe(1));
    expect(started).toEqual([{ name: 'slow' }]);
    act(() => call().cancel());
    await eventually(() => expect(outcome.settled).toBe(true));
    expect(outcome.value).toMatchObject({ code: 'CANCELLED' });
    expect(failed).toEqual([]);
  });
});
