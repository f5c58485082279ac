// @vitest-environment node
/**
 * Issue 20: the host side of an MCP App view (src/apps/viewHost.ts) against the three real
 * servers. The view is the official ext-apps `App` class over an in-memory pair, with the sandbox
 * proxy's part (ready → HTML) played by the test; the browser's frames are the e2e's business.
 * What crosses the wire is counted on the server: tool calls, reads, subscriptions.
 */
import { InMemoryTransport, type Tool } from '@modelcontextprotocol/client';
import { App } from '@modelcontextprotocol/ext-apps';
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { McpAppError } from '../../src/apps/appErrors';
import { templateOf } from '../../src/apps/uiResource';
import {
  type ViewHost,
  ViewHost as ViewHostClass,
  type ViewHostOptions,
} from '../../src/apps/viewHost';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { shareAcrossTabs } from '../../src/tabs';
import type { StoredTool, TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start, text } from '../support/eras';
import { observeResource } from '../support/observe';
import { BrowserLocks, tabChannels } from '../support/tabs';
import { eventually, idle } from '../support/wait';

const VIEW_URI = 'ui://board/view.html';
const LIVE = 'counter://live';
const HTML = '<!doctype html><html><body><p>board view</p></body></html>';

const TOOLS: StoredTool[] = [
  { name: 'show_board', _meta: { ui: { resourceUri: VIEW_URI } } },
  { name: 'refresh', _meta: { ui: { resourceUri: VIEW_URI, visibility: ['app'] } } },
  { name: 'model_only', _meta: { ui: { visibility: ['model'] } } },
  { name: 'echo' },
];

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(kind: (typeof ERA_CASES)[number]['kind']): Promise<TestServer> {
  const server = await start(kind);
  server.store.setTools(TOOLS);
  server.store.upsert({
    uri: VIEW_URI,
    name: 'view',
    mimeType: 'text/html;profile=mcp-app',
    text: HTML,
  });
  server.store.upsert(text(LIVE, '1'));
  cleanups.push(() => server.close());
  return server;
}

function connect(server: TestServer, locks?: BrowserLocks): McpCacheSync {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  const tab = locks?.tab();
  const channels = tabChannels();
  cleanups.push(() => channels.closeAll());
  const sync = new McpCacheSync({
    queryClient,
    url: server.url,
    lingerMs: 30,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    ...(tab && {
      shareAcrossTabs: shareAcrossTabs({ locks: tab.locks, channel: channels.open }),
    }),
  });
  sync.mount();
  cleanups.push(async () => {
    await sync.dispose();
    queryClient.clear();
  });
  return sync;
}

const TOOL: Tool = {
  name: 'show_board',
  inputSchema: { type: 'object' },
  _meta: { ui: { resourceUri: VIEW_URI } },
};

interface OpenView {
  host: ViewHost;
  app: App;
  /** One end of the pair: what a sandbox proxy (or a hostile view) sends raw. */
  raw: InMemoryTransport;
  html: string;
  /** Methods the sandbox proxy's end got before the view connected (only the HTML may come). */
  beforeView: string[];
  updates: string[];
  received: Array<{ method: string; params: unknown }>;
}

/** A host for one view, and the view: the proxy's handshake first, then the App connects. */
async function openView(
  sync: McpCacheSync,
  options: Partial<ViewHostOptions> = {},
  beforeHandshake?: (host: ViewHost) => void,
): Promise<OpenView> {
  const [hostEnd, viewEnd] = InMemoryTransport.createLinkedPair();
  const host = new ViewHostClass({
    sync,
    tool: TOOL,
    template: templateOf(VIEW_URI, {
      contents: [{ uri: VIEW_URI, mimeType: 'text/html;profile=mcp-app', text: HTML }],
    }),
    transport: hostEnd,
    ...options,
  });
  cleanups.push(() => host.close());
  await host.start();
  beforeHandshake?.(host);
  const beforeView: string[] = [];
  const html = await new Promise<string>((resolve) => {
    viewEnd.onmessage = (message) => {
      if ('method' in message) beforeView.push(message.method);
      if ('method' in message && message.method === 'ui/notifications/sandbox-resource-ready') {
        resolve(String(message.params?.html));
      }
    };
    void viewEnd.start().then(() =>
      viewEnd.send({
        jsonrpc: '2.0',
        method: 'ui/notifications/sandbox-proxy-ready',
        params: {},
      }),
    );
  });
  // The Protocol chains a handler it finds on connect: the proxy's part ends here.
  viewEnd.onmessage = undefined;
  const app = new App({ name: 'test-view', version: '1.0.0' }, {}, { autoResize: false });
  const updates: string[] = [];
  const received: OpenView['received'] = [];
  app.setNotificationHandler('notifications/resources/updated', (notification) => {
    updates.push(notification.params.uri);
  });
  app.ontoolinput = (params) => received.push({ method: 'tool-input', params });
  app.ontoolinputpartial = (params) => received.push({ method: 'tool-input-partial', params });
  app.ontoolresult = (params) => received.push({ method: 'tool-result', params });
  app.ontoolcancelled = (params) => received.push({ method: 'tool-cancelled', params });
  await app.connect(viewEnd);
  await eventually(() => expect(host.status.status).toBe('ready'));
  return { host, app, raw: viewEnd, html, beforeView, updates, received };
}

