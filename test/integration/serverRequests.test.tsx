/** @vitest-environment jsdom */
/**
 * Server-to-client requests (issue 11, part 2) against the three real servers: the server asks
 * for user input (`elicitation/create`), the app's model (`sampling/createMessage`) and the roots
 * (`roots/list`). On 2025 these are requests on the tool call's stream; on 2026-07-28 they come
 * inside `input_required` results and go through the same handlers. Pending elicitations are
 * rendered from `useElicitations()` and answered by a component; nothing the app does not
 * handle is left hanging.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import { QueryClient as CoreQueryClient } from '@tanstack/query-core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  callTool,
  createServerRequests,
  McpProvider,
  type PendingElicitation,
  type ServerRequestOptions,
  type ServerRequests,
  useCallTool,
  useElicitations,
} from '../../src';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import type { ElicitSchema, StoredTool, TestServer } from '../servers';
import { ERA_CASES, start } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

const FORM: ElicitSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', default: 'Ada' },
    age: { type: 'integer', title: 'Age', default: 36 },
    subscribe: { type: 'boolean', default: true },
  },
};

const TOOLS: StoredTool[] = [
  { name: 'ask', elicit: { message: 'Who are you?', requestedSchema: FORM } },
  { name: 'think', sample: { prompt: 'say hi' } },
  { name: 'where', listRoots: true },
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

/** Renders every pending elicitation with buttons that answer it, and counts renders of each. */
function Elicitations({ content }: { content?: Record<string, unknown> }) {
  const pending = useElicitations();
  return (
    <ul data-testid="pending">
      {pending.map((entry: PendingElicitation) => (
        <li key={entry.id}>
          <span>{entry.params.message}</span>
          <button type="button" onClick={() => entry.accept(content)}>
            accept
          </button>
          <button type="button" onClick={() => entry.decline()}>
            decline
          </button>
          <button type="button" onClick={() => entry.cancel()}>
            cancel
          </button>
        </li>
      ))}
    </ul>
  );
}

/** A button that calls a tool and shows the result (or the call's error). */
function Tool({ name }: { name: string }) {
  const mutation = useCallTool();
  const result = mutation.data;
  return (
    <div>
      <button type="button" onClick={() => mutation.mutate({ name })}>
        {`call ${name}`}
      </button>
      <div data-testid={`result ${name}`}>
        {mutation.error
          ? `error: ${String((mutation.error as { code?: unknown }).code)} ${mutation.error.message}`
          : result
            ? `${textOf(result)}${result.isError ? ' (isError)' : ''}`
            : mutation.status}
      </div>
    </div>
  );
}

function renderApp(url: string, serverRequests: ServerRequests | undefined, ui: ReactNode) {
  const queryClient = new QueryClient();
  cleanups.push(() => queryClient.clear());
  return render(
    <QueryClientProvider client={queryClient}>
      <McpProvider url={url} lingerMs={30} serverRequests={serverRequests}>
        {ui}
      </McpProvider>
    </QueryClientProvider>,
  );
}

const resultOf = (name: string) => screen.getByTestId(`result ${name}`).textContent;
const click = (label: string) => act(() => fireEvent.click(screen.getByText(label)));

/** A plain McpCacheSync (no React) with these server requests. */
function connect(url: string, options: ServerRequestOptions, toolTimeoutMs?: number) {
  const queryClient = new CoreQueryClient();
  const serverRequests = createServerRequests(options);
  const sync = new McpCacheSync({
    queryClient,
    url,
    serverRequests,
    ...(toolTimeoutMs !== undefined && { toolTimeoutMs }),
  });
  cleanups.push(() => sync.dispose());
  sync.mount();
  return { sync, serverRequests };
}

/** `ask` called with one answering subscriber (`stop` lets go), once its question waits. */
async function askedWithAFormMounted(kind: (typeof ERA_CASES)[number]['kind']) {
  const server = await serve(kind);
  const { sync, serverRequests } = connect(server.url, { elicitation: true });
  const stop = serverRequests.subscribeElicitations(() => {});
  const call = callTool(sync, { name: 'ask' });
  await eventually(() => expect(serverRequests.getElicitations()).toHaveLength(1));
  return { server, serverRequests, stop, call };
}

