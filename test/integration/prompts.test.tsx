/** @vitest-environment jsdom */
/**
 * Prompts (issue 21): `usePrompt(name, args)` and `promptQueryOptions` on the three real servers
 * and the reference server: `prompts/get` as a query keyed by name and arguments, re-read on
 * `prompts/list_changed` while shown, and nothing sent to a server that declared no prompts or
 * for arguments of the wrong shape.
 */
import type { GetPromptResult } from '@modelcontextprotocol/client';
import { QueryClient as CoreQueryClient } from '@tanstack/query-core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { McpProvider, McpQueryError, mcpKeys, promptQueryOptions, usePrompt } from '../../src';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import type { ServerCapabilityOptions, TestServer } from '../servers';
import { startEverythingServer } from '../servers/everything';
import { atEnd, closeAll } from '../support/atEnd';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, serve as serveEra } from '../support/eras';
import { disposeSyncs, mountedSync } from '../support/syncs';
import { eventually, idle } from '../support/wait';

const PROMPTS = [
  { name: 'greet', arguments: [{ name: 'who', required: true }] },
  { name: 'plain' },
];

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
  server.store.setPrompts(PROMPTS);
  return server;
}

function renderApp(url: string, ui: ReactNode) {
  const queryClient = new QueryClient();
  atEnd(() => queryClient.clear());
  const view = render(
    <QueryClientProvider client={queryClient}>
      <McpProvider url={url} lingerMs={20}>
        {ui}
      </McpProvider>
    </QueryClientProvider>,
  );
  return { queryClient, ...view };
}

const textOf = (result: GetPromptResult | undefined) => {
  const content = result?.messages[0]?.content;
  return content?.type === 'text' ? content.text : undefined;
};

function Prompt({ name, args, id }: { name: string; args?: Record<string, string>; id: string }) {
  const prompt = usePrompt(name, args, { retry: false });
  const error = prompt.error as McpQueryError | null;
  return (
    <div data-testid={id}>
      {error ? `error ${error.code ?? ''}: ${error.message}` : (textOf(prompt.data) ?? '…')}
    </div>
  );
}

const shown = (id: string) => screen.getByTestId(id).textContent;

/**
 * Once the prompts list's notifications are delivered (gaining them may re-read what is shown)
 * and nothing fetches, every prompts/get so far has been counted.
 */
async function promptsSettled(queryClient: QueryClient) {
  await eventually(() => expect(diagnosticsOf(mountedSync()).lists.prompts).toBe(true));
  await idle(queryClient);
}

const promptsListChanged = () => diagnosticsOf(mountedSync()).counters.promptsListChanged;

describe.each(ERA_CASES)('prompts ($kind)', ({ kind }) => {
  it('usePrompt gets a prompt with its arguments, once', async () => {
    const server = await serve(kind);
    const { queryClient } = renderApp(
      server.url,
      <Prompt id="p" name="greet" args={{ who: 'Ann' }} />,
    );
    await eventually(() => expect(shown('p')).toBe('prompt greet rev 1 with {"who":"Ann"}'));
    await promptsSettled(queryClient);
    expect(server.counters().promptGets).toBe(1);
    expect(queryClient.getQueryData(mcpKeys.prompt('greet', { who: 'Ann' }))).toMatchObject({
      messages: [{ role: 'user' }],
    });
  });

  it('a shown prompt is read again on prompts/list_changed; one not shown only goes stale', async () => {
    const server = await serve(kind);
    const { queryClient } = renderApp(
      server.url,
      <Prompt id="p" name="greet" args={{ who: 'Bo' }} />,
    );
    await queryClient.fetchQuery(promptQueryOptions('plain'));
    await eventually(() => expect(shown('p')).toBe('prompt greet rev 1 with {"who":"Bo"}'));
    await promptsSettled(queryClient);
    const before = server.counters().promptGets;
    const notified = promptsListChanged();
    server.store.extras.promptRevision = 2;
    act(() => server.promptsChanged());
    await eventually(() => expect(shown('p')).toBe('prompt greet rev 2 with {"who":"Bo"}'));
    // The notification was handled (its reads started then): once nothing fetches, all counted.
    await eventually(() => expect(promptsListChanged()).toBe(notified + 1));
    await idle(queryClient);
    expect(server.counters().promptGets - before).toBe(1);
    expect(queryClient.getQueryState(mcpKeys.prompt('plain'))?.isInvalidated).toBe(true);
  });

  it('a server that declared no prompts gets no prompts/get: NOT_SUPPORTED (rule 15)', async () => {
    const server = await serve(kind, { prompts: false });
    renderApp(server.url, <Prompt id="p" name="greet" args={{ who: 'Ann' }} />);
    await eventually(() => expect(shown('p')).toMatch(/^error NOT_SUPPORTED: .*prompts/));
    expect(server.counters().methods['prompts/get']).toBeUndefined();
  });

  it('arguments that are not strings are refused before anything is sent', async () => {
    const server = await serve(kind);
    renderApp(
      server.url,
      <Prompt id="p" name="greet" args={{ who: 7 } as unknown as Record<string, string>} />,
    );
    await eventually(() => expect(shown('p')).toMatch(/^error INVALID_ARGUMENTS: /));
    expect(server.counters().methods['prompts/get']).toBeUndefined();
  });

  it('promptQueryOptions works without React, and a server error is the query error', async () => {
    const server = await serve(kind);
    const queryClient = new CoreQueryClient();
    const sync = new McpCacheSync({ queryClient, url: server.url });
    atEnd(() => sync.dispose());
    sync.mount();
    const result = await queryClient.fetchQuery(promptQueryOptions('greet', { who: 'Cy' }));
    expect(textOf(result)).toBe('prompt greet rev 1 with {"who":"Cy"}');
    // A required argument missing: the server's -32602, not retried.
    await expect(queryClient.fetchQuery(promptQueryOptions('greet', {}))).rejects.toMatchObject({
      code: -32602,
    });
    expect(server.counters().promptGets).toBe(2);
  });
});

it('usePrompt on the reference server (server-everything): a prompt with arguments', async () => {
  const server = await startEverythingServer();
  atEnd(() => server.close());
  renderApp(server.url, <Prompt id="p" name="args-prompt" args={{ city: 'Oslo', state: 'N' }} />);
  await eventually(() => expect(shown('p')).toBe("What's weather in Oslo, N?"));
  expect(server.methods()['prompts/get']).toBe(1);
  expect(McpQueryError).toBeDefined();
});
