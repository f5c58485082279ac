/** @vitest-environment jsdom */
import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import { Component, type ReactNode, Suspense } from 'react';
import { renderToString } from 'react-dom/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  expandTemplate,
  type McpCacheSync,
  McpProvider,
  resourceListQueryOptions,
  resourceQueryOptions,
  useMcp,
  useResource,
  useResourceList,
  useSuspenseResource,
} from '../../src';
import { McpDevtools } from '../../src/devtools';
import type { TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start, text } from '../support/eras';
import { disposeSyncs, mountedSync, mountedSyncs } from '../support/syncs';
import { eventually, idle } from '../support/wait';

const URI = 'config://app';

function Text({ uri, scope, label }: { uri: string; scope?: string; label: string }) {
  const query = useResource(uri, scope === undefined ? undefined : { scope });
  const content = query.data?.contents[0];
  return <div data-testid={label}>{content && 'text' in content ? content.text : '…'}</div>;
}

function SuspenseText({ uri }: { uri: string }) {
  const { data } = useSuspenseResource(uri);
  const content = data.contents[0];
  return <div data-testid="suspense">{content && 'text' in content ? content.text : ''}</div>;
}

function Plain() {
  const { data } = useQuery(resourceQueryOptions(URI));
  return (
    <div data-testid="plain">
      {data?.contents[0] && 'text' in data.contents[0] ? data.contents[0].text : '…'}
    </div>
  );
}

class Boundary extends Component<{ children: ReactNode }, { error?: Error }> {
  override state: { error?: Error } = {};
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  override render() {
    return this.state.error ? (
      <div data-testid="boundary">caught: {this.state.error.message}</div>
    ) : (
      this.props.children
    );
  }
}

function Status({ scope }: { scope: string }) {
  const { status, era } = useMcp(scope);
  return <div data-testid={`status-${scope}`}>{`${status} ${era ?? '-'}`}</div>;
}

