/** @vitest-environment jsdom */
/**
 * Issue 20: `<McpApp>` on the three real servers, up to the frame: which tool and which view, the
 * view's HTML through the cache (read once however often it is shown, reloaded when the server
 * changes it, persisted when public), and every bad input ending in a clear error state. The
 * frames themselves (sandbox proxy, view, postMessage) are Chromium's, in test/e2e/apps.e2e.ts:
 * jsdom loads no frame, so a view here never initialises.
 */
import type { JSONRPCMessage, Tool, Transport } from '@modelcontextprotocol/client';
import { App } from '@modelcontextprotocol/ext-apps';
import { dehydrate, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render, screen } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { McpProvider, shouldPersistQuery } from '../../src';
import { McpApp, type McpAppError } from '../../src/apps';
import { toolListQueryOptions } from '../../src/core/queryOptions';
import type { StoredTool, TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start } from '../support/eras';
import { disposeSyncs, mountedSync } from '../support/syncs';
import { eventually, idle } from '../support/wait';

const VIEW = 'ui://board/view.html';
const MIME = 'text/html;profile=mcp-app';
const HTML = '<!doctype html><html><body>view</body></html>';
const SANDBOX = 'http://127.0.0.1:9/sandbox';

const TOOLS: StoredTool[] = [
  { name: 'show_board', _meta: { ui: { resourceUri: VIEW } } },
  { name: 'show_missing', _meta: { ui: { resourceUri: 'ui://board/missing.html' } } },
  { name: 'show_image', _meta: { ui: { resourceUri: 'ui://board/logo.png' } } },
  { name: 'show_elsewhere', _meta: { ui: { resourceUri: 'ui://other/view.html' } } },
  { name: 'plain' },
  { name: 'bad_uri', _meta: { ui: { resourceUri: 'https://evil.example/app.html' } } },
];

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  cleanup();
  await disposeSyncs();
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function serve(
  kind: (typeof ERA_CASES)[number]['kind'],
  tools: StoredTool[] = TOOLS,
): Promise<TestServer> {
  const server = await start(kind);
  server.store.setTools(tools);
  server.store.upsert({
    uri: VIEW,
    name: 'view',
    mimeType: MIME,
    text: HTML,
    cacheScope: 'public',
  });
  server.store.upsert({
    uri: 'ui://board/logo.png',
    name: 'logo',
    mimeType: 'image/png',
    blob: 'iVBORw0KGgo=',
  });
  cleanups.push(() => server.close());
  return server;
}

function renderApp(url: string, ui: ReactNode, queryClient = new QueryClient()) {
  cleanups.push(() => queryClient.clear());
  const wrap = (children: ReactNode) => (
    <QueryClientProvider client={queryClient}>
      <McpProvider url={url} lingerMs={30}>
        {children}
      </McpProvider>
    </QueryClientProvider>
  );
  const rendered = render(wrap(ui));
  /** The same providers, other children. */
  const show = (children: ReactNode) => rendered.rerender(wrap(children));
  return { ...rendered, show, queryClient };
}

/** The sandbox frame, once it is rendered. */
const frameIn = (container: HTMLElement) =>
  eventually(() => {
    const found = container.querySelector('iframe');
    expect(found).not.toBeNull();
    return found as HTMLIFrameElement;
  });

const errorOf = async () => {
  const alert = await eventually(() => screen.getByRole('alert'));
  return { code: alert.getAttribute('data-code'), message: alert.textContent };
};

/** A message from the sandbox proxy in `iframe` (jsdom loads no frame: the test plays it). */
function fromSandbox(iframe: HTMLIFrameElement, data: unknown) {
  window.dispatchEvent(
    new MessageEvent('message', {
      data,
      origin: new URL(SANDBOX).origin,
      source: iframe.contentWindow,
    }),
  );
}

/**
 * The view in `iframe`, an ext-apps `App` whose messages go both ways as the sandbox proxy relays
 * them (jsdom loads no frame, so the test plays the proxy): ready once it has initialised.
 */
