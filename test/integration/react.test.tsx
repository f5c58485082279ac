/** @vitest-environment jsdom */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import { StrictMode, useState } from 'react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  McpProvider,
  type McpProviderProps,
  mcpKeys,
  useMcp,
  useMcpDiagnostics,
  useResource,
  useResourceList,
} from '../../src';
import type { TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start, text } from '../support/eras';
import { disposeSyncs, mountedSync } from '../support/syncs';
import { eventually, idle } from '../support/wait';

const URI = 'config://app';

function Viewer({ uri, label }: { uri: string; label: string }) {
  const query = useResource(uri);
  const content = query.data?.contents[0];
  return (
    <div data-testid={label}>
      {query.error ? `error: ${query.error.message}` : ''}
      {content && 'text' in content ? content.text : query.isPending ? 'loading' : ''}
    </div>
  );
}

function Unsubscribed({ uri }: { uri: string }) {
  const query = useResource(uri, { subscribe: false });
  const content = query.data?.contents[0];
  return <div data-testid="unsubscribed">{content && 'text' in content ? content.text : ''}</div>;
}

function Status() {
  const { status, era, client } = useMcp();
  return <div data-testid="status">{`${status} ${era ?? '-'} ${client ? 'client' : 'none'}`}</div>;
}

function List() {
  const list = useResourceList();
  return <div data-testid="list">{list.data?.map((r) => r.uri).join(',')}</div>;
}

function Diagnostics() {
  const diagnostics = useMcpDiagnostics();
  const resource = diagnostics.resources.find((r) => r.uri === URI);
  return (
    <div data-testid="diagnostics">
      {`stream:${diagnostics.stream.state} ack:${resource?.acknowledged ?? false} legacy:${diagnostics.legacy}`}
    </div>
  );
}

function Toggle() {
  const [shown, setShown] = useState({ a: true, b: true });
  return (
    <>
      <button type="button" onClick={() => setShown((s) => ({ ...s, a: !s.a }))}>
        a
      </button>
      <button type="button" onClick={() => setShown((s) => ({ ...s, b: !s.b }))}>
        b
      </button>
      {shown.a && <Viewer uri={URI} label="a" />}
      {shown.b && <Viewer uri="note://1" label="b" />}
    </>
  );
}