describe.each(ERA_CASES)('beyond the basics ($kind)', ({ kind, era }) => {
  let server: TestServer;
  let queryClient: QueryClient;

  beforeEach(async () => {
    server = await start(kind);
    server.store.upsert(text(URI, 'v1'));
    server.store.upsert(text('note://7', 'note seven'));
    queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  });

  afterEach(async () => {
    cleanup();
    await disposeSyncs();
    queryClient.clear();
    await server.close();
  });

  const app = (ui: ReactNode) => (
    <QueryClientProvider client={queryClient}>
      <McpProvider url={server.url} lingerMs={20}>
        {ui}
      </McpProvider>
    </QueryClientProvider>
  );

  it('options helpers share keys with the hooks: prefetch, ensureQueryData, plain useQuery', async () => {
    render(app(<Plain />));
    await eventually(() => expect(screen.getByTestId('plain').textContent).toBe('v1'));
    const list = await queryClient.ensureQueryData(resourceListQueryOptions());
    expect(list.map((resource) => resource.uri)).toEqual([URI, 'note://7']);
    await queryClient.prefetchQuery(resourceQueryOptions('note://7'));
    expect(
      queryClient.getQueryData(resourceQueryOptions('note://7').queryKey)?.contents[0],
    ).toMatchObject({
      text: 'note seven',
    });
    // A hook mounted later finds the prefetched data without another read.
    await idle(queryClient);
    const reads = server.store.reads('note://7');
    render(app(<Text uri="note://7" label="later" />));
    expect(screen.getByTestId('later').textContent).toBe('note seven');
    // That app's provider has a connection of its own, whose subscription starts after the
    // prefetch: the entry is read once more, after its acknowledgement (rule 4), not twice.
    const later = mountedSyncs()[1] as McpCacheSync;
    await eventually(() =>
      expect(diagnosticsOf(later).resources.find((r) => r.uri === 'note://7')?.acknowledged).toBe(
        true,
      ),
    );
    await idle(queryClient);
    expect(server.store.reads('note://7') - reads).toBe(1);
  });

  it('a prefetch issued before any provider mounts waits for one', async () => {
    const pending = queryClient.fetchQuery(resourceQueryOptions(URI));
    // Its query function has run and found nobody to serve it: it waits, nothing was read.
    expect(queryClient.getQueryState(resourceQueryOptions(URI).queryKey)?.fetchStatus).toBe(
      'fetching',
    );
    expect(server.store.reads()).toBe(0);
    render(app(<div />));
    await expect(pending).resolves.toMatchObject({ contents: [{ text: 'v1' }] });
  });

  it('useSuspenseResource suspends, then stays live; errors reach the boundary', async () => {
    render(
      app(
        <Boundary>
          <Suspense fallback={<div data-testid="fallback">loading</div>}>
            <SuspenseText uri={URI} />
          </Suspense>
        </Boundary>,
      ),
    );
    expect(screen.getByTestId('fallback')).toBeTruthy();
    await eventually(() => expect(screen.getByTestId('suspense').textContent).toBe('v1'));
    await eventually(() =>
      expect(diagnosticsOf(mountedSync()).resources[0]?.acknowledged).toBe(true),
    );
    await idle(queryClient);
    expect(server.store.reads(URI)).toBe(1); // primed from render: read after the acknowledgement
    act(() => server.setText(URI, 'v2'));
    await eventually(() => expect(screen.getByTestId('suspense').textContent).toBe('v2'));
    cleanup();

    render(
      app(
        <Boundary>
          <Suspense fallback={null}>
            <SuspenseText uri="missing://nothing" />
          </Suspense>
        </Boundary>,
      ),
    );
    await eventually(() => expect(screen.getByTestId('boundary').textContent).toContain('caught'));
  });

  it('a URI from expandTemplate is what gets read and subscribed', async () => {
    const uri = expandTemplate('note://{id}', { id: 7 });
    render(app(<Text uri={uri} label="note" />));
    await eventually(() => expect(screen.getByTestId('note').textContent).toBe('note seven'));
    await eventually(() => expect(server.subscribedUris()).toEqual(['note://7']));
    act(() => server.setText('note://7', 'edited'));
    await eventually(() => expect(screen.getByTestId('note').textContent).toBe('edited'));
  });

  it('the devtools panel shows the connection and the diagnostics', async () => {
    render(
      app(
        <>
          <Text uri={URI} label="a" />
          <McpDevtools initialOpen />
        </>,
      ),
    );
    await eventually(() =>
      expect(screen.getByLabelText('MCP devtools').textContent).toContain(`ready · ${era}`),
    );
    await eventually(() =>
      expect(screen.getByLabelText('MCP devtools').textContent).toContain(URI),
    );
    expect(screen.getByLabelText('MCP devtools').textContent).toContain(
      'The change stream is alive',
    );
  });
});

describe('several servers in one app', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    cleanup();
    await disposeSyncs();
    for (const server of servers.splice(0)) await server.close();
  });

  it('two scoped providers on one QueryClient never cross-invalidate the same URI', async () => {
    const a = await start('modern');
    const b = await start('legacy-v2');
    servers.push(a, b);
    a.store.upsert(text(URI, 'from a'));
    b.store.upsert(text(URI, 'from b'));
    const queryClient = new QueryClient();
    render(
      <QueryClientProvider client={queryClient}>
        <McpProvider url={a.url} scope="a" lingerMs={20}>
          <McpProvider url={b.url} scope="b" lingerMs={20}>
            <Text uri={URI} scope="a" label="a" />
            <Text uri={URI} label="b" />
            <Status scope="a" />
            <Status scope="b" />
          </McpProvider>
        </McpProvider>
      </QueryClientProvider>,
    );
    await eventually(() => expect(screen.getByTestId('a').textContent).toBe('from a'));
    await eventually(() => expect(screen.getByTestId('b').textContent).toBe('from b'));
    await eventually(() => expect(screen.getByTestId('status-a').textContent).toBe('ready modern'));
    await eventually(() => expect(screen.getByTestId('status-b').textContent).toBe('ready legacy'));
    await eventually(() => expect(b.subscribedUris()).toEqual([URI]));
    for (const sync of mountedSyncs()) {
      await eventually(() => expect(diagnosticsOf(sync).resources[0]?.acknowledged).toBe(true));
    }
    await idle(queryClient);
    const readsA = a.store.reads(URI);

    act(() => b.setText(URI, 'b changed'));
    await eventually(() => expect(screen.getByTestId('b').textContent).toBe('b changed'));
    // A read of a's entry would have started with b's, from the same notification.
    await idle(queryClient);
    expect(screen.getByTestId('a').textContent).toBe('from a');
    expect(a.store.reads(URI)).toBe(readsA);
    expect(queryClient.getQueryData(['mcp', 'a', 'resource', URI])).toMatchObject({
      contents: [{ text: 'from a' }],
    });
    queryClient.clear();
  });
});