describe.each(ERA_CASES)('server requests ($kind)', ({ kind, era }) => {
  describe('elicitation', () => {
    it('a pending elicitation is rendered by useElicitations and accepted with content', async () => {
      const server = await serve(kind);
      const requests = createServerRequests({ elicitation: true });
      renderApp(
        server.url,
        requests,
        <>
          <Elicitations content={{ name: 'Grace', age: 85, subscribe: false }} />
          <Tool name="ask" />
        </>,
      );
      click('call ask');
      await eventually(() => expect(screen.getByText('Who are you?')).toBeTruthy());
      expect(requests.getElicitations()).toHaveLength(1);
      expect(requests.getElicitations()[0]?.params).toMatchObject({
        message: 'Who are you?',
        requestedSchema: FORM,
      });
      expect(resultOf('ask')).toBe('pending');
      click('accept');
      await eventually(() =>
        expect(resultOf('ask')).toBe('answered accept {"name":"Grace","age":85,"subscribe":false}'),
      );
      expect(screen.getByTestId('pending').children).toHaveLength(0);
      expect(requests.getElicitations()).toEqual([]);
    });

    it.each(['decline', 'cancel'])('%s reaches the server', async (action) => {
      const server = await serve(kind);
      const requests = createServerRequests({ elicitation: true });
      renderApp(
        server.url,
        requests,
        <>
          <Elicitations />
          <Tool name="ask" />
        </>,
      );
      click('call ask');
      await eventually(() => expect(screen.getByText('Who are you?')).toBeTruthy());
      click(action);
      await eventually(() => expect(resultOf('ask')).toBe(`answered ${action}`));
      expect(requests.getElicitations()).toEqual([]);
    });

    it('schema defaults fill what the user left out on accept', async () => {
      const server = await serve(kind);
      const requests = createServerRequests({ elicitation: true });
      renderApp(
        server.url,
        requests,
        <>
          <Elicitations content={{ age: 40 }} />
          <Tool name="ask" />
        </>,
      );
      click('call ask');
      await eventually(() => expect(screen.getByText('Who are you?')).toBeTruthy());
      click('accept');
      await eventually(() => expect(resultOf('ask')).toMatch(/^answered accept /));
      const content = JSON.parse((resultOf('ask') ?? '').slice('answered accept '.length));
      expect(content).toEqual({ name: 'Ada', age: 40, subscribe: true });
    });

    it('accept() without content sends the defaults', async () => {
      const server = await serve(kind);
      const requests = createServerRequests({ elicitation: true });
      renderApp(
        server.url,
        requests,
        <>
          <Elicitations />
          <Tool name="ask" />
        </>,
      );
      click('call ask');
      await eventually(() => expect(screen.getByText('Who are you?')).toBeTruthy());
      click('accept');
      await eventually(() =>
        expect(resultOf('ask')).toBe('answered accept {"name":"Ada","age":36,"subscribe":true}'),
      );
    });

    it('with elicitation on but no useElicitations mounted and no onElicitation, it is declined at once', async () => {
      const server = await serve(kind);
      const requests = createServerRequests({ elicitation: true });
      renderApp(server.url, requests, <Tool name="ask" />);
      click('call ask');
      await eventually(() => expect(resultOf('ask')).toBe('answered decline'));
      expect(requests.getElicitations()).toEqual([]);
      expect(server.store.pendingAsks()).toBe(0);
    });

    it('onElicitation answers in code, and wins over a mounted list', async () => {
      const server = await serve(kind);
      const asked: string[] = [];
      const requests = createServerRequests({
        elicitation: true,
        onElicitation: async (params) => {
          asked.push(params.message);
          return { action: 'accept', content: { name: 'Bot', age: 1, subscribe: false } };
        },
      });
      renderApp(
        server.url,
        requests,
        <>
          <Elicitations />
          <Tool name="ask" />
        </>,
      );
      click('call ask');
      await eventually(() =>
        expect(resultOf('ask')).toBe('answered accept {"name":"Bot","age":1,"subscribe":false}'),
      );
      expect(asked).toEqual(['Who are you?']);
      expect(screen.getByTestId('pending').children).toHaveLength(0);
    });

    it('onElicitation alone declares the capability', async () => {
      const server = await serve(kind);
      const { sync } = connect(server.url, {
        onElicitation: async () => ({ action: 'decline' }),
      });
      const result = await callTool(sync, { name: 'ask' });
      expect(textOf(result)).toBe('answered decline');
    });

    it('without elicitation the server gets the proper error, and nothing hangs', async () => {
      const server = await serve(kind);
      renderApp(
        server.url,
        createServerRequests({ sampling: async () => never() }),
        <Tool name="ask" />,
      );
      click('call ask');
      if (era === 'legacy') {
        // The request goes out; a client without the handler answers -32601 Method not found.
        await eventually(() =>
          expect(resultOf('ask')).toMatch(/^elicitation\/create failed: -32601 .* \(isError\)$/),
        );
        expect(server.store.asks()).toEqual([
          {
            tool: 'ask',
            method: 'elicitation/create',
            outcome: expect.objectContaining({ kind: 'error', code: -32601 }),
          },
        ]);
      } else {
        // 2026-07-28: the server itself refuses to ask a client that did not declare the
        // capability (-32021 MissingRequiredClientCapability); the call fails at once.
        await eventually(() =>
          expect(resultOf('ask')).toMatch(/^error: -32021 Cannot request input .*elicitation/),
        );
        expect(server.store.asks()).toEqual([]);
      }
      expect(server.store.pendingAsks()).toBe(0);
    });

    it('without any serverRequests the client declares nothing and the call ends', async () => {
      const server = await serve(kind);
      renderApp(server.url, undefined, <Tool name="ask" />);
      click('call ask');
      await eventually(() =>
        expect(resultOf('ask')).toMatch(
          era === 'legacy' ? /^elicitation\/create failed: -32601 / : /^error: -32021 /,
        ),
      );
    });

    it.skipIf(era === 'modern')('an elicitation the server cancels leaves the list', async () => {
      const server = await serve(kind);
      const requests = createServerRequests({ elicitation: true });
      renderApp(
        server.url,
        requests,
        <>
          <Elicitations />
          <Tool name="ask" />
        </>,
      );
      click('call ask');
      await eventually(() => expect(screen.getByText('Who are you?')).toBeTruthy());
      expect(server.store.cancelAsks()).toBe(1);
      await eventually(() => expect(screen.getByTestId('pending').children).toHaveLength(0));
      expect(requests.getElicitations()).toEqual([]);
      await eventually(() =>
        expect(resultOf('ask')).toBe('elicitation/create cancelled by the server (isError)'),
      );
    });

    // The package ends the HTTP request of a call given up on only a moment after the
    // cancellation, so the server's cancellation of its nested question still arrives.
    // Nobody left to answer is the same as nobody there: the question is declined rather than
    // left waiting for a form that is gone (on 2026-07-28 nothing else would ever end it).
    it('a question still waiting when the last answering component unmounts is declined', async () => {
      const { server, serverRequests, stop, call } = await askedWithAFormMounted(kind);
      stop();
      const first = (await call).content[0];
      expect(first?.type === 'text' ? first.text : undefined).toBe('answered decline');
      expect(serverRequests.getElicitations()).toEqual([]);
      await eventually(() => expect(server.store.pendingAsks()).toBe(0));
    });

    it('an answering component that unmounts and mounts again at once (StrictMode) keeps the question', async () => {
      const { serverRequests, stop, call } = await askedWithAFormMounted(kind);
      // The decline of an unanswerable question waits for the next macrotask: on fake timers,
      // that macrotask runs here, after the new subscription.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        stop();
        cleanups.push(serverRequests.subscribeElicitations(() => {}));
        await vi.advanceTimersByTimeAsync(0);
      } finally {
        vi.useRealTimers();
      }
      expect(serverRequests.getElicitations()).toHaveLength(1);
      serverRequests.getElicitations()[0]?.accept({ name: 'Ada' });
      const first = (await call).content[0];
      expect(first?.type === 'text' ? first.text : '').toMatch(/^answered accept /);
    });

    it('an elicitation whose call the app aborts leaves the list', async () => {
      const server = await serve(kind);
      const { sync, serverRequests } = connect(server.url, { elicitation: true });
      const stop = serverRequests.subscribeElicitations(() => {});
      cleanups.push(stop);
      const controller = new AbortController();
      const call = callTool(sync, { name: 'ask', signal: controller.signal });
      call.catch(() => {});
      await eventually(() => expect(serverRequests.getElicitations()).toHaveLength(1));
      controller.abort();
      await expect(call).rejects.toThrow();
      // The server gave up its question (its own record says so) ...
      await eventually(() => expect(server.store.pendingAsks()).toBe(0));
      // ... and the client must drop it from the list.
      await eventually(() => expect(serverRequests.getElicitations()).toEqual([]), {
        timeout: 1000,
      });
    });
  });

  describe('a user slower than toolTimeoutMs', () => {
    // 2025: the server asks while the tools/call request is open, so the call's timeout runs
    // while the user fills in the form. The call times out; its elicitation must not stay.
    it.runIf(era === 'legacy')(
      '2025: the call times out and its elicitation leaves the list',
      async () => {
        const server = await serve(kind);
        const { sync, serverRequests } = connect(server.url, { elicitation: true }, 300);
        cleanups.push(serverRequests.subscribeElicitations(() => {}));
        const call = callTool(sync, { name: 'ask' });
        call.catch(() => {});
        await eventually(() => expect(serverRequests.getElicitations()).toHaveLength(1));
        await expect(call).rejects.toThrow();
        await eventually(() => expect(server.store.pendingAsks()).toBe(0));
        await eventually(() => expect(serverRequests.getElicitations()).toEqual([]), {
          timeout: 1000,
        });
      },
    );

    // 2026-07-28: each leg of the call has its own timeout; the human's time between the
    // input_required result and the retry is not counted.
    it.runIf(era === 'modern')('2026-07-28: the call waits for the user', async () => {
      const server = await serve(kind);
      // Fake timers before the call: a timeout counting the user's time would be on them.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      cleanups.push(() => vi.useRealTimers());
      const { sync, serverRequests } = connect(server.url, { elicitation: true }, 300);
      cleanups.push(serverRequests.subscribeElicitations(() => {}));
      const call = callTool(sync, { name: 'ask' });
      await eventually(() => expect(serverRequests.getElicitations()).toHaveLength(1));
      await vi.advanceTimersByTimeAsync(500); // the user takes longer than toolTimeoutMs
      serverRequests.getElicitations()[0]?.accept({ name: 'Slow', age: 1, subscribe: false });
      expect(textOf(await call)).toBe('answered accept {"name":"Slow","age":1,"subscribe":false}');
    });
  });

  describe('sampling and roots', () => {
    it('sampling goes to the sampling option, the tool gets the model output', async () => {
      const server = await serve(kind);
      const prompts: unknown[] = [];
      const { sync } = connect(server.url, {
        sampling: async (params) => {
          prompts.push(params.messages[0]?.content);
          return {
            role: 'assistant',
            model: 'test-model',
            content: { type: 'text', text: 'hello from the model' },
          };
        },
      });
      const result = await callTool(sync, { name: 'think' });
      expect(textOf(result)).toBe('sampled hello from the model');
      expect(prompts).toEqual([{ type: 'text', text: 'say hi' }]);
    });

    it('roots are served; new roots are announced on 2025 and asked for on 2026', async () => {
      const server = await serve(kind);
      const { sync, serverRequests } = connect(server.url, {
        roots: [{ uri: 'file:///work/a', name: 'a' }],
      });
      expect(textOf(await callTool(sync, { name: 'where' }))).toBe('roots ["file:///work/a"]');
      expect(server.counters().rootsListChanged).toBe(0);
      expect(() => serverRequests.setRoots([{ uri: 'file:///work/b' }])).not.toThrow();
      if (era === 'legacy') {
        await eventually(() => expect(server.counters().rootsListChanged).toBe(1));
      }
      expect(textOf(await callTool(sync, { name: 'where' }))).toBe('roots ["file:///work/b"]');
      // 2026-07-28 has no roots/list_changed: the server asks again when it needs them. One
      // would have been sent before that call, which has been answered since.
      if (era === 'modern') expect(server.counters().rootsListChanged).toBe(0);
      expect(sync.getState().status).toBe('ready');
    });
  });
});

function never(): Promise<never> {
  return new Promise(() => {});
}
