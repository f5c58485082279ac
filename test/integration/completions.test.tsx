/** @vitest-environment jsdom */
/**
 * Completions (issue 21): `useCompletion({ ref, argument, value, context })` on the three real
 * servers and the reference server: suggestions for a prompt argument and a template variable,
 * asked once the typing pauses, a request the next keystroke made useless cancelled on the
 * server, only the latest answer shown, answers reused per value, and nothing sent to a server
 * that declared no completions.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { McpProvider, useCompletion } from '../../src';
import type { ServerCapabilityOptions, TestServer } from '../servers';
import { startEverythingServer } from '../servers/everything';
import { atEnd, closeAll } from '../support/atEnd';
import { deferred } from '../support/deferred';
import { ERA_CASES, serve as serveEra } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually, idle } from '../support/wait';

afterEach(async () => {
  cleanup();
  await disposeSyncs();
  await closeAll();
});

async function serve(
  kind: (typeof ERA_CASES)[number]['kind'],
  capabilities?: ServerCapabilityOptions,
): Promise<TestServer> {
  const server = await serveEra(kind, capabilities);
  server.store.setPrompts([
    {
      name: 'greet',
      arguments: [{ name: 'who' }],
      completions: { who: ['Alice', 'Albert', 'Bob'] },
    },
  ]);
  server.store.setTemplates([
    { uriTemplate: 'file:///{path}', name: 'file', completions: { path: ['a.txt', 'b.txt'] } },
  ]);
  return server;
}

type Ref = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

interface Props {
  value: string;
  ref?: Ref;
  argument?: string;
  context?: Record<string, string>;
  debounceMs?: number;
}

function Completer({ value, ref, argument, context, debounceMs = 0 }: Props) {
  const completion = useCompletion({
    ref: ref ?? { type: 'ref/prompt', name: 'greet' },
    argument: argument ?? 'who',
    value,
    ...(context && { context }),
    debounceMs,
  });
  return (
    <div data-testid="c">
      {completion.supported === false
        ? 'unsupported'
        : completion.error
          ? `error ${completion.error.message}`
          : `${completion.values.join(',')}${completion.isFetching ? ' …' : ''}`}
    </div>
  );
}

function app(url: string, props: Props) {
  const queryClient = new QueryClient();
  atEnd(() => queryClient.clear());
  const ui = (next: Props) => (
    <QueryClientProvider client={queryClient}>
      <McpProvider url={url} lingerMs={20}>
        <Completer {...next} />
      </McpProvider>
    </QueryClientProvider>
  );
  const view = render(ui(props));
  return { queryClient, type: (next: Props) => act(() => view.rerender(ui(next))) };
}

const shown = () => screen.getByTestId('c').textContent;

describe.each(ERA_CASES)('completions ($kind)', ({ kind, era }) => {
  it('suggests values for a prompt argument and for a template variable', async () => {
    const server = await serve(kind);
    const { type } = app(server.url, { value: 'al' });
    await eventually(() => expect(shown()).toBe('Alice,Albert'));
    type({ value: '', ref: { type: 'ref/resource', uri: 'file:///{path}' }, argument: 'path' });
    await eventually(() => expect(shown()).toBe('a.txt,b.txt'));
  });

  it('a superseded request is cancelled on the server, and only the latest answer shows', async () => {
    const server = await serve(kind);
    const held = deferred<void>();
    let calls = 0;
    server.store.extras.onComplete(() => {
      calls += 1;
      // The first request waits until the test lets it go; the second answers at once.
      if (calls === 1) return held.promise;
    });
    const { queryClient, type } = app(server.url, { value: 'a' });
    await eventually(() => expect(calls).toBe(1));
    type({ value: 'b' });
    await eventually(() => expect(shown()).toBe('Bob'));
    held.resolve();
    await eventually(() => expect(server.store.extras.cancelledCompletions).toBe(1));
    if (era === 'legacy') expect(server.counters().methods['notifications/cancelled']).toBe(1);
    // The superseded request has ended on both sides: nothing is left that could still show.
    await idle(queryClient);
    expect(shown()).toBe('Bob');
  });

  it('an answer is reused for a value asked again a moment later', async () => {
    const server = await serve(kind);
    const { queryClient, type } = app(server.url, { value: 'a' });
    await eventually(() => expect(shown()).toBe('Alice,Albert'));
    type({ value: 'b' });
    await eventually(() => expect(shown()).toBe('Bob'));
    await idle(queryClient);
    const before = server.store.extras.completeRequests;
    type({ value: 'a' });
    await eventually(() => expect(shown()).toBe('Alice,Albert'));
    // A re-ask would have started as the value changed: once nothing fetches, it was counted.
    await idle(queryClient);
    expect(server.store.extras.completeRequests).toBe(before);
  });

  it('a server that declared no completions is asked nothing (rule 15)', async () => {
    const server = await serve(kind, { completions: false });
    const { queryClient } = app(server.url, { value: 'a' });
    await eventually(() => expect(shown()).toBe('unsupported'));
    // A request would be a fetch of the completion query: once none runs, it would be counted.
    await idle(queryClient);
    expect(server.counters().methods['completion/complete']).toBeUndefined();
  });
});

it('useCompletion on the reference server: a completable prompt, narrowed by context', async () => {
  const server = await startEverythingServer();
  atEnd(() => server.close());
  const ref: Ref = { type: 'ref/prompt', name: 'completable-prompt' };
  const { type } = app(server.url, { ref, argument: 'department', value: 'E' });
  await eventually(() => expect(shown()).toBe('Engineering'));
  type({ ref, argument: 'name', value: '', context: { department: 'Sales' } });
  await eventually(() => expect(shown()).toBe('David,Eve,Frank'));
});