describe('an empty scope is a scope', () => {
  afterEach(async () => {
    cleanup();
    await disposeSyncs();
  });

  it('a provider with scope "" and one without serve their own servers side by side', async () => {
    const a = await start('modern');
    const b = await start('legacy-v2');
    a.store.upsert(text(URI, 'from a'));
    b.store.upsert(text(URI, 'from b'));
    const queryClient = new QueryClient();
    try {
      render(
        <QueryClientProvider client={queryClient}>
          <McpProvider url={b.url} scope="" lingerMs={20}>
            <McpProvider url={a.url} lingerMs={20}>
              <Text uri={URI} label="unscoped" />
              <Text uri={URI} scope="" label="empty" />
            </McpProvider>
          </McpProvider>
        </QueryClientProvider>,
      );
      await eventually(() => expect(screen.getByTestId('unscoped').textContent).toBe('from a'));
      await eventually(() => expect(screen.getByTestId('empty').textContent).toBe('from b'));
      act(() => b.setText(URI, 'b changed'));
      await eventually(() => expect(screen.getByTestId('empty').textContent).toBe('b changed'));
      expect(screen.getByTestId('unscoped').textContent).toBe('from a');
    } finally {
      cleanup();
      await disposeSyncs();
      queryClient.clear();
      await a.close();
      await b.close();
    }
  });
});

function ListedUris() {
  const list = useResourceList();
  return <div data-testid="listed">{list.data?.map((resource) => resource.uri).join(' ')}</div>;
}

// useResourceList promises every page. In the matrix's suites, so both ends of the client range
// (the SDK walks the pages when asked without a cursor) show it.
describe.each(ERA_CASES)('a $kind server that lists in pages', ({ kind }) => {
  it('useResourceList reads every page, once', async () => {
    const server = await start(kind, { pageSize: 2 });
    const uris = ['page://1', 'page://2', 'page://3', 'page://4', 'page://5'];
    for (const uri of uris) server.store.upsert(text(uri, uri));
    const queryClient = new QueryClient();
    try {
      render(
        <QueryClientProvider client={queryClient}>
          <McpProvider url={server.url} lingerMs={20}>
            <ListedUris />
          </McpProvider>
        </QueryClientProvider>,
      );
      await eventually(() => expect(screen.getByTestId('listed').textContent).toBe(uris.join(' ')));
      await idle(queryClient);
      expect(server.counters().listRequests).toBe(3); // pages of 2, 2 and 1
    } finally {
      cleanup();
      await disposeSyncs();
      queryClient.clear();
      await server.close();
    }
  });
});

describe('server rendering', () => {
  it('renderToString opens no connection and throws nothing; hydration then connects', async () => {
    const server = await start('modern');
    server.store.upsert(text(URI, 'v1'));
    try {
      const queryClient = new QueryClient();
      const ui = (
        <QueryClientProvider client={queryClient}>
          <McpProvider url={server.url}>
            <Text uri={URI} label="ssr" />
          </McpProvider>
        </QueryClientProvider>
      );
      const html = renderToString(ui);
      expect(html).toContain('…');
      expect(queryClient.isFetching()).toBe(0);

      const container = document.createElement('div');
      container.innerHTML = html;
      document.body.append(container);
      const { hydrateRoot } = await import('react-dom/client');
      const root = hydrateRoot(container, ui);
      await eventually(() => expect(container.textContent).toBe('v1'));
      // Everything the server saw is hydration's: one subscription, one read.
      await eventually(() =>
        expect(diagnosticsOf(mountedSync()).resources[0]?.acknowledged).toBe(true),
      );
      await idle(queryClient);
      expect(server.counters().listenRequests).toBe(1);
      expect(server.store.reads()).toBe(1);
      act(() => root.unmount());
      container.remove();
      queryClient.clear();
    } finally {
      await disposeSyncs();
      await server.close();
    }
  });
});