const textOf = (result: { contents: Array<{ text?: string } | object> }) =>
  (result.contents[0] as { text?: string }).text;

describe.each(ERA_CASES)('an MCP App view on the $kind server', ({ kind }) => {
  it('gets its HTML from the sandbox handshake, and calls a tool through the package on its own server', async () => {
    const server = await serve(kind);
    const sync = connect(server);
    const { app, html } = await openView(sync);
    expect(html).toBe(HTML);
    const result = await app.callServerTool({ name: 'echo', arguments: { x: 1 } });
    expect(result.content[0]).toEqual({ type: 'text', text: 'called echo with {"x":1}' });
    // An app-only tool is the view's to call (hidden from the model, not from the app).
    const appOnly = await app.callServerTool({ name: 'refresh', arguments: {} });
    expect(appOnly.isError).not.toBe(true);
    expect(server.counters().toolCalls).toBe(2);
  });

  it('refuses a tool not visible to apps, and an unknown tool, without calling the server', async () => {
    const server = await serve(kind);
    const sync = connect(server);
    const { app } = await openView(sync);
    await expect(app.callServerTool({ name: 'model_only', arguments: {} })).rejects.toThrow(
      /not visible to apps/,
    );
    await expect(app.callServerTool({ name: 'nope', arguments: {} })).rejects.toThrow(
      /no tool "nope"/,
    );
    await expect(app.callServerTool({ name: 'nope', arguments: {} })).rejects.toThrow(/nope/);
    expect(server.counters().toolCalls).toBe(0);
    // An unknown name refreshes the tool list once per view, not once per call.
    expect(server.counters().toolListRequests).toBeLessThanOrEqual(2);
  });

  it('reads from the cache: a resource the host shows costs no second read for the view', async () => {
    const server = await serve(kind);
    const sync = connect(server);
    const shown = observeResource(sync, LIVE);
    cleanups.push(shown.unmount);
    await eventually(() => expect(shown.text()).toBe('1'));
    await eventually(() =>
      expect(diagnosticsOf(sync).resources.find((r) => r.uri === LIVE)?.acknowledged).toBe(true),
    );
    const { app } = await openView(sync);
    expect(textOf(await app.readServerResource({ uri: LIVE }))).toBe('1');
    expect(textOf(await app.readServerResource({ uri: LIVE }))).toBe('1');
    await idle(sync.queryClient);
    expect(server.store.reads(LIVE)).toBe(1);
  });

  it("turns the view's resources/subscribe into a hold: the server subscribes, a change reaches the view, and its re-read comes from the cache", async () => {
    const server = await serve(kind);
    const sync = connect(server);
    const { app, host, updates } = await openView(sync);
    await app.request({ method: 'resources/subscribe', params: { uri: LIVE } });
    expect(host.subscriptions).toEqual([LIVE]);
    expect(textOf(await app.readServerResource({ uri: LIVE }))).toBe('1');
    await eventually(() => expect(server.subscribedUris()).toContain(LIVE));
    await eventually(() =>
      expect(diagnosticsOf(sync).resources.find((r) => r.uri === LIVE)?.acknowledged).toBe(true),
    );
    await idle(sync.queryClient);
    const readsBefore = server.store.reads(LIVE);

    server.setText(LIVE, '2');
    await eventually(() => expect(updates).toEqual([LIVE]));
    expect(textOf(await app.readServerResource({ uri: LIVE }))).toBe('2');
    await idle(sync.queryClient);
    expect(server.store.reads(LIVE) - readsBefore).toBe(1);
  });

  it('unsubscribing, and closing the view, let the hold go (after the linger)', async () => {
    const server = await serve(kind);
    const sync = connect(server);
    const first = await openView(sync);
    await first.app.request({ method: 'resources/subscribe', params: { uri: LIVE } });
    await eventually(() => expect(server.subscribedUris()).toContain(LIVE));
    await first.app.request({ method: 'resources/unsubscribe', params: { uri: LIVE } });
    expect(first.host.subscriptions).toEqual([]);
    await eventually(() => expect(server.subscribedUris()).not.toContain(LIVE));

    const second = await openView(sync);
    await second.app.request({ method: 'resources/subscribe', params: { uri: LIVE } });
    await eventually(() => expect(server.subscribedUris()).toContain(LIVE));
    await second.host.close();
    expect(second.host.subscriptions).toEqual([]);
    await eventually(() => expect(server.subscribedUris()).not.toContain(LIVE));
  });
});

