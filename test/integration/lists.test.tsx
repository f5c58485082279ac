/** @vitest-environment jsdom */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import { type ReactNode, useState } from 'react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  McpProvider,
  mcpKeys,
  useMcpDiagnostics,
  usePromptList,
  useResourceTemplates,
  useToolList,
} from '../../src';
import type { TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start } from '../support/eras';
import { disposeSyncs, mountedSync } from '../support/syncs';
import { eventually, idle } from '../support/wait';

function Tools() {
  const tools = useToolList();
  return <div data-testid="tools">{tools.data?.map((tool) => tool.name).join(',') ?? '…'}</div>;
}

function Prompts() {
  const prompts = usePromptList();
  return <div data-testid="prompts">{prompts.data?.map((p) => p.name).join(',') ?? '…'}</div>;
}

function Templates() {
  const templates = useResourceTemplates();
  return (
    <div data-testid="templates">{templates.data?.map((t) => t.uriTemplate).join(',') ?? '…'}</div>
  );
}

function Acks() {
  const { lists } = useMcpDiagnostics();
  return <div data-testid="acks">{`tools:${lists.tools} prompts:${lists.prompts}`}</div>;
}

function Toggle({ children }: { children: ReactNode }) {
  const [shown, setShown] = useState(true);
  return (
    <>
      <button type="button" onClick={() => setShown((value) => !value)}>
        toggle
      </button>
      {shown && children}
    </>
  );
}

describe.each(ERA_CASES)('tools, prompts and templates lists ($kind)', ({ kind, era }) => {
  let server: TestServer;
  let queryClient: QueryClient;

  beforeEach(async () => {
    server = await start(kind);
    server.store.setTools([{ name: 'search' }]);
    server.store.setPrompts([{ name: 'summarise' }]);
    server.store.setTemplates([{ uriTemplate: 'note://{id}', name: 'note' }]);
    queryClient = new QueryClient();
  });

  afterEach(async () => {
    cleanup();
    await disposeSyncs();
    queryClient.clear();
    await server.close();
  });

  const app = (ui: ReactNode) =>
    render(
      <QueryClientProvider client={queryClient}>
        <McpProvider url={server.url} lingerMs={20}>
          {ui}
        </McpProvider>
      </QueryClientProvider>,
    );

  it('each list is live: a list_changed refetches it once, and only it', async () => {
    app(
      <>
        <Tools />
        <Prompts />
        <Templates />
        <Acks />
      </>,
    );
    await eventually(() => expect(screen.getByTestId('tools').textContent).toBe('search'));
    await eventually(() => expect(screen.getByTestId('prompts').textContent).toBe('summarise'));
    await eventually(() => expect(screen.getByTestId('templates').textContent).toBe('note://{id}'));
    await eventually(() =>
      expect(screen.getByTestId('acks').textContent).toBe('tools:true prompts:true'),
    );
    await idle(queryClient);
    const before = server.counters();
    const notified = () => {
      const { counters } = diagnosticsOf(mountedSync());
      return [counters.toolsListChanged, counters.promptsListChanged, counters.listChanged];
    };
    const [tools = 0, prompts = 0, resources = 0] = notified();
    // Acknowledged before the first reads: each list was read exactly once.
    expect([
      before.toolListRequests,
      before.promptListRequests,
      before.templateListRequests,
    ]).toEqual([1, 1, 1]);

    act(() => server.setTools([{ name: 'search' }, { name: 'fetch' }]));
    await eventually(() => expect(screen.getByTestId('tools').textContent).toBe('search,fetch'));
    act(() => server.setPrompts([{ name: 'translate' }]));
    await eventually(() => expect(screen.getByTestId('prompts').textContent).toBe('translate'));
    act(() => server.setTemplates([{ uriTemplate: 'doc://{+path}', name: 'doc' }]));
    await eventually(() =>
      expect(screen.getByTestId('templates').textContent).toBe('doc://{+path}'),
    );
    // Templates change with the resource list's notification.
    await eventually(() => expect(notified()).toEqual([tools + 1, prompts + 1, resources + 1]));
    await idle(queryClient);
    const after = server.counters();
    expect(after.toolListRequests - before.toolListRequests).toBe(1);
    expect(after.promptListRequests - before.promptListRequests).toBe(1);
    expect(after.templateListRequests - before.templateListRequests).toBe(1);
    expect(queryClient.getQueryData(mcpKeys.tools())).toHaveLength(2);
  });

  it('the tools list is only listened to while a hook shows it', async () => {
    app(
      <>
        <Toggle>
          <Tools />
        </Toggle>
        <Acks />
      </>,
    );
    await eventually(() => expect(screen.getByTestId('tools').textContent).toBe('search'));
    await eventually(() =>
      expect(screen.getByTestId('acks').textContent).toBe('tools:true prompts:false'),
    );
    act(() => screen.getByText('toggle').click());
    if (era === 'modern') {
      // A new listen stream without toolsListChanged replaces the old one after the linger.
      await eventually(() =>
        expect(screen.getByTestId('acks').textContent).toBe('tools:false prompts:false'),
      );
    }
    await idle(queryClient);
    const reads = server.counters().toolListRequests;
    const { listChanged } = diagnosticsOf(mountedSync()).counters;
    act(() => server.setTools([{ name: 'other' }]));
    // A notification the client does handle, on the same stream: once it has, the tools list's
    // (sent to 2025 sessions unasked, not at all on 2026-07-28) has been handled too.
    act(() => server.resourcesChanged());
    await eventually(() =>
      expect(diagnosticsOf(mountedSync()).counters.listChanged).toBe(listChanged + 1),
    );
    await idle(queryClient);
    // Nobody shows the list: at most it was marked stale, never refetched.
    expect(server.counters().toolListRequests).toBe(reads);
  });
});

describe('a server without tools or prompts', () => {
  it('lists nothing, listens to nothing for them, and does not fail', async () => {
    const server = await start('modern', {
      capabilities: { tools: false, prompts: false },
    });
    const queryClient = new QueryClient();
    try {
      render(
        <QueryClientProvider client={queryClient}>
          <McpProvider url={server.url} lingerMs={20}>
            <Tools />
            <Acks />
          </McpProvider>
        </QueryClientProvider>,
      );
      await eventually(() => expect(screen.getByTestId('tools').textContent).toBe(''));
      expect(screen.getByTestId('acks').textContent).toBe('tools:false prompts:false');
    } finally {
      cleanup();
      await disposeSyncs();
      queryClient.clear();
      await server.close();
    }
  });
});
