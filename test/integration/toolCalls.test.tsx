/** @vitest-environment jsdom */
/**
 * Tool calls (issue 11, part 5): `useCallTool()` on TanStack's useMutation and
 * `callToolMutationOptions()` without React, against the three real servers. A tool that runs and
 * reports a failure (`isError`) is data; a call that fails (unknown tool, HTTP failure) is an
 * error; progress notifications reach `progress` and `onProgress`; a call started before the
 * connection is up waits for it like a read does.
 */
import type { CallToolResult, Progress } from '@modelcontextprotocol/client';
import { QueryClient as CoreQueryClient, MutationObserver } from '@tanstack/query-core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import { type ReactNode, useEffect, useRef } from 'react';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { callTool, callToolMutationOptions, McpProvider, useCallTool, useMcp } from '../../src';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import type { CallToolVariables } from '../../src/core/tools';
import { type StoredTool, startTamperProxy, type TestServer } from '../servers';
import { ERA_CASES, start } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

const TOOLS: StoredTool[] = [
  {
    name: 'echo',
    inputSchema: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
  },
  { name: 'broken', fail: true },
  { name: 'slow', progress: 3 },
  { name: 'paced', progress: 2, stepMs: 150 },
  { name: 'held', hold: true },
];

const textOf = (result: CallToolResult | undefined) => {
  const first = result?.content[0];
  return first?.type === 'text' ? first.text : undefined;
};

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  cleanup();
  await disposeSyncs();
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function serve(kind: (typeof ERA_CASES)[number]['kind']): Promise<TestServer> {
  const server = await start(kind);
  server.store.setTools(TOOLS);
  cleanups.push(() => server.close());
  return server;
}

function renderApp(url: string, ui: ReactNode) {
  const queryClient = new QueryClient();
  cleanups.push(() => queryClient.clear());
  return render(
    <QueryClientProvider client={queryClient}>
      <McpProvider url={url} lingerMs={30}>
        {ui}
      </McpProvider>
    </QueryClientProvider>,
  );
}

interface Captured {
  current: ReturnType<typeof useCallTool> | undefined;
  /** Every distinct `progress` value rendered. */
  progress: Progress[];
}

/** Renders the mutation's state and hands the mutation of the last render to the test. */
function Caller({ captured }: { captured: Captured }) {
  const mutation = useCallTool();
  captured.current = mutation;
  if (mutation.progress && captured.progress.at(-1) !== mutation.progress) {
    captured.progress.push(mutation.progress);
  }
  const data = mutation.data
    ? ` data: ${textOf(mutation.data)}${mutation.data.isError ? ' (isError)' : ''}`
    : '';
  return (
    <div data-testid="call">
      {mutation.status}
      {mutation.error ? ` error: ${mutation.error.message}` : ''}
      {data}
    </div>
  );
}

function Status() {
  return <div data-testid="status">{useMcp().status}</div>;
}

function captureCallTool() {
  const captured: Captured = { current: undefined, progress: [] };
  const call = () => {
    if (!captured.current) throw new Error('not rendered');
    return captured.current;
  };
  return { ui: <Caller captured={captured} />, captured, call };
}

/** Calls a tool from its first effect, which runs before its provider's mount effect. */
function EarlyCaller({ order }: { order: string[] }) {
  const mutation = useCallTool();
  const status = useRef('');
  status.current = useMcp().status;
  const { mutate } = mutation;
  // A child's effect runs before its provider's mount effect: the connection is not even
  // started when this call is made.
  useEffect(() => {
    order.push(`call while ${status.current}`);
    mutate({ name: 'echo', arguments: { x: 7 } });
  }, [mutate, order]);
  return <div data-testid="early">{mutation.data ? textOf(mutation.data) : mutation.status}</div>;
}