describe.each(ERA_CASES)('an MCP App view in a follower tab, on the $kind server', ({ kind }) => {
  it("goes through the leader tab's connection: its hold, its updates, its tool call", async () => {
    const server = await serve(kind);
    const locks = new BrowserLocks();
    const leader = connect(server, locks);
    await eventually(() => expect(diagnosticsOf(leader).tabs?.leader).toBe(true));
    const follower = connect(server, locks);
    await eventually(() => expect(diagnosticsOf(follower).tabs?.tabs).toBe(2));
    const { app, updates } = await openView(follower);

    await app.request({ method: 'resources/subscribe', params: { uri: LIVE } });
    expect(textOf(await app.readServerResource({ uri: LIVE }))).toBe('1');
    await eventually(() => expect(server.subscribedUris()).toContain(LIVE));
    server.setText(LIVE, '2');
    await eventually(() => expect(updates).toEqual([LIVE]));
    expect(textOf(await app.readServerResource({ uri: LIVE }))).toBe('2');

    const result = await app.callServerTool({ name: 'echo', arguments: { x: 2 } });
    expect(result.content[0]).toEqual({ type: 'text', text: 'called echo with {"x":2}' });
    expect(server.counters().toolCalls).toBe(1);
    // One stream for both tabs; the one LIVE's stream replaced ends when the server sees it cut.
    await eventually(() => expect(server.openStreams()).toBe(1));
  });
});

