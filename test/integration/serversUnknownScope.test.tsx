/** @vitest-environment jsdom */
/**
 * A host's own state that still names a server the user removed (a "selected server" panel, a
 * tab of the server) renders before the host lets go of it. Under an `McpServersProvider`, a
 * hook given the scope of no server shows that as an error, `UNKNOWN_SERVER`, and connects
 * nowhere: it never throws into the tree. Outside one, an unknown scope is a mistake in the
 * code and still throws.
 */
import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { type ReactNode, useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { McpProvider, useMcp, useResource } from '../../src';
import { memoryStorage } from '../../src/auth';
import { McpServersProvider, useMcpServers } from '../../src/servers';
import { atEnd, closeAll, DOC, FAST, serverOf } from '../support/manager';
import { eventually } from '../support/wait';

afterEach(async () => {
  cleanup();
  await closeAll();
});

const textOf = (result: ReadResourceResult | undefined) => {
  const content = result?.contents[0];
  return content && 'text' in content ? content.text : '…';
};

/** A panel of one server, by the id the host keeps in its own state. */
function Panel({ scope }: { scope: string }) {
  const doc = useResource(DOC, { scope });
  const { status, error: connection } = useMcp(scope);
  const error = doc.error as (Error & { code?: string }) | null;
  return (
    <div data-testid="panel" data-status={status} data-read={doc.status}>
      {doc.status === 'error' ? `${error?.code}: ${error?.message}` : textOf(doc.data)}
      <output data-testid="connection">{connection?.message ?? ''}</output>
    </div>
  );
}

/** A host that selects the server it adds, and keeps that selection in its own state. */
function Host({ url, id = 'docs' }: { url: string; id?: string }) {
  const { servers, add, remove } = useMcpServers();
  const [selected, setSelected] = useState<string | undefined>();
  return (
    <div>
      <button
        type="button"
        onClick={() => {
          const result = add({ id, name: 'Docs', url });
          if (result.ok) setSelected(result.server.id);
        }}
      >
        add
      </button>
      <button type="button" onClick={() => selected && void remove(selected)}>
        remove
      </button>
      <button type="button" onClick={() => setSelected('never-added')}>
        select unknown
      </button>
      <output data-testid="count">{servers.length}</output>
      {selected && <Panel scope={selected} />}
    </div>
  );
}

function app(children: ReactNode) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  atEnd(() => queryClient.clear());
  return (
    <QueryClientProvider client={queryClient}>
      <McpServersProvider storage={memoryStorage()} channel={null} reconnect={FAST} lingerMs={10}>
        {children}
      </McpServersProvider>
    </QueryClientProvider>
  );
}

const panel = () => screen.getByTestId('panel');
/** Every JSON-RPC message the server saw over HTTP. */
const messages = (server: { counters(): { methods: Record<string, number> } }) =>
  Object.values(server.counters().methods).reduce((sum, n) => sum + n, 0);

describe('a hook whose scope names no server of the McpServersProvider above', () => {
  it('a panel still showing a server the user removed shows UNKNOWN_SERVER instead of throwing, and connects nowhere', async () => {
    const server = await serverOf('modern', 'docs');
    render(app(<Host url={server.url} />));
    fireEvent.click(screen.getByText('add'));
    await eventually(() => expect(panel().textContent).toContain('docs doc'));
    const seen = messages(server);

    await act(async () => {
      fireEvent.click(screen.getByText('remove'));
    });
    await eventually(() => expect(screen.getByTestId('count').textContent).toBe('0'));
    await eventually(() => expect(panel().dataset.read).toBe('error'));
    expect(panel().textContent).toMatch(/^UNKNOWN_SERVER: .*"docs"/);
    expect(panel().dataset.status).toBe('error');
    expect(screen.getByTestId('connection').textContent).toMatch(/"docs"/);
    // The panel's stand-in connects nowhere: the removed server heard nothing more.
    fireEvent.click(screen.getByText('select unknown'));
    await eventually(() => expect(panel().textContent).toMatch(/"never-added"/));
    expect(messages(server)).toBe(seen);
  });

  it('the same for an id that was never added; adding it then shows its data', async () => {
    const server = await serverOf('legacy-v2', 'late');
    render(app(<Host url={server.url} id="never-added" />));
    fireEvent.click(screen.getByText('select unknown'));
    await eventually(() => expect(panel().dataset.read).toBe('error'));
    expect(panel().textContent).toMatch(/^UNKNOWN_SERVER: .*"never-added"/);
    expect(messages(server)).toBe(0);

    fireEvent.click(screen.getByText('add'));
    await eventually(() => expect(panel().textContent).toContain('late doc'));
    expect(panel().dataset.status).toBe('ready');
  });

  it('inside an app McpProvider nested under the servers, a removed server still shows as an error', async () => {
    const server = await serverOf('modern', 'nested');
    const app2 = await serverOf('modern', 'app');
    render(
      app(
        <McpProvider url={app2.url} scope="app">
          <Host url={server.url} />
        </McpProvider>,
      ),
    );
    fireEvent.click(screen.getByText('add'));
    await eventually(() => expect(panel().textContent).toContain('nested doc'));
    await act(async () => {
      fireEvent.click(screen.getByText('remove'));
    });
    await eventually(() => expect(panel().dataset.read).toBe('error'));
    expect(panel().textContent).toMatch(/^UNKNOWN_SERVER/);
  });
});

describe('an unknown scope without an McpServersProvider', () => {
  it('still throws: a scope no provider has is a mistake in the code', () => {
    const queryClient = new QueryClient();
    atEnd(() => queryClient.clear());
    const quiet = console.error;
    console.error = () => {};
    try {
      expect(() =>
        render(
          <QueryClientProvider client={queryClient}>
            <McpProvider url="http://127.0.0.1:9/mcp" scope="a">
              <Panel scope="b" />
            </McpProvider>
          </QueryClientProvider>,
        ),
      ).toThrow(/no McpProvider or server with scope "b"/);
    } finally {
      console.error = quiet;
    }
  });
});
