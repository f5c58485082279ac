/** @vitest-environment jsdom */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, render, screen } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { McpCacheSync, McpProvider, type McpProviderProps, useResource } from '../../src';
import { startTamperProxy, type TamperProxy, type TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start, text } from '../support/eras';
import { observeResource } from '../support/observe';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

const URI = 'config://app';

/** Everything a test opened, closed in reverse order. */
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  cleanup();
  await disposeSyncs();
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function serve(
  kind: TestServer['kind'],
  value: string,
  options?: Parameters<typeof start>[1],
) {
  const server = await start(kind, options);
  server.store.upsert(text(URI, value));
  cleanups.push(() => server.close());
  return server;
}

async function proxy(server: TestServer, rules: Parameters<typeof startTamperProxy>[1]) {
  const tamper = await startTamperProxy(server.url, rules);
  cleanups.push(() => tamper.close());
  return tamper;
}

function newQueryClient() {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  cleanups.push(() => queryClient.clear());
  return queryClient;
}

/** Every text a Viewer rendered, in order. */
const rendered: string[] = [];

function Viewer() {
  const query = useResource(URI);
  const content = query.data?.contents[0];
  const shown = content && 'text' in content ? content.text : '…';
  rendered.push(shown);
  return <div data-testid="viewer">{shown}</div>;
}

function app(queryClient: QueryClient, source: Partial<McpProviderProps>, children: ReactNode) {
  return (
    <QueryClientProvider client={queryClient}>
      <McpProvider lingerMs={20} {...source}>
        {children}
      </McpProvider>
    </QueryClientProvider>
  );
}

