/** @vitest-environment jsdom */
/**
 * Rule 8 through `useCallTool`: a call whose own `timeoutMs` or `maxTotalTimeoutMs` no timer can
 * take fails at once with INVALID_OPTIONS naming it, is never sent to the server, and is not
 * retried (no retry can make it work), whatever `retry` says. On a real server.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render } from '@testing-library/react';
import { afterEach, expect, it } from 'vitest';
import { McpProvider, type UseCallToolOptions, useCallTool } from '../../src';
import type { TestServer } from '../servers';
import { atEnd, closeAll } from '../support/atEnd';
import { serve } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

afterEach(async () => {
  cleanup();
  await disposeSyncs();
  await closeAll();
});

interface Captured {
  call?: ReturnType<typeof useCallTool>;
}

function Caller({ options, captured }: { options: UseCallToolOptions; captured: Captured }) {
  captured.call = useCallTool(options);
  return null;
}

function app(server: TestServer, options: UseCallToolOptions) {
  const queryClient = new QueryClient();
  atEnd(() => queryClient.clear());
  const captured: Captured = {};
  render(
    <QueryClientProvider client={queryClient}>
      <McpProvider url={server.url}>
        <Caller options={options} captured={captured} />
      </McpProvider>
    </QueryClientProvider>,
  );
  return () => captured.call as ReturnType<typeof useCallTool>;
}

it.each([
  ['timeoutMs', { timeoutMs: Number.NaN }],
  ['timeoutMs', { timeoutMs: 2 ** 31 }],
  ['maxTotalTimeoutMs', { maxTotalTimeoutMs: -1 }],
  ['maxTotalTimeoutMs', { maxTotalTimeoutMs: Number.POSITIVE_INFINITY }],
])(
  'a call with a %s no timer can take fails at once, unsent and not retried (%o)',
  async (named, durations) => {
    const server = await serve('modern');
    server.store.setTools([{ name: 'quick' }]);
    // Retries 1 s apart: a retried call would still be pending when the check below runs.
    const call = app(server, { retry: 3, retryDelay: 1000 });
    await eventually(() => expect(call()).toBeDefined());
    act(() => call().mutate({ name: 'quick', ...durations }));
    await eventually(() => expect(call().isError).toBe(true), { timeout: 500 });
    expect(call().error).toMatchObject({
      code: 'INVALID_OPTIONS',
      message: expect.stringContaining(`${named} must be from 1 to`),
    });
    expect(call().failureCount).toBe(1);
    expect(server.counters().toolCalls).toBe(0);
    // The hook works on: a call it can make runs.
    let result: unknown;
    await act(async () => {
      result = await call().mutateAsync({ name: 'quick', timeoutMs: 5000 });
    });
    expect(result).toMatchObject({ content: [{ text: 'called quick with {}' }] });
    expect(server.counters().toolCalls).toBe(1);
  },
);