describe.each(ERA_CASES)('hooks against the $kind server', ({ kind, era }) => {
  let server: TestServer;
  let queryClient: QueryClient;

  beforeEach(async () => {
    server = await start(kind);
    server.store.upsert(text(URI, 'v1'));
    server.store.upsert(text('note://1', 'a note'));
    queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  });

  afterEach(async () => {
    cleanup();
    await disposeSyncs();
    queryClient.clear();
    await server.close();
  });

  function renderApp(ui: React.ReactNode, props: Partial<McpProviderProps> = {}) {
    return render(
      <QueryClientProvider client={queryClient}>
        <McpProvider url={server.url} lingerMs={30} {...props}>
          {ui}
        </McpProvider>
      </QueryClientProvider>,
    );
  }

  it('every mounted component shows the new content after an update, with one subscription', async () => {
    renderApp(
      <>
        <Status />
        <Viewer uri={URI} label="a" />
        <Viewer uri={URI} label="b" />
        <List />
        <Diagnostics />
      </>,
    );
    await eventually(() => expect(screen.getByTestId('a').textContent).toBe('v1'));
    expect(screen.getByTestId('b').textContent).toBe('v1');
    await eventually(() =>
      expect(screen.getByTestId('status').textContent).toBe(`ready ${era} client`),
    );
    await eventually(() => expect(screen.getByTestId('list').textContent).toBe(`${URI},note://1`));
    await eventually(() =>
      expect(screen.getByTestId('diagnostics').textContent).toBe(
        `stream:open ack:true legacy:${era === 'legacy'}`,
      ),
    );
    expect(server.subscribedUris()).toEqual([URI]);
    await idle(queryClient);
    const reads = server.store.reads(URI);

    act(() => server.setText(URI, 'v2'));
    await eventually(() => expect(screen.getByTestId('a').textContent).toBe('v2'));
    expect(screen.getByTestId('b').textContent).toBe('v2');
    await idle(queryClient);
    expect(server.store.reads(URI) - reads).toBe(1);
    expect(queryClient.getQueryData(mcpKeys.resource(URI))).toMatchObject({
      contents: [{ uri: URI, text: 'v2' }],
    });
  });

  it('StrictMode mount → unmount → mount leaves one connection and one subscription', async () => {
    render(
      <StrictMode>
        <QueryClientProvider client={queryClient}>
          <McpProvider url={server.url} lingerMs={30}>
            <Viewer uri={URI} label="a" />
          </McpProvider>
        </QueryClientProvider>
      </StrictMode>,
    );
    await eventually(() => expect(screen.getByTestId('a').textContent).toBe('v1'));
    // StrictMode's remount happened before the effects settled; once the one mounted
    // McpCacheSync is covered and idle, every request it made has been answered.
    const sync = mountedSync();
    await eventually(() => expect(diagnosticsOf(sync).resources[0]?.acknowledged).toBe(true));
    await idle(queryClient);
    expect(server.subscribedUris()).toEqual([URI]);
    expect(server.openStreams()).toBe(1);
    const counters = server.counters();
    if (era === 'modern') {
      expect(counters.listenRequests).toBe(1);
    } else {
      expect(counters.subscribeRequests).toBe(1);
      expect(counters.unsubscribeRequests).toBe(0);
    }
    expect(server.store.reads(URI)).toBe(1);
  });

  it('mount/unmount churn in React follows the reference count on the server', async () => {
    renderApp(<Toggle />);
    await eventually(() => expect(server.subscribedUris()).toEqual([URI, 'note://1']));
    act(() => screen.getByText('a').click());
    await eventually(() => expect(server.subscribedUris()).toEqual(['note://1']));
    act(() => screen.getByText('b').click());
    await eventually(() => expect(server.subscribedUris()).toEqual([]));
    act(() => screen.getByText('a').click());
    await eventually(() => expect(server.subscribedUris()).toEqual([URI]));
  });

  it('an empty or non-string uri is an error state, sends nothing, and does not crash the tree', async () => {
    renderApp(
      <>
        <Viewer uri="" label="empty" />
        <Viewer uri={42 as unknown as string} label="number" />
        <Viewer uri={URI} label="ok" />
      </>,
    );
    await eventually(() => expect(screen.getByTestId('ok').textContent).toBe('v1'));
    await eventually(() =>
      expect(screen.getByTestId('empty').textContent).toContain('non-empty string'),
    );
    expect(screen.getByTestId('number').textContent).toContain('non-empty string');
    expect(server.store.reads()).toBe(1);
    expect(server.subscribedUris()).toEqual([URI]);
  });

  it('subscribe: false reads without subscribing on the server', async () => {
    renderApp(<Unsubscribed uri={URI} />);
    await eventually(() => expect(screen.getByTestId('unsubscribed').textContent).toBe('v1'));
    // Nothing was ever wanted, so no subscription can be on its way.
    expect(diagnosticsOf(mountedSync()).resources).toEqual([]);
    expect(server.subscribedUris()).toEqual([]);
    expect(server.counters().subscribeRequests).toBe(0);
  });

  it('unmounting the provider closes its connection and subscriptions', async () => {
    const view = renderApp(<Viewer uri={URI} label="a" />);
    await eventually(() => expect(screen.getByTestId('a').textContent).toBe('v1'));
    await eventually(() => expect(server.openStreams()).toBe(1));
    view.unmount();
    await eventually(() => expect(server.openStreams()).toBe(0));
    if (era === 'modern') expect(server.subscribedUris()).toEqual([]);
  });
});

function Broken() {
  useResource(URI);
  return null;
}

describe('hooks outside a provider', () => {
  afterEach(cleanup);
  it('say where they must be used', () => {
    const queryClient = new QueryClient();
    expect(() =>
      render(
        <QueryClientProvider client={queryClient}>
          <Broken />
        </QueryClientProvider>,
      ),
    ).toThrow('useResource must be used inside <McpProvider>');
  });
});