describe.each(ERA_CASES)('tool calls ($kind)', ({ kind }) => {
  it('useCallTool resolves with the typed tool result', async () => {
    const server = await serve(kind);
    const { ui, call } = captureCallTool();
    renderApp(server.url, ui);
    let result: CallToolResult | undefined;
    await act(async () => {
      result = await call().mutateAsync({ name: 'echo', arguments: { x: 1 } });
    });
    expectTypeOf(call().data).toEqualTypeOf<CallToolResult | undefined>();
    expect(textOf(result)).toBe('called echo with {"x":1}');
    await eventually(() =>
      expect(screen.getByTestId('call').textContent).toBe('success data: called echo with {"x":1}'),
    );
    expect(call().error).toBeNull();
    expect(server.counters().toolCalls).toBe(1);
  });

  it('a tool answering isError is data.isError, not error', async () => {
    const server = await serve(kind);
    const { ui, call } = captureCallTool();
    renderApp(server.url, ui);
    act(() => call().mutate({ name: 'broken' }));
    await eventually(() =>
      expect(screen.getByTestId('call').textContent).toBe('success data: failed broken (isError)'),
    );
    expect(call().isError).toBe(false);
    expect(call().error).toBeNull();
    expect(call().data?.isError).toBe(true);
  });

  it('an unknown tool is an error (v1 servers report it as an isError result)', async () => {
    const server = await serve(kind);
    const { ui, call } = captureCallTool();
    renderApp(server.url, ui);
    act(() => call().mutate({ name: 'nope' }));
    await eventually(() => expect(call().isSuccess || call().isError).toBe(true));
    if (kind === 'legacy-v1') {
      // The v1 SDK's McpServer answers a result, not a JSON-RPC error (see legacyV1Server.ts).
      expect(call().data?.isError).toBe(true);
      expect(textOf(call().data)).toContain('Tool nope not found');
    } else {
      expect(call().isError).toBe(true);
      expect(call().error?.message).toContain('nope');
      expect(call().data).toBeUndefined();
    }
  });

  it('a transport failure (HTTP 502 for the call) is an error, and the connection stays', async () => {
    const server = await serve(kind);
    const proxy = await startTamperProxy(server.url, {
      respond: (exchange) =>
        exchange.method === 'tools/call'
          ? { status: 502, headers: { 'content-type': 'text/plain' }, body: 'Bad Gateway' }
          : undefined,
    });
    cleanups.push(() => proxy.close());
    const { ui, call } = captureCallTool();
    renderApp(
      proxy.url,
      <>
        <Status />
        {ui}
      </>,
    );
    await eventually(() => expect(screen.getByTestId('status').textContent).toBe('ready'));
    act(() => call().mutate({ name: 'echo', arguments: { x: 2 } }));
    await eventually(() => expect(call().isError).toBe(true));
    expect(call().data).toBeUndefined();
    expect(server.counters().toolCalls).toBe(0);
    expect(screen.getByTestId('status').textContent).toBe('ready');
  });

  it('progress notifications reach progress and onProgress', async () => {
    const server = await serve(kind);
    const { ui, call, captured } = captureCallTool();
    renderApp(server.url, ui);
    const seen: Progress[] = [];
    await act(async () => {
      await call().mutateAsync({
        name: 'slow',
        arguments: { x: 3 },
        onProgress: (progress) => seen.push(progress),
      });
    });
    const expected = [1, 2, 3].map((step) => ({
      progress: step,
      total: 3,
      message: `step ${step}`,
    }));
    expect(seen).toEqual(expected);
    expect(captured.progress.at(-1)).toEqual(expected[2]);
    expect(textOf(call().data)).toBe('called slow with {"x":3}');
  });

  it("progress shows the running call's only: a superseded call's notifications do not", async () => {
    const server = await serve(kind);
    const { ui, call, captured } = captureCallTool();
    renderApp(server.url, ui);
    await eventually(() => expect(call().status).toBe('idle'));
    const earlier: Progress[] = [];
    act(() => {
      // The earlier call reports its progress only after the later one has started.
      call().mutate({ name: 'paced', onProgress: (progress) => earlier.push(progress) });
      call().mutate({ name: 'held' });
    });
    await eventually(() => expect(earlier).toHaveLength(2));
    expect(call().isPending).toBe(true);
    expect(call().progress).toBeUndefined();
    expect(captured.progress).toEqual([]);
    expect(server.store.extras.release()).toBe(1);
    await eventually(() => expect(textOf(call().data)).toBe('called held with {}'));
  });

  it('progress stays cleared after cancel: a late notification of the cancelled call does not show', async () => {
    const server = await serve(kind);
    const { ui, call, captured } = captureCallTool();
    renderApp(server.url, ui);
    await eventually(() => expect(call().status).toBe('idle'));
    const seen: Progress[] = [];
    act(() => {
      call().mutate({ name: 'paced', onProgress: (progress) => seen.push(progress) });
    });
    await eventually(() => expect(captured.progress).toHaveLength(1));
    act(() => call().cancel());
    expect(call().progress).toBeUndefined();
    // The server stops the call; a notification already on its way has arrived by the time
    // another call's answer has.
    await eventually(() => expect(server.store.extras.cancelledCalls).toContain('paced'));
    const sync = new McpCacheSync({ queryClient: new CoreQueryClient(), url: server.url });
    cleanups.push(() => sync.dispose());
    sync.mount();
    await callTool(sync, { name: 'echo' });
    expect(call().cancelled).toBe(true);
    expect(call().progress).toBeUndefined();
    expect(captured.progress).toHaveLength(1);
    expect(seen).toHaveLength(1);
  });

  it('callToolMutationOptions works with a plain MutationObserver, without React', async () => {
    const server = await serve(kind);
    const queryClient = new CoreQueryClient();
    const sync = new McpCacheSync({ queryClient, url: server.url });
    cleanups.push(() => sync.dispose());
    sync.mount();
    const observer = new MutationObserver<CallToolResult, Error, CallToolVariables>(
      queryClient,
      callToolMutationOptions(sync),
    );
    const states: string[] = [];
    const stop = observer.subscribe((result) => states.push(result.status));
    cleanups.push(stop);
    const result = await observer.mutate({ name: 'echo', arguments: { x: 5 } });
    expect(textOf(result)).toBe('called echo with {"x":5}');
    expect(observer.getCurrentResult().data).toBe(result);
    expect(states).toEqual(['pending', 'success']);
    // Another tool's failure is data here too.
    expect((await observer.mutate({ name: 'broken' })).isError).toBe(true);
    expect(
      queryClient.getMutationCache().findAll({ mutationKey: sync.keys.callTool() }),
    ).toHaveLength(2);
  });

  it('a call started before the provider connects waits for the connection', async () => {
    const server = await serve(kind);
    const order: string[] = [];
    renderApp(server.url, <EarlyCaller order={order} />);
    await eventually(() =>
      expect(screen.getByTestId('early').textContent).toBe('called echo with {"x":7}'),
    );
    expect(order).toEqual(['call while connecting']);
    expect(server.counters().toolCalls).toBe(1);
  });

  it('a call through a plain McpCacheSync waits while it is connecting', async () => {
    const server = await serve(kind);
    const queryClient = new CoreQueryClient();
    const sync = new McpCacheSync({ queryClient, url: server.url });
    cleanups.push(() => sync.dispose());
    sync.mount();
    expect(sync.getState().status).toBe('connecting');
    const observer = new MutationObserver(queryClient, callToolMutationOptions(sync));
    const result = await observer.mutate({ name: 'echo', arguments: { x: 8 } });
    expect(textOf(result)).toBe('called echo with {"x":8}');
    await eventually(() => expect(sync.getState().status).toBe('ready'));
  });
});