async function connectedClient(url: string) {
  const client = new Client(
    { name: 'host', version: '1' },
    { versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  cleanups.push(() => client.close());
  return client;
}

describe.each(ERA_CASES)('switching servers on a mounted McpProvider ($kind)', ({ kind }) => {
  async function servers() {
    const a = await serve(kind, 'from A');
    // B pushes nothing: neither subscribe nor listChanged. Its data must load anyway.
    const b = await serve(kind, 'from B', {
      capabilities: { subscribe: false, listChanged: false },
    });
    return { a, b };
  }

  async function switchAndCheck(
    first: Partial<McpProviderProps>,
    second: Partial<McpProviderProps>,
  ) {
    const queryClient = newQueryClient();
    const view = render(app(queryClient, first, <Viewer />));
    await eventually(() => expect(screen.getByTestId('viewer').textContent).toBe('from A'));
    rendered.length = 0;
    view.rerender(app(queryClient, second, <Viewer />));
    // Not even the first render after the switch shows A's data.
    expect(rendered[0]).not.toBe('from A');
    await eventually(() => expect(screen.getByTestId('viewer').textContent).toBe('from B'));
    expect(rendered).not.toContain('from A');
  }

  it('changing url never renders the previous server’s data', async () => {
    const { a, b } = await servers();
    await switchAndCheck({ url: a.url }, { url: b.url });
  });

  it('changing client never renders the previous server’s data', async () => {
    const { a, b } = await servers();
    const [clientA, clientB] = await Promise.all([connectedClient(a.url), connectedClient(b.url)]);
    await switchAndCheck({ client: clientA }, { client: clientB });
  });

  it('changing transport never renders the previous server’s data', async () => {
    const { a, b } = await servers();
    const toA = () => new StreamableHTTPClientTransport(new URL(a.url));
    const toB = () => new StreamableHTTPClientTransport(new URL(b.url));
    await switchAndCheck({ transport: toA }, { transport: toB });
  });
});

describe.each(ERA_CASES)('the end of a connection (rule 11, $kind)', ({ kind }) => {
  /** Nothing of ours is left on the server: no 2025 session, no SSE GET, no listen stream. */
  const nothingLeft = (server: TestServer, tamper?: TamperProxy) => {
    expect(server.liveSessions()).toBe(0);
    expect(server.openStreams()).toBe(0);
    if (tamper) expect(tamper.openStreams()).toBe(0);
  };

  it('dispose() resolves once the transport is closed and the session ended on the server', async () => {
    const server = await serve(kind, 'v1');
    const queryClient = newQueryClient();
    const sync = new McpCacheSync({ queryClient, url: server.url, lingerMs: 20 });
    const view = observeResource(sync, URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    await eventually(() => expect(diagnosticsOf(sync)?.resources[0]?.acknowledged).toBe(true));
    expect(server.openStreams()).toBe(1);
    view.unmount();
    await sync.dispose();
    // At once, no polling: the 2025 session (and its GET stream) ended with the DELETE we waited
    // for. A listen stream ends when its request is cut, which the server sees a moment later.
    expect(server.liveSessions()).toBe(0);
    if (kind === 'modern') await eventually(() => expect(server.openStreams()).toBe(0));
    else expect(server.openStreams()).toBe(0);
    expect(sync.getState().status).toBe('closed');
  });

  // The 2025 handshake is a version probe (`server/discover`, answered 400 by a 2025 server),
  // then `initialize`, then `notifications/initialized`; 2026-07-28 has only the probe.
  const steps = kind === 'modern' ? ['server/discover'] : ['server/discover', 'initialize'];

  it.each(steps)(
    'unmounting while %s is in flight leaves nothing on the server',
    async (method) => {
      const server = await serve(kind, 'v1');
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let reached = false;
      const tamper = await proxy(server, {
        hold: (exchange) => {
          if (exchange.method !== method) return undefined;
          reached = true;
          return held;
        },
      });
      const queryClient = newQueryClient();
      const view = render(app(queryClient, { url: tamper.url }, <Viewer />));
      await eventually(() => expect(reached).toBe(true));
      view.unmount();
      release();
      await eventually(() => nothingLeft(server, tamper));
    },
  );

  it('rapid mount/unmount cycles leave nothing on the server', async () => {
    const server = await serve(kind, 'v1');
    // Every exchange that reaches the server is counted, and the handshake's requests are held a
    // moment, so an unmount can land while any one of them is on its way.
    let arrived = 0;
    let onArrival: (() => void) | undefined;
    const tamper = await proxy(server, {
      hold: (exchange) => {
        arrived += 1;
        onArrival?.();
        return exchange.method === undefined ? undefined : 3;
      },
    });
    const queryClient = newQueryClient();
    // The first cycle loads in full: how many exchanges that takes is the number of phases.
    const first = render(app(queryClient, { url: tamper.url }, <Viewer />));
    await eventually(() => expect(screen.getByTestId('viewer').textContent).toBe('v1'));
    const phases = arrived;
    first.unmount();
    // Then each cycle unmounts in the next phase: at once, or as its k-th exchange arrives. The
    // teardowns of earlier cycles run meanwhile, and their exchanges count too.
    for (let cycle = 0; cycle < 20; cycle++) {
      const k = cycle % (phases + 1);
      const start = arrived;
      let unmount = () => {};
      const unmounted = new Promise<void>((resolve) => {
        onArrival = () => {
          if (arrived - start < k) return;
          onArrival = undefined;
          unmount();
          resolve();
        };
      });
      const view = render(app(queryClient, { url: tamper.url }, <Viewer />));
      unmount = () => view.unmount();
      if (k === 0) onArrival?.();
      await unmounted;
    }
    // Every provider's teardown, complete (its session ended on the server), then its sockets.
    await disposeSyncs();
    await eventually(() => nothingLeft(server, tamper));
  });
});

describe.each(ERA_CASES.filter(({ era }) => era === 'legacy'))(
  'a 2025 server that refuses the standalone SSE stream ($kind)',
  ({ kind }) => {
    it('reads at once: no read waits for an acknowledgement that cannot come', async () => {
      const server = await serve(kind, 'v1');
      const tamper = await proxy(server, {
        respond: (exchange) => (exchange.httpMethod === 'GET' ? { status: 405 } : undefined),
      });
      const queryClient = newQueryClient();
      // Were the read to wait for coverage, it would wait this long: far past the test's timeout.
      const sync = new McpCacheSync({ queryClient, url: tamper.url, ackTimeoutMs: 600_000 });
      cleanups.push(() => sync.dispose());
      const view = observeResource(sync, URI);
      cleanups.push(view.unmount);
      await eventually(() => expect(view.text()).toBe('v1'), { timeout: 10_000 });
      await eventually(() => expect(diagnosticsOf(sync)?.stream.state).toBe('unsupported'));
      // Its row says why it is not covered, and a URI shown later asks the server for nothing.
      const row = () => diagnosticsOf(sync)?.resources.find((r) => r.uri === URI);
      expect(row()).toMatchObject({ acknowledged: false });
      expect(row()?.declined).toContain('notifications cannot arrive');
      const subscribes = () => tamper.stats('resources/subscribe').requests;
      const before = subscribes();
      server.store.upsert(text('note://later', 'later'));
      const later = observeResource(sync, 'note://later');
      cleanups.push(later.unmount);
      await eventually(() => expect(later.text()).toBe('later'));
      expect(subscribes()).toBe(before);
    });
  },
);

describe.each(ERA_CASES)('diagnostics over time ($kind)', ({ kind }) => {
  it.each([
    ['kept forever', Number.POSITIVE_INFINITY],
    ['dropped at once', 0],
  ])('keep nothing for released URIs when the cache has them %s', async (_, gcTime) => {
    const server = await serve(kind, 'v1');
    const uris = Array.from({ length: 30 }, (_, i) => `note://${i}`);
    for (const uri of uris) server.store.upsert(text(uri, uri));
    const queryClient = new QueryClient({ defaultOptions: { queries: { gcTime } } });
    cleanups.push(() => queryClient.clear());
    const sync = new McpCacheSync({ queryClient, url: server.url, lingerMs: 10 });
    cleanups.push(() => sync.dispose());
    const views = uris.map((uri) => observeResource(sync, uri));
    await eventually(() => expect(views.every((view) => view.text() !== undefined)).toBe(true));
    expect(diagnosticsOf(sync)?.resources).toHaveLength(30);
    for (const view of views) view.unmount();
    await eventually(() => expect(diagnosticsOf(sync)?.resources).toEqual([]));
  });

  it('stay linear in the length of server-controlled URIs', async () => {
    // A server decides these strings. A near-miss check that backtracks on runs of slashes
    // would take minutes on this one; a linear one takes milliseconds.
    // 2026-07-28 repeats the URI in an HTTP header (Mcp-Name), which Node caps at 16 KB.
    const length = kind === 'modern' ? 12_000 : 200_000;
    const hostile = `x://a${'/'.repeat(length)}b`;
    const server = await serve(kind, 'v1');
    server.store.upsert(text(hostile, 'hostile'));
    const tamper = await proxy(server, {});
    const queryClient = newQueryClient();
    const sync = new McpCacheSync({ queryClient, url: tamper.url, lingerMs: 10 });
    cleanups.push(() => sync.dispose());
    const view = observeResource(sync, hostile);
    cleanups.push(view.unmount);
    await eventually(() => expect(view.text()).toBe('hostile'));
    await eventually(() => expect(diagnosticsOf(sync)?.resources[0]?.acknowledged).toBe(true));
    const unmatched = [`y://a${'/'.repeat(length)}b`, 'X://A/B'];
    for (const uri of unmatched) {
      tamper.inject({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
    }
    await eventually(() => expect(diagnosticsOf(sync)?.counters.unmatched).toBe(2));
    for (let snapshot = 0; snapshot < 60; snapshot++) {
      tamper.inject({
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri: unmatched[0] },
      });
      await eventually(() => expect(diagnosticsOf(sync)?.counters.unmatched).toBe(3 + snapshot));
    }
    expect(diagnosticsOf(sync)?.checks.find((check) => check.id === 'uri-match')?.ok).toBe(false);
  });
});