describe('an MCP App view (one server)', () => {
  it('is told the call only once initialised, and in order', async () => {
    const server = await serve('modern');
    const sync = connect(server);
    const done = { content: [{ type: 'text' as const, text: 'done' }] };
    const view = await openView(sync, {}, (host) => {
      host.setCall({ input: { q: 'early' } });
      host.setCall({ input: { q: 'early' }, result: done });
    });
    expect(view.beforeView).toEqual(['ui/notifications/sandbox-resource-ready']);
    await eventually(() => expect(view.received).toHaveLength(2));
    expect(view.received).toEqual([
      { method: 'tool-input', params: { arguments: { q: 'early' } } },
      { method: 'tool-result', params: done },
    ]);
  });

  it('streams partial input, then the input, then the result; nothing after the result', async () => {
    const server = await serve('modern');
    const sync = connect(server);
    const view = await openView(sync);
    view.host.setCall({ partialInput: { q: 'a' } });
    view.host.setCall({ partialInput: { q: 'ab' } });
    view.host.setCall({ input: { q: 'abc' } });
    view.host.setCall({
      input: { q: 'abc' },
      result: { content: [{ type: 'text', text: 'done' }] },
    });
    view.host.setCall({
      input: { q: 'abc' },
      result: { content: [{ type: 'text', text: 'done' }] },
      cancelled: 'too late',
    });
    await eventually(() => expect(view.received.map((r) => r.method)).toHaveLength(4));
    // The host's answer to a later request comes after anything it sent before on this pair.
    await view.app.request({ method: 'ping' });
    expect(view.received).toEqual([
      { method: 'tool-input-partial', params: { arguments: { q: 'a' } } },
      { method: 'tool-input-partial', params: { arguments: { q: 'ab' } } },
      { method: 'tool-input', params: { arguments: { q: 'abc' } } },
      { method: 'tool-result', params: { content: [{ type: 'text', text: 'done' }] } },
    ]);
  });

  it('sends partial input again only when its content changed: the same arguments in a new object are not sent twice', async () => {
    const server = await serve('modern');
    const sync = connect(server);
    const view = await openView(sync);
    view.host.setCall({ partialInput: { q: 'a', filters: [{ tag: 'x' }] } });
    view.host.setCall({ partialInput: { q: 'a', filters: [{ tag: 'x' }] } });
    view.host.setCall({ partialInput: { q: 'a', filters: [{ tag: 'x' }] } });
    view.host.setCall({ partialInput: { q: 'a', filters: [{ tag: 'y' }] } });
    view.host.setCall({ partialInput: { q: 'a', filters: [{ tag: 'y' }] } });
    await view.app.request({ method: 'ping' });
    expect(view.received).toEqual([
      { method: 'tool-input-partial', params: { arguments: { q: 'a', filters: [{ tag: 'x' }] } } },
      { method: 'tool-input-partial', params: { arguments: { q: 'a', filters: [{ tag: 'y' }] } } },
    ]);
  });

  it('tells a cancelled call as cancelled, with the arguments it had', async () => {
    const server = await serve('modern');
    const sync = connect(server);
    const view = await openView(sync);
    view.host.setCall({ input: { q: 1 }, cancelled: 'the user stopped it' });
    await eventually(() => expect(view.received).toHaveLength(2));
    expect(view.received).toEqual([
      { method: 'tool-input', params: { arguments: { q: 1 } } },
      { method: 'tool-cancelled', params: { reason: 'the user stopped it' } },
    ]);
  });

  it.each([
    ['a sandbox proxy that never answers', false, 'the sandbox proxy did not answer within 0.1 s'],
    ['a view that never initialises', true, 'the view did not initialise within 0.1 s'],
  ])('%s ends in INIT_TIMEOUT, bounded, and holds nothing', async (_, proxyAnswers, message) => {
    const server = await serve('modern');
    const sync = connect(server);
    const [hostEnd, proxyEnd] = InMemoryTransport.createLinkedPair();
    const statuses: string[] = [];
    const host = new ViewHostClass({
      sync,
      tool: TOOL,
      template: templateOf(VIEW_URI, {
        contents: [{ uri: VIEW_URI, mimeType: 'text/html;profile=mcp-app', text: HTML }],
      }),
      transport: hostEnd,
      initTimeoutMs: 50,
      onStatus: (status) => statuses.push(status.status),
    });
    cleanups.push(() => host.close());
    if (proxyAnswers) {
      // The proxy says it is ready (queued until the host listens, so no timer can come
      // first) and gets the HTML; the view in it never sends ui/initialize.
      await proxyEnd.start();
      await proxyEnd.send({
        jsonrpc: '2.0',
        method: 'ui/notifications/sandbox-proxy-ready',
        params: {},
      });
    }
    await host.start();
    await eventually(() => expect(host.status.status).toBe('error'));
    const { status } = host;
    expect(status.status === 'error' && status.error).toMatchObject({
      code: 'INIT_TIMEOUT',
      message,
    });
    expect(statuses).toEqual(['error']);
    expect(host.subscriptions).toEqual([]);
  });

  it('an initTimeoutMs longer than a timer can wait (Infinity: "no limit") waits that long, instead of timing out at once', async () => {
    const server = await serve('modern');
    const sync = connect(server);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const hosts = [Number.POSITIVE_INFINITY, 2 ** 31].map(
        (initTimeoutMs) =>
          new ViewHostClass({
            sync,
            tool: TOOL,
            template: templateOf(VIEW_URI, {
              contents: [{ uri: VIEW_URI, mimeType: 'text/html;profile=mcp-app', text: HTML }],
            }),
            transport: InMemoryTransport.createLinkedPair()[0],
            initTimeoutMs,
          }),
      );
      for (const host of hosts) {
        cleanups.push(() => host.close());
        await host.start();
      }
      // A proxy that takes a minute to load (a slow network) is still waited for.
      vi.advanceTimersByTime(60_000);
      expect(hosts.map((host) => host.status.status)).toEqual(['starting', 'starting']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a view that floods its host is closed (FLOOD) and its subscriptions are let go', async () => {
    const server = await serve('modern');
    const sync = connect(server);
    const view = await openView(sync, { limits: { burst: 50, perSecond: 1 } });
    await view.app.request({ method: 'resources/subscribe', params: { uri: LIVE } });
    await eventually(() => expect(server.subscribedUris()).toContain(LIVE));
    for (let id = 1000; id < 1200; id += 1) {
      void view.raw.send({ jsonrpc: '2.0', id, method: 'ping' }).catch(() => {});
    }
    const { status } = view.host;
    expect(status.status).toBe('error');
    expect(status.status === 'error' && status.error).toBeInstanceOf(McpAppError);
    expect(status.status === 'error' && status.error.code).toBe('FLOOD');
    expect(view.host.subscriptions).toEqual([]);
    await eventually(() => expect(server.subscribedUris()).not.toContain(LIVE));
  });

  it('refuses requests past the in-flight cap with an error, and serves the view again after', async () => {
    const server = await serve('modern');
    server.store.setTools([...TOOLS, { name: 'slow', progress: 3 }]);
    const sync = connect(server);
    const view = await openView(sync, { limits: { inFlight: 1 } });
    const slow = view.app.callServerTool({ name: 'slow', arguments: {} });
    await expect(view.app.readServerResource({ uri: LIVE })).rejects.toThrow(/in flight/);
    await slow;
    expect(textOf(await view.app.readServerResource({ uri: LIVE }))).toBe('1');
  });

  it('refuses a request whose id is still in flight: one id counts once, and cannot hold the server beyond the cap', async () => {
    const server = await serve('modern');
    server.store.setTools([...TOOLS, { name: 'wait', hold: true }]);
    const sync = connect(server);
    const view = await openView(sync, { limits: { inFlight: 2 } });
    const answers: Array<{ id: unknown; error?: string }> = [];
    const viewEnd = view.raw;
    const onmessage = viewEnd.onmessage;
    viewEnd.onmessage = (message, extra) => {
      if ('id' in message && message.id === 'dup') {
        answers.push({
          id: message.id,
          error: 'error' in message ? message.error.message : undefined,
        });
      }
      onmessage?.(message, extra);
    };
    for (let i = 0; i < 10; i += 1) {
      await viewEnd.send({
        jsonrpc: '2.0',
        id: 'dup',
        method: 'tools/call',
        params: { name: 'wait', arguments: {} },
      });
    }
    await eventually(() => expect(answers).toHaveLength(9));
    expect(answers.every((answer) => /already in flight/.test(answer.error ?? ''))).toBe(true);
    await eventually(() => expect(server.store.extras.held()).toBe(1));
    expect(server.counters().toolCalls).toBe(1);
    server.store.extras.release();
    await eventually(() => expect(answers).toHaveLength(10));
    expect(answers[9]?.error).toBeUndefined();
  });

  it('a read the view cancelled keeps its slot until the host has finished it: cancelling cannot run more reads on the server than the cap', async () => {
    const server = await serve('modern');
    const sync = connect(server);
    const view = await openView(sync, { limits: { inFlight: 2 } });
    const gate: { release?: () => void } = {};
    const held = new Promise<void>((resolve) => {
      gate.release = resolve;
    });
    let entered = 0;
    let running = 0;
    let most = 0;
    server.store.onRead(async (uri) => {
      if (!uri.startsWith('counter://n')) return;
      entered += 1;
      running += 1;
      most = Math.max(most, running);
      await held;
      running -= 1;
    });
    for (let i = 0; i < 20; i += 1) {
      const controller = new AbortController();
      const before = entered;
      let refused = false;
      const read = view.app.readServerResource(
        { uri: `counter://n${i}` },
        { signal: controller.signal },
      );
      read.catch(() => {
        refused = true;
      });
      // On the server, or refused by the host: either way the host has decided.
      await eventually(() => expect(entered > before || refused).toBe(true));
      controller.abort('the user typed on');
      await expect(read).rejects.toThrow();
    }
    expect(running).toBe(2);
    expect(most).toBe(2);
    // Their slots are freed once the reads end: the view is not blocked for good.
    gate.release?.();
    await eventually(() => expect(running).toBe(0));
    server.store.onRead(undefined);
    await eventually(async () =>
      expect(textOf(await view.app.readServerResource({ uri: LIVE }))).toBe('1'),
    );
  });

  it('a tool call the view cancelled stops counting against its in-flight cap once the call has ended', async () => {
    const server = await serve('modern');
    server.store.setTools([...TOOLS, { name: 'wait', hold: true }]);
    const sync = connect(server);
    const view = await openView(sync, { limits: { inFlight: 2 } });
    for (let i = 0; i < 2; i += 1) {
      const controller = new AbortController();
      const call = view.app.callServerTool(
        { name: 'wait', arguments: {} },
        { signal: controller.signal },
      );
      await eventually(() => expect(server.store.extras.held()).toBe(1));
      controller.abort('the user typed on');
      await expect(call).rejects.toThrow();
      await eventually(() => expect(server.store.extras.held()).toBe(0));
    }
    expect(textOf(await view.app.readServerResource({ uri: LIVE }))).toBe('1');
    const both = [0, 1].map(() => view.app.callServerTool({ name: 'wait', arguments: {} }));
    await eventually(() => expect(server.store.extras.held()).toBe(2));
    await expect(view.app.readServerResource({ uri: LIVE })).rejects.toThrow(/in flight/);
    server.store.extras.release();
    await Promise.all(both);
  });

  it('lists only the resources allowResource lets it read, and only the templates whose text it accepts', async () => {
    const server = await serve('modern');
    server.store.upsert(text('secret://payroll', 'salaries'));
    server.store.upsert(text('counter://other', '2'));
    server.store.setTemplates([
      { uriTemplate: 'secret://{name}', name: 'secrets' },
      { uriTemplate: 'counter://{name}', name: 'counters' },
    ]);
    const sync = connect(server);
    const narrow = await openView(sync, { allowResource: (uri) => uri === LIVE });
    const listed = await narrow.app.listServerResources();
    expect(listed.resources.map((resource) => resource.uri)).toEqual([LIVE]);
    const templates = await narrow.app.request({ method: 'resources/templates/list' });
    expect(templates).toMatchObject({ resourceTemplates: [] });

    const counters = await openView(sync, {
      allowResource: (uri) => uri.startsWith('counter://'),
    });
    const all = await counters.app.listServerResources();
    expect(all.resources.map((resource) => resource.uri).sort()).toEqual([
      'counter://live',
      'counter://other',
    ]);
    const some = (await counters.app.request({ method: 'resources/templates/list' })) as {
      resourceTemplates: Array<{ uriTemplate: string }>;
    };
    expect(some.resourceTemplates.map((template) => template.uriTemplate)).toEqual([
      'counter://{name}',
    ]);
    // A predicate that throws on a template's text lets that template through no more than a read.
    const strict = await openView(sync, {
      allowResource: (uri) => {
        if (uri.includes('{')) throw new Error('not a URI');
        return uri === LIVE;
      },
    });
    expect(await strict.app.request({ method: 'resources/templates/list' })).toMatchObject({
      resourceTemplates: [],
    });
    await expect(strict.app.readServerResource({ uri: 'secret://payroll' })).rejects.toThrow(
      /does not let this view read/,
    );
  });

  it('a view whose connection ends (its sandbox removed it) ends in CLOSED: its subscriptions are let go and its calls in flight cancelled', async () => {
    const server = await serve('modern');
    server.store.setTools([...TOOLS, { name: 'wait', hold: true }]);
    const sync = connect(server);
    const view = await openView(sync);
    await view.app.request({ method: 'resources/subscribe', params: { uri: LIVE } });
    await eventually(() => expect(server.subscribedUris()).toContain(LIVE));
    const call = view.app.callServerTool({ name: 'wait', arguments: {} });
    await eventually(() => expect(server.store.extras.held()).toBe(1));
    await view.raw.close();
    await expect(call).rejects.toThrow();
    const { status } = view.host;
    expect(status.status === 'error' && status.error).toMatchObject({
      code: 'CLOSED',
      message: 'the connection to the view ended',
    });
    expect(view.host.subscriptions).toEqual([]);
    await eventually(() => expect(server.store.extras.held()).toBe(0));
    expect(server.store.extras.cancelledCalls).toHaveLength(1);
    await eventually(() => expect(server.subscribedUris()).not.toContain(LIVE));
  });

  it('a sandbox proxy that reloads under its view (its frame moved in the page) ends the view in CLOSED: nothing stays held for a view that is gone', async () => {
    const server = await serve('modern');
    const sync = connect(server);
    const view = await openView(sync);
    await view.app.request({ method: 'resources/subscribe', params: { uri: LIVE } });
    await eventually(() => expect(server.subscribedUris()).toContain(LIVE));
    // A new proxy document announces itself: the view that was in the old one is gone.
    await view.raw.send({
      jsonrpc: '2.0',
      method: 'ui/notifications/sandbox-proxy-ready',
      params: {},
    });
    await eventually(() => expect(view.host.status.status).toBe('error'));
    const { status } = view.host;
    expect(status.status === 'error' && status.error.code).toBe('CLOSED');
    expect(view.host.subscriptions).toEqual([]);
    await eventually(() => expect(server.subscribedUris()).not.toContain(LIVE));
  });

  it('caps the subscriptions of one view', async () => {
    const server = await serve('modern');
    const sync = connect(server);
    const view = await openView(sync, { limits: { subscriptions: 1 } });
    await view.app.request({ method: 'resources/subscribe', params: { uri: LIVE } });
    await expect(
      view.app.request({ method: 'resources/subscribe', params: { uri: 'other://x' } }),
    ).rejects.toThrow(/at most 1/);
    expect(view.host.subscriptions).toEqual([LIVE]);
  });

  it('a limit the host gives as undefined (or not a number) keeps its default: the view stays bounded', async () => {
    const server = await serve('modern');
    server.store.setTools([...TOOLS, { name: 'wait', hold: true }]);
    for (let i = 0; i < 64; i += 1) server.store.upsert(text(`counter://${i}`, String(i)));
    const sync = connect(server);
    const view = await openView(sync, {
      limits: {
        burst: undefined,
        perSecond: Number.NaN,
        inFlight: undefined,
        subscriptions: undefined,
      },
    });
    for (let i = 0; i < 64; i += 1) {
      await view.app.request({ method: 'resources/subscribe', params: { uri: `counter://${i}` } });
    }
    await expect(
      view.app.request({ method: 'resources/subscribe', params: { uri: LIVE } }),
    ).rejects.toThrow(/at most 64/);
    const calls = Array.from({ length: 16 }, () =>
      view.app.callServerTool({ name: 'wait', arguments: {} }).catch(() => {}),
    );
    await eventually(() => expect(server.store.extras.held()).toBe(16));
    await expect(view.app.readServerResource({ uri: LIVE })).rejects.toThrow(/in flight/);
    server.store.extras.release();
    await Promise.all(calls);
    for (let id = 1000; id < 1200; id += 1) {
      void view.raw.send({ jsonrpc: '2.0', id, method: 'ping' }).catch(() => {});
    }
    const { status } = view.host;
    expect(status.status === 'error' && status.error.code).toBe('FLOOD');
  });

  it('opens a link only when the host approves it, and never a non-web URL', async () => {
    const server = await serve('modern');
    const sync = connect(server);
    const asked: string[] = [];
    const view = await openView(sync, {
      onOpenLink: (url) => {
        asked.push(url);
        return url.includes('approved');
      },
    });
    expect(await view.app.openLink({ url: 'https://example.com/approved' })).not.toMatchObject({
      isError: true,
    });
    expect(await view.app.openLink({ url: 'https://example.com/other' })).toMatchObject({
      isError: true,
    });
    expect(await view.app.openLink({ url: 'javascript:alert(1)' })).toMatchObject({
      isError: true,
    });
    expect(asked).toEqual(['https://example.com/approved', 'https://example.com/other']);
    const silent = await openView(sync);
    expect(await silent.app.openLink({ url: 'https://example.com/approved' })).toMatchObject({
      isError: true,
    });
  });

  it('hands ui/message, logs and size changes to the host', async () => {
    const server = await serve('modern');
    const sync = connect(server);
    const messages: unknown[] = [];
    const logs: unknown[] = [];
    const sizes: unknown[] = [];
    const view = await openView(sync, {
      onMessage: (params) => {
        messages.push(params);
        return {};
      },
      onLog: (params) => logs.push(params.data),
      onSizeChange: (size) => sizes.push(size),
    });
    const content = [{ type: 'text' as const, text: 'hello host' }];
    expect(await view.app.sendMessage({ role: 'user', content })).not.toMatchObject({
      isError: true,
    });
    await view.app.sendLog({ level: 'info', data: 'from the view' });
    await view.app.sendSizeChanged({ width: 300, height: 120 });
    await eventually(() => expect(sizes).toEqual([{ width: 300, height: 120 }]));
    expect(messages).toEqual([{ role: 'user', content }]);
    expect(logs).toEqual(['from the view']);
  });
});