async function viewIn(iframe: HTMLIFrameElement) {
  const transport: Transport = {
    start: async () => {},
    send: async (message) => fromSandbox(iframe, structuredClone(message)),
    close: async () => transport.onclose?.(),
  };
  vi.spyOn(iframe.contentWindow as Window, 'postMessage').mockImplementation((message: unknown) =>
    transport.onmessage?.(structuredClone(message) as JSONRPCMessage),
  );
  fromSandbox(iframe, { jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready' });
  const app = new App({ name: 'test-view', version: '1.0.0' }, {}, { autoResize: false });
  const partials: unknown[] = [];
  app.ontoolinputpartial = (params) => partials.push(params.arguments);
  await app.connect(transport);
  await eventually(() => expect(iframe.getAttribute('data-mcp-app')).toBe('ready'));
  cleanups.push(() => app.close());
  return { app, partials };
}

/** The board view, its server declaring `csp`, shown with what the host's onLog is told. */
async function withCsp(csp: Record<string, unknown>) {
  const server = await serve('modern');
  server.store.upsert({
    uri: VIEW,
    name: 'view',
    mimeType: MIME,
    text: HTML,
    _meta: { ui: { csp } },
  });
  const logs: unknown[] = [];
  const app = <McpApp tool="show_board" sandbox={SANDBOX} onLog={(params) => logs.push(params)} />;
  return { app, logs, ...renderApp(server.url, app) };
}

/**
 * Once the server covers `uri` (its subscription acknowledged, which may re-read it) and nothing
 * fetches, every read the view will cost has been counted.
 */
async function readsSettled(uri: string, queryClient: QueryClient) {
  await eventually(() =>
    expect(diagnosticsOf(mountedSync()).resources.find((r) => r.uri === uri)?.acknowledged).toBe(
      true,
    ),
  );
  await idle(queryClient);
}

describe.each(ERA_CASES)('<McpApp> on the $kind server', ({ kind }) => {
  it("renders the tool's view in a sandbox frame, and reads its HTML once however many times it is shown", async () => {
    const server = await serve(kind);
    const { container, queryClient } = renderApp(
      server.url,
      <>
        <McpApp tool="show_board" sandbox={SANDBOX} />
        <McpApp tool="show_board" sandbox={SANDBOX} />
        <McpApp tool="show_board" sandbox={SANDBOX} />
      </>,
    );
    await eventually(() => expect(container.querySelectorAll('iframe')).toHaveLength(3));
    const frame = container.querySelector('iframe');
    const src = new URL(frame?.getAttribute('src') ?? '');
    expect(src.origin).toBe('http://127.0.0.1:9');
    expect(src.searchParams.get('host')).toBe(window.location.origin);
    expect(src.searchParams.get('csp')).toBe('{}');
    expect(frame?.getAttribute('sandbox')).toBe('allow-scripts allow-same-origin allow-forms');
    await readsSettled(VIEW, queryClient);
    expect(server.store.reads(VIEW)).toBe(1);
  });

  it('shown again later, even where nothing keeps it fresh by subscription, the view costs no second read', async () => {
    const server = await start(kind, { capabilities: { subscribe: false } });
    cleanups.push(() => server.close());
    server.store.setTools(TOOLS);
    server.store.upsert({ uri: VIEW, name: 'view', mimeType: MIME, text: HTML });
    const { container, show, queryClient } = renderApp(
      server.url,
      <McpApp tool="show_board" sandbox={SANDBOX} />,
    );
    // Nothing covers the view here (no subscriptions), so no acknowledgement to wait for.
    await eventually(() => expect(container.querySelectorAll('iframe')).toHaveLength(1));
    await idle(queryClient);
    show(
      <>
        <McpApp tool="show_board" sandbox={SANDBOX} />
        <McpApp tool="show_board" sandbox={SANDBOX} />
      </>,
    );
    await eventually(() => expect(container.querySelectorAll('iframe')).toHaveLength(2));
    // A second read would have started as the new views mounted.
    await idle(queryClient);
    expect(server.store.reads(VIEW)).toBe(1);
  });

  it('reloads the view when the server changes its HTML', async () => {
    const server = await serve(kind);
    const { container } = renderApp(server.url, <McpApp tool="show_board" sandbox={SANDBOX} />);
    await eventually(() => expect(container.querySelector('iframe')).not.toBeNull());
    const before = container.querySelector('iframe');
    await eventually(() => expect(server.subscribedUris()).toContain(VIEW));
    server.setText(VIEW, '<!doctype html><html><body>view v2</body></html>');
    await eventually(() => {
      const now = container.querySelector('iframe');
      expect(now).not.toBeNull();
      expect(now).not.toBe(before);
    });
  });

  it('a missing ui:// resource is a NOT_FOUND error, read once', async () => {
    const server = await serve(kind);
    const { queryClient } = renderApp(server.url, <McpApp tool="show_missing" sandbox={SANDBOX} />);
    expect(await errorOf()).toEqual({
      code: 'NOT_FOUND',
      message: 'ui://board/missing.html was not found on the server',
    });
    await readsSettled('ui://board/missing.html', queryClient);
    expect(server.store.reads('ui://board/missing.html')).toBe(1);
  });

  it('a ui:// resource that is not an MCP App is a NOT_AN_APP error', async () => {
    const server = await serve(kind);
    renderApp(server.url, <McpApp tool="show_image" sandbox={SANDBOX} />);
    expect(await errorOf()).toEqual({
      code: 'NOT_AN_APP',
      message: `ui://board/logo.png is "image/png", not an MCP App (${MIME})`,
    });
  });

  it('a tool whose view lives on another server is an error here, and the other server is never asked', async () => {
    const server = await serve(kind);
    const other = await serve(kind, [{ name: 'show_other', _meta: { ui: { resourceUri: VIEW } } }]);
    other.store.upsert({ uri: 'ui://other/view.html', name: 'v', mimeType: MIME, text: HTML });
    const otherTool: Tool = {
      name: 'show_other',
      inputSchema: { type: 'object' },
      _meta: { ui: { resourceUri: VIEW } },
    };
    // The other server's entry for a tool of the same name, with its own view.
    const sameName: Tool = {
      name: 'show_board',
      inputSchema: { type: 'object' },
      _meta: { ui: { resourceUri: 'ui://other/view.html' } },
    };
    const errors: McpAppError[] = [];
    renderApp(
      server.url,
      <>
        <McpApp tool="show_elsewhere" sandbox={SANDBOX} onError={(e) => errors.push(e)} />
        <McpApp tool={otherTool} sandbox={SANDBOX} onError={(e) => errors.push(e)} />
        <McpApp tool={sameName} sandbox={SANDBOX} onError={(e) => errors.push(e)} />
      </>,
    );
    await eventually(() => expect(screen.getAllByRole('alert')).toHaveLength(3));
    expect(screen.getAllByRole('alert').map((alert) => alert.textContent)).toEqual([
      'ui://other/view.html was not found on the server',
      'no tool "show_other" on this server',
      'no tool "show_board" on this server',
    ]);
    expect(errors.map((error) => error.code).sort()).toEqual([
      'NOT_FOUND',
      'UNKNOWN_TOOL',
      'UNKNOWN_TOOL',
    ]);
    expect(other.store.reads()).toBe(0);
    expect(other.counters().toolListRequests).toBe(0);
  });

  it('a tool without a view, or with a view that is not ui://, is a NO_UI error', async () => {
    const server = await serve(kind);
    renderApp(
      server.url,
      <>
        <McpApp tool="plain" sandbox={SANDBOX} />
        <McpApp tool="bad_uri" sandbox={SANDBOX} />
      </>,
    );
    await eventually(() => expect(screen.getAllByRole('alert')).toHaveLength(2));
    expect(screen.getAllByRole('alert').map((alert) => alert.textContent)).toEqual([
      'tool "plain" has no ui:// view',
      'tool "bad_uri" declares "https://evil.example/app.html" as its view, not a ui:// URI',
    ]);
    expect(server.store.reads()).toBe(0);
  });
});

describe('<McpApp> (one server)', () => {
  it('keeps its view (the same frame) when the server adds a tool before its own in the list', async () => {
    const server = await serve('modern');
    const { container, queryClient } = renderApp(
      server.url,
      <McpApp tool="show_board" sandbox={SANDBOX} />,
    );
    const before = await frameIn(container);
    const tools = toolListQueryOptions().queryKey;
    await eventually(() => expect(queryClient.getQueryData(tools)).toHaveLength(TOOLS.length));
    // Nothing about show_board changes: only its place in the list.
    act(() => server.setTools([{ name: 'added_first' }, ...TOOLS]));
    await eventually(() => expect(queryClient.getQueryData(tools)).toHaveLength(TOOLS.length + 1));
    await idle(queryClient);
    expect(container.querySelector('iframe')).toBe(before);
  });

  it('a host that renders partialInput as a new but equal object each time tells the view once, and again only when it changed', async () => {
    const server = await serve('modern');
    const app = (partialInput: Record<string, unknown>) => (
      <McpApp tool="show_board" sandbox={SANDBOX} partialInput={partialInput} />
    );
    const { container, show } = renderApp(server.url, app({ q: 'a' }));
    const view = await viewIn(await frameIn(container));
    await eventually(() => expect(view.partials).toEqual([{ q: 'a' }]));
    for (let i = 0; i < 5; i += 1) show(app({ q: 'a' }));
    show(app({ q: 'ab' }));
    show(app({ q: 'ab' }));
    await eventually(() => expect(view.partials).toHaveLength(2));
    // The host's answer to a later request comes after anything it sent before.
    await view.app.request({ method: 'ping' });
    expect(view.partials).toEqual([{ q: 'a' }, { q: 'ab' }]);
  });

  it('tells the host through onLog, once, what of its server’s declared CSP was left out (not plain origins), so its blocked requests are explained', async () => {
    const { app, logs, container, show } = await withCsp({
      connectDomains: ['https://api.example.com', "'unsafe-eval'", 'https://cdn.example.com/lib'],
      resourceDomains: 'https://img.example.com',
    });
    const iframe = await frameIn(container);
    // The kept origin reaches the sandbox; the rest is told to the host when the view is sent.
    expect(new URL(iframe.src).searchParams.get('csp')).toBe(
      JSON.stringify({ connectDomains: ['https://api.example.com'] }),
    );
    expect(logs).toEqual([]);
    fromSandbox(iframe, { jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready' });
    await eventually(() => expect(logs).toHaveLength(1));
    expect(logs[0]).toEqual({
      level: 'warning',
      logger: 'mcp-react-query/apps',
      data: `${VIEW}: its server's CSP declares what is not a plain origin (scheme://host[:port]), which the view's sandbox leaves out, so the view's requests to it are blocked: connectDomains: 'unsafe-eval'; connectDomains: https://cdn.example.com/lib; resourceDomains: not a list`,
    });
    show(app);
    await idle(mountedSync().queryClient);
    expect(logs).toHaveLength(1);
  });

  it('a server’s CSP left out at length is told in part: at most 10 entries of 100 characters', async () => {
    const { logs, container } = await withCsp({
      connectDomains: Array.from({ length: 12 }, (_, i) => `${'x'.repeat(200)}${i}`),
    });
    fromSandbox(await frameIn(container), {
      jsonrpc: '2.0',
      method: 'ui/notifications/sandbox-proxy-ready',
    });
    await eventually(() => expect(logs).toHaveLength(1));
    const data = String((logs[0] as { data?: unknown }).data);
    expect(data.endsWith(` connectDomains: ${'x'.repeat(83)}…; and 2 more`)).toBe(true);
    expect(data.split('; ')).toHaveLength(11);
  });

  it('refuses a sandbox on the page’s own origin (the view would run as the host)', async () => {
    const server = await serve('modern');
    renderApp(server.url, <McpApp tool="show_board" sandbox="/sandbox.html" />);
    expect(await errorOf()).toEqual({
      code: 'NO_SANDBOX',
      message: `the sandbox must be on another origin than this page (${window.location.origin})`,
    });
  });

  it('a sandbox that never answers ends in INIT_TIMEOUT, and its frame is removed', async () => {
    const server = await serve('modern');
    const { container } = renderApp(
      server.url,
      <McpApp tool="show_board" sandbox={SANDBOX} initTimeoutMs={100} />,
    );
    await eventually(() => expect(container.querySelector('iframe')).not.toBeNull());
    expect(await errorOf()).toEqual({
      code: 'INIT_TIMEOUT',
      message: 'the sandbox proxy did not answer within 0.1 s',
    });
    expect(container.querySelector('iframe')).toBeNull();
  });

  it("a view asking for a huge height gets at most 10,000 px when the host sets no maxHeight, and the host's maxHeight when it does", async () => {
    const server = await serve('modern');
    const { container, show } = renderApp(
      server.url,
      <McpApp tool="show_board" sandbox={SANDBOX} />,
    );
    const iframe = await frameIn(container);
    const askFor = (height: number) =>
      fromSandbox(iframe, {
        jsonrpc: '2.0',
        method: 'ui/notifications/size-changed',
        params: { height },
      });
    askFor(1e9);
    await eventually(() => expect(iframe.style.height).toBe('10000px'));
    askFor(640);
    await eventually(() => expect(iframe.style.height).toBe('640px'));
    show(
      <McpApp
        tool="show_board"
        sandbox={SANDBOX}
        hostContext={{ containerDimensions: { maxHeight: 300 } }}
      />,
    );
    await eventually(() => expect(iframe.style.height).toBe('300px'));
  });

  it('a view its sandbox removed (it navigated away) ends in CLOSED, and its frame is removed', async () => {
    const server = await serve('modern');
    const errors: McpAppError[] = [];
    const { container } = renderApp(
      server.url,
      <McpApp tool="show_board" sandbox={SANDBOX} onError={(error) => errors.push(error)} />,
    );
    const iframe = await frameIn(container);
    fromSandbox(iframe, { jsonrpc: '2.0', method: 'ui/notifications/sandbox-view-gone' });
    expect(await errorOf()).toEqual({
      code: 'CLOSED',
      message: 'the view navigated away from its page, and its sandbox removed it',
    });
    expect(container.querySelector('iframe')).toBeNull();
    expect(errors.map((error) => error.code)).toEqual(['CLOSED']);
  });

  it('unmounted, a view leaves no message listener behind and lets its view resource go', async () => {
    const server = await serve('modern');
    const added = vi.spyOn(window, 'addEventListener');
    const removed = vi.spyOn(window, 'removeEventListener');
    const listeners = (spy: typeof added) =>
      spy.mock.calls.filter(([type]) => type === 'message').map(([, listener]) => listener);
    const { container, unmount } = renderApp(
      server.url,
      <McpApp tool="show_board" sandbox={SANDBOX} />,
    );
    await eventually(() => expect(container.querySelector('iframe')).not.toBeNull());
    await eventually(() => expect(server.subscribedUris()).toContain(VIEW));
    expect(listeners(added)).toHaveLength(1);
    unmount();
    await eventually(() => expect(listeners(removed)).toEqual(listeners(added)));
    await eventually(() => expect(server.subscribedUris()).not.toContain(VIEW));
  });

  it('a view that failed starts again, in a new frame, when the server changes it', async () => {
    const server = await serve('modern');
    const { container, show } = renderApp(
      server.url,
      <McpApp tool="show_board" sandbox={SANDBOX} initTimeoutMs={100} />,
    );
    expect((await errorOf()).code).toBe('INIT_TIMEOUT');
    // The next view gets all the time it needs: a changed prop alone restarts nothing.
    show(<McpApp tool="show_board" sandbox={SANDBOX} initTimeoutMs={60_000} />);
    expect(screen.getByRole('alert').getAttribute('data-code')).toBe('INIT_TIMEOUT');
    await eventually(() => expect(server.subscribedUris()).toContain(VIEW));
    server.setText(VIEW, '<!doctype html><html><body>view v2</body></html>');
    await eventually(() => expect(container.querySelector('iframe')).not.toBeNull());
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('a view the server marks public is kept by a persister, like any public resource', async () => {
    const server = await serve('modern');
    const queryClient = new QueryClient();
    const { container } = renderApp(
      server.url,
      <McpApp tool="show_board" sandbox={SANDBOX} />,
      queryClient,
    );
    await eventually(() => expect(container.querySelector('iframe')).not.toBeNull());
    const kept = dehydrate(queryClient, { shouldDehydrateQuery: shouldPersistQuery });
    expect(kept.queries.map((query) => query.queryKey)).toEqual([['resource', VIEW]]);
  });
});
