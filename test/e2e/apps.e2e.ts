/**
 * Issue 20 in Chromium: MCP Apps hosted by `<McpApp>` in the playground's Tools card.
 *
 * - The demo's own view (`show_counter`) subscribes to `counter://demo` through the host: one
 *   `resources/read` in total for host and view, the view follows a change made on the server,
 *   and nothing polls (reads counted on the server), on both eras.
 * - Isolation, as the browser enforces it: the view's origin is opaque, it reaches neither its
 *   sandbox proxy nor the host page, its CSP blocks its network, navigating its frame away ends
 *   it (the host is told: a CLOSED error), and so does moving its frame in the page (the proxy
 *   reloads); what it posts to the host window directly (past its
 *   proxy) is ignored, and so is what it posts through another view's proxy or meant for another
 *   view's host; a flood ends it in an error. A message longer than its sandbox relays
 *   (`maxMessageChars`) never reaches the host page: a request is answered with an error by the
 *   proxy, and a view that keeps sending them ends in FLOOD; a long one it relays is charged by
 *   its size (the proxy says it first), so long ones end in FLOOD long before 200 of them.
 * - The official example app servers from npm (`server-basic-react`, `server-basic-vanillajs`):
 *   each renders, calls its tool through the bridge and shows the result; its `ui/message`
 *   reaches the host, and its link opens only if the user agrees.
 */
import type { Frame, Page, Request } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_MAX_MESSAGE_CHARS } from '../../playground/server/sandboxServer';
import { ENDPOINT_IDS, EXAMPLE_APPS, TOOLS, URIS } from '../../playground/shared/demo';
import { MESSAGE_DROPPED, MESSAGE_SIZE } from '../../src/apps/frameTransport';
import { Dashboard, DemoServer, until } from './dashboard';
import { startedForFile } from './harness';

const started = startedForFile();
const pages: Page[] = [];

afterEach(async () => {
  for (const page of pages.splice(0)) await page.close();
});

async function openDashboard(endpoint: (typeof ENDPOINT_IDS)[number] = 'modern') {
  const { browser, playground } = started();
  const page = await browser.newPage({ viewport: { width: 1440, height: 1400 } });
  pages.push(page);
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  const ui = new Dashboard(page, playground.url);
  // Straight to the endpoint (no switch), so the page reads each resource once.
  await page.goto(new URL(`/?endpoint=${endpoint}`, playground.url).href);
  await until(
    'the connection to be ready',
    () => ui.status(),
    (s) => s === 'ready',
  );
  return { page, ui, errors, demo: new DemoServer(playground.url) };
}

/** Where the demo's tool call and connection stand (for a wait's timeout message). */
async function where(page: Page): Promise<string> {
  const attribute = async (id: string, name: string) =>
    (await page.getByTestId(id).count()) > 0
      ? await page.getByTestId(id).first().getAttribute(name)
      : 'absent';
  const call = `${await attribute('tool-call', 'data-tool')} ${await attribute('tool-call', 'data-state')}`;
  return `tool call: ${call}; connection: ${await attribute('status-badge', 'data-status')}; tool buttons: ${await page.getByTestId('tool-app').count()}`;
}

/** The view's own frame: the inner frame of the sandbox proxy inside `testId`. */
async function viewFrame(page: Page, testId: string): Promise<Frame> {
  const proxy = page.getByTestId(testId).locator('iframe');
  // Without blocking on a frame that is not there yet, and saying what is there instead.
  const shown = async (id: string) =>
    (await page.getByTestId(id).count()) > 0
      ? ((await page.getByTestId(id).first().textContent()) ?? '').slice(0, 160)
      : 'absent';
  await until(
    `${testId} to be ready`,
    async () =>
      (await proxy.count()) > 0
        ? await proxy.getAttribute('data-mcp-app')
        : `no frame; ${testId}: ${await shown(testId)}; tool-error: ${await shown('tool-error')}; sandbox pending: ${(await page.getByText('finding the sandbox').count()) > 0}; ${await where(page)}`,
    (status) => status === 'ready',
  );
  const proxyFrame = await (await proxy.elementHandle())?.contentFrame();
  const inner = proxyFrame?.childFrames()[0];
  if (!inner) throw new Error(`${testId}: no view frame inside the sandbox proxy`);
  return inner;
}

/** From now on, what the host page is posted from a frame on another origin: method, size. */
async function recordFromSandbox(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: Array<{ method: unknown; chars: number }> = [];
    (window as unknown as { fromSandbox: typeof seen }).fromSandbox = seen;
    window.addEventListener('message', (event) => {
      if (event.origin === location.origin) return;
      seen.push({ method: event.data?.method, chars: JSON.stringify(event.data).length });
    });
  });
}

/** The demo's view, shown, with what its host page is posted from then on recorded. */
async function demoViewRecorded() {
  const { page, ui } = await openDashboard();
  await ui.press('tool-app');
  const view = await viewFrame(page, 'tool-app-view');
  await recordFromSandbox(page);
  return { page, ui, view };
}

async function fromSandbox(page: Page): Promise<Array<{ method: unknown; chars: number }>> {
  return page.evaluate(() => (window as unknown as { fromSandbox: never[] }).fromSandbox);
}

const text = async (frame: Frame, selector: string) =>
  ((await frame.locator(selector).textContent()) ?? '').trim();

/** Requests the page sends with `method` in a JSON-RPC body (to any MCP server). */
function recordCalls(page: Page, method: string): Request[] {
  const seen: Request[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.postData()?.includes(`"method":"${method}"`)) {
      seen.push(request);
    }
  });
  return seen;
}

describe.each(ENDPOINT_IDS)('the demo app view on the %s endpoint', (endpoint) => {
  it('subscribes through the host: one read in total for host and view, the view follows a change, nothing polls', async () => {
    const { playground } = started();
    const demo = new DemoServer(playground.url);
    const readsBefore = await demo.counterReads();
    const { page, ui, errors } = await openDashboard(endpoint);
    await until(
      'the counter panel',
      () => ui.panelText('panel-counter'),
      (t) => /^\d+$/.test(t),
    );
    const shown = await ui.panelText('panel-counter');

    await ui.press('tool-app');
    const view = await viewFrame(page, 'tool-app-view');
    await until(
      'the view to show the counter',
      () => text(view, '#value'),
      (v) => v === shown,
    );
    expect(await text(view, '#call')).toBe(`called with {} → called ${TOOLS.counterApp} with {}`);
    // Host context: the page's theme; sizing: the frame takes the height the view asks for.
    expect(await view.locator('body').getAttribute('data-theme')).toBe('light');
    const wanted = await view.evaluate(() =>
      Math.ceil(document.body.getBoundingClientRect().height),
    );
    const frame = page.getByTestId('tool-app-view').locator('iframe');
    await until(
      "the frame to take the view's height",
      () => frame.evaluate((element) => (element as HTMLElement).style.height),
      (height) => height === `${wanted}px`,
    );
    // Every read the page will make of it is made: the server covers it (an acknowledgement may
    // re-read), the host panel is not reading, and the view has had its one read from the host.
    await until(
      'the counter to be acknowledged',
      () => ui.diagnosticsCell(URIS.counter, 'acknowledged').textContent(),
      (t) => t === 'yes',
    );
    await ui.panelIdle('panel-counter');
    expect(await view.locator('body').getAttribute('data-reads')).toBe('1');
    expect((await demo.counterReads()) - readsBefore).toBe(1);

    const notified = await ui.uriCount(URIS.counter, 'notifications');
    const next = String(await demo.increment());
    await until(
      'the view to follow the change',
      () => text(view, '#value'),
      (v) => v === next,
    );
    await until(
      'the host panel too',
      () => ui.panelText('panel-counter'),
      (t) => t === next,
    );
    // One re-read for the change, shared: the page handled its one notification, the host panel
    // is not reading, and the view's second read came from the host.
    await until(
      'the notification counted',
      () => ui.uriCount(URIS.counter, 'notifications'),
      (n) => n === notified + 1,
    );
    await ui.panelIdle('panel-counter');
    expect((await demo.counterReads()) - readsBefore).toBe(2);
    expect(await text(view, '#status')).toBe(
      'live: subscribed, 2 reads from the host, 1 update, no polling',
    );
    expect(errors).toEqual([]);
  });
});

describe('isolation in Chromium', () => {
  it('the view runs on an opaque origin, reaches neither its proxy nor the host, its CSP blocks its network, and navigating away ends it', async () => {
    const { page, ui } = await openDashboard();
    await ui.press('tool-app');
    const view = await viewFrame(page, 'tool-app-view');
    const proxy = view.parentFrame();
    expect(await view.evaluate(() => self.origin)).toBe('null');
    expect(new URL(proxy?.url() ?? '').origin).not.toBe(new URL(page.url()).origin);
    const reach = (path: 'parent' | 'top') =>
      view.evaluate((which) => {
        try {
          return String((which === 'top' ? window.top : window.parent)?.document.title);
        } catch (error) {
          return (error as Error).name;
        }
      }, path);
    expect(await reach('parent')).toBe('SecurityError');
    expect(await reach('top')).toBe('SecurityError');
    const blocked = await view.evaluate(
      (url) =>
        new Promise<string>((resolve) => {
          document.addEventListener('securitypolicyviolation', (event) =>
            resolve(event.effectiveDirective),
          );
          fetch(url).then(
            () => resolve('fetched'),
            () => {},
          );
        }),
      new URL('/demo/state', page.url()).href,
    );
    expect(blocked).toBe('connect-src');
    // Navigating its frame away (to show another page inside the host) ends the view: the
    // proxy removes the frame, relays nothing more and tells the host, which ends the view in
    // an error like any other (its subscriptions and calls let go) and removes the proxy.
    await view.evaluate(() => {
      window.location.href = 'about:blank';
    });
    await until(
      'the proxy to remove the navigated frame',
      async () => (proxy?.isDetached() ? 0 : proxy?.childFrames().length),
      (n) => n === 0,
    );
    const alert = ui.byId('tool-app-view').getByRole('alert');
    await alert.waitFor();
    expect(await alert.getAttribute('data-code')).toBe('CLOSED');
    expect(await alert.textContent()).toBe(
      'the view navigated away from its page, and its sandbox removed it',
    );
    expect(await ui.byId('tool-app-view').locator('iframe').count()).toBe(0);
  });

  it('a view whose sandbox frame is moved in the page (the browser reloads the proxy, and the view in it is gone) ends in CLOSED', async () => {
    const { page, ui } = await openDashboard();
    await ui.press('tool-app');
    await viewFrame(page, 'tool-app-view');
    // What a list that reorders its items does to an iframe: out of the document and back.
    await ui
      .byId('tool-app-view')
      .locator('iframe')
      .evaluate((frame) => {
        const parent = frame.parentNode;
        const next = frame.nextSibling;
        document.body.appendChild(frame);
        parent?.insertBefore(frame, next);
      });
    const alert = ui.byId('tool-app-view').getByRole('alert');
    await alert.waitFor();
    expect(await alert.getAttribute('data-code')).toBe('CLOSED');
    expect(await alert.textContent()).toBe('the sandbox proxy reloaded, and the view is gone');
  });

  it('a message the view posts to the host window directly is ignored; through its proxy it is served', async () => {
    const { page, ui } = await openDashboard();
    await ui.press('tool-app');
    const view = await viewFrame(page, 'tool-app-view');
    const calls = recordCalls(page, 'tools/call');
    const before = calls.length;
    // The answers to the proxied call and to a ping after it: by then the host has handled the
    // message posted to it directly, which reached it first (it took no detour through a proxy).
    const answered = await view.evaluate(
      (tool) =>
        new Promise<number[]>((resolve) => {
          const seen: number[] = [];
          window.addEventListener('message', (event) => {
            const { id } = event.data ?? {};
            if (typeof id !== 'number') return;
            seen.push(id);
            if (seen.includes(2) && seen.includes(3)) resolve(seen.sort());
          });
          const call = (id: number) => ({
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: { name: tool, arguments: { via: id === 1 ? 'top' : 'proxy' } },
          });
          window.top?.postMessage(call(1), '*'); // past the proxy: wrong source
          window.parent.postMessage(call(2), '*'); // the proper way
          window.parent.postMessage({ jsonrpc: '2.0', id: 3, method: 'ping' }, '*');
        }),
      'check_links',
    );
    expect(answered).toEqual([2, 3]);
    // Had the host taken the direct message, its call would have gone out before this one.
    await until(
      'the proxied call to reach the server',
      async () => calls.length,
      (n) => n > before,
    );
    const sent = calls.slice(before).map((request) => request.postData() ?? '');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('"via":"proxy"');
  });

  it('a view that floods its host ends in an error in the component, and its frame is removed', async () => {
    const { page, ui } = await openDashboard();
    await ui.press('tool-app');
    const view = await viewFrame(page, 'tool-app-view');
    await view.evaluate(() => {
      for (let id = 1; id <= 1000; id += 1) {
        window.parent.postMessage({ jsonrpc: '2.0', id: 10_000 + id, method: 'ping' }, '*');
      }
    });
    const alert = ui.byId('tool-app-view').getByRole('alert');
    await alert.waitFor();
    expect(await alert.getAttribute('data-code')).toBe('FLOOD');
    expect(await alert.textContent()).toBe(
      'the view sent more than 200 messages at once and was closed',
    );
    expect(await ui.byId('tool-app-view').locator('iframe').count()).toBe(0);
  });

  it('a message longer than its sandbox relays, or not JSON, never reaches the host page: the request is answered with an error by the proxy, and one just at the limit still reaches the host', async () => {
    const { page, ui, view } = await demoViewRecorded();
    // ui/message requests: one that is no JSON, one whose JSON is one character past the limit,
    // then one exactly at it.
    const replies = await view.evaluate(
      (max) =>
        new Promise<string[]>((resolve) => {
          const message = (id: number, text: string) => ({
            jsonrpc: '2.0',
            id,
            method: 'ui/message',
            params: { role: 'user', content: [{ type: 'text', text }] },
          });
          const sized = (id: number, chars: number) =>
            message(id, 'x'.repeat(chars - JSON.stringify(message(id, '')).length));
          const seen: string[] = [];
          window.addEventListener('message', (event) => {
            const { id, error } = event.data ?? {};
            if (typeof id !== 'number' || id < 20_000) return;
            seen.push(`${id}: ${error?.message ?? 'answered'}`);
            if (id === 20_002) resolve(seen);
          });
          // Not JSON at all: a cycle (structured clone carries it, JSON-RPC cannot).
          const cyclic: Record<string, unknown> = message(20_000, 'loop');
          cyclic.params = { role: 'user', content: [], self: cyclic };
          window.parent.postMessage(cyclic, '*');
          window.parent.postMessage(sized(20_001, max + 1), '*');
          window.parent.postMessage(sized(20_002, max), '*');
        }),
      SANDBOX_MAX_MESSAGE_CHARS,
    );
    // One answer each, in order: had the host seen 20001, its own answer would come before 20002's.
    expect(replies).toEqual([
      '20000: message is not JSON: the sandbox relays JSON-RPC only',
      `20001: message too large: the sandbox relays at most ${SANDBOX_MAX_MESSAGE_CHARS} characters of JSON`,
      '20002: answered',
    ]);
    const messages = ui.byId('tool-app-view-messages').locator('li');
    expect(await messages.count()).toBe(1);
    const envelope = JSON.stringify({
      jsonrpc: '2.0',
      id: 20_002,
      method: 'ui/message',
      params: { role: 'user', content: [{ type: 'text', text: '' }] },
    }).length;
    expect(await messages.textContent()).toBe(
      `the app says: ${'x'.repeat(SANDBOX_MAX_MESSAGE_CHARS - envelope)}`,
    );
    // What the host page was posted from the sandbox: the notice of the dropped one and the one
    // at the limit, nothing longer.
    const seen = await fromSandbox(page);
    expect(seen.filter((m) => m.chars > SANDBOX_MAX_MESSAGE_CHARS)).toEqual([]);
    expect(seen.filter((m) => m.method === 'ui/message')).toEqual([
      { method: 'ui/message', chars: SANDBOX_MAX_MESSAGE_CHARS },
    ]);
    expect(seen.filter((m) => m.method === MESSAGE_DROPPED)).toHaveLength(2);
    expect(await ui.byId('tool-app-view').getByRole('alert').count()).toBe(0);
  });

  it('a view that keeps sending messages longer than its sandbox relays ends in FLOOD, and none of them reaches the host page', async () => {
    const { page, ui, view } = await demoViewRecorded();
    await view.evaluate((max) => {
      const pad = 'x'.repeat(max);
      for (let id = 1; id <= 250; id += 1) {
        window.parent.postMessage(
          { jsonrpc: '2.0', id: 30_000 + id, method: 'ping', params: { pad } },
          '*',
        );
      }
    }, SANDBOX_MAX_MESSAGE_CHARS);
    const alert = ui.byId('tool-app-view').getByRole('alert');
    await alert.waitFor();
    expect(await alert.getAttribute('data-code')).toBe('FLOOD');
    expect(await alert.textContent()).toBe(
      'the view sent more than 200 messages at once and was closed',
    );
    const seen = await fromSandbox(page);
    expect(seen.filter((m) => m.method === MESSAGE_DROPPED).length).toBeGreaterThan(200);
    expect(seen.filter((m) => m.chars > SANDBOX_MAX_MESSAGE_CHARS)).toEqual([]);
  });

  it('a view that keeps sending long messages its sandbox relays ends in FLOOD long before 200 of them: the proxy says each one’s size before it, and the host charges it by that', async () => {
    const { page, ui, view } = await demoViewRecorded();
    await page.evaluate((method) => {
      const sizes: unknown[] = [];
      (window as unknown as { sizes: unknown[] }).sizes = sizes;
      window.addEventListener('message', (event) => {
        if (event.origin !== location.origin && event.data?.method === method) {
          sizes.push(event.data.params);
        }
      });
    }, MESSAGE_SIZE);
    // 80 pings of 250,000 characters (under the proxy's 256 KiB): 4 each, 320 of a budget of
    // 200 refilled at 20 a second; 80 short ones would all pass.
    const chars = await view.evaluate(() => {
      const message = (id: number) => ({
        jsonrpc: '2.0',
        id,
        method: 'ping',
        params: { pad: 'x'.repeat(250_000) },
      });
      for (let id = 1; id <= 80; id += 1) window.parent.postMessage(message(40_000 + id), '*');
      return JSON.stringify(message(40_001)).length;
    });
    const alert = ui.byId('tool-app-view').getByRole('alert');
    await alert.waitFor();
    expect(await alert.getAttribute('data-code')).toBe('FLOOD');
    expect(await alert.textContent()).toBe(
      'the view sent more than 200 messages at once (a long message counting once per 65,536 characters of its JSON) and was closed',
    );
    // Each long one went up after its size, and a size notice carries nothing else.
    const seen = await fromSandbox(page);
    const pings = seen.filter((m) => m.method === 'ping');
    const notices = seen.filter((m) => m.method === MESSAGE_SIZE);
    expect(pings.length).toBeGreaterThan(0);
    expect(notices.length).toBeGreaterThanOrEqual(pings.length);
    const sizes = await page.evaluate(() => (window as unknown as { sizes: unknown[] }).sizes);
    expect(sizes.slice(0, pings.length)).toEqual(pings.map(() => ({ chars })));
    for (const [i, m] of seen.entries()) {
      if (m.method === 'ping') expect(seen[i - 1]?.method, String(i)).toBe(MESSAGE_SIZE);
    }
  });

  it("a view is served by its own host only: another view's host (another server) and another view's proxy ignore it", async () => {
    const { page, ui } = await openDashboard();
    await ui.press('tool-app');
    await viewFrame(page, 'tool-app-view');
    await ui.press('example-apps-open');
    const example = 'basic-vanillajs';
    await until(
      'the example to connect',
      () => ui.byId(`example-${example}`).getAttribute('data-status'),
      (status) => status === 'ready',
      30_000,
    );
    await ui.press(`example-${example}-call`);
    const other = await viewFrame(page, `example-${example}-app`);
    const demoView = await viewFrame(page, 'tool-app-view');
    const calls = recordCalls(page, 'tools/call');
    // A tool of the demo server, asked by the example's view: its own host (the example
    // server's) refuses it, and the demo view's host must not take it for its own. Then the
    // same request posted to the demo view's proxy frame (reachable as top.frames[i]): that
    // proxy relays its own view only. The answers come back to this view alone.
    const answers = await other.evaluate(
      (name) =>
        new Promise<string[]>((resolve) => {
          const seen: string[] = [];
          const call = (id: number) => ({
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: { name, arguments: {} },
          });
          window.addEventListener('message', (event) => {
            const { id, error } = event.data ?? {};
            if (typeof id !== 'number') return;
            seen.push(`${id}: ${error?.message ?? 'served'}`);
            if (seen.length === 2) resolve(seen.sort());
          });
          window.parent.postMessage(call(1), '*');
          const frames = window.top?.frames;
          for (let i = 0; frames && i < frames.length; i += 1) {
            if (frames[i] !== window.parent) frames[i]?.postMessage(call(2), '*');
          }
          window.parent.postMessage({ jsonrpc: '2.0', id: 3, method: 'ping' }, '*');
        }),
      'check_links',
    );
    expect(answers).toEqual(['1: no tool "check_links" on this server', '3: served']);
    // A fence on the demo view's path: its own call, through its proxy to its host, goes out
    // after anything that proxy relayed to that host before (the example view's message).
    await demoView.evaluate((name) => {
      window.parent.postMessage(
        { jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name, arguments: { fence: 1 } } },
        '*',
      );
    }, 'check_links');
    await until(
      "the demo view's own call to reach the server",
      async () => calls.length,
      (n) => n > 0,
    );
    expect(calls.map((request) => request.postData() ?? '')).toEqual([
      expect.stringContaining('"fence":1'),
    ]);
  });
});

describe.each(EXAMPLE_APPS)('the official example app $label', ({ id, tool }) => {
  it('renders, calls its tool through the bridge and shows the result; its message reaches the host, its link needs the user', async () => {
    const { page, ui, errors } = await openDashboard();
    await ui.press('example-apps-open');
    await until(
      `${id} to connect`,
      () => ui.byId(`example-${id}`).getAttribute('data-status'),
      (status) => status === 'ready',
      30_000,
    );
    const calls = recordCalls(page, 'tools/call');
    await ui.press(`example-${id}-call`);
    const view = await viewFrame(page, `example-${id}-app`);
    const time = () => text(view, 'p:has-text("Server Time:") code');
    const first = await until(
      'the tool result in the view',
      time,
      (t) => !Number.isNaN(Date.parse(t)),
    );
    expect(calls).toHaveLength(1);

    // The view's own button: tools/call from the view, through the bridge and the package.
    await view.getByRole('button', { name: 'Get Server Time' }).click();
    await until(
      'the view to call its tool',
      async () => calls.length,
      (n) => n === 2,
    );
    expect(calls[1]?.postData()).toContain(`"name":"${tool}"`);
    await until(
      'a newer time in the view',
      time,
      (t) => t !== first && Date.parse(t) >= Date.parse(first),
    );

    await view.getByRole('button', { name: 'Send Message' }).click();
    await until(
      'the message to reach the host',
      () => ui.byId(`example-${id}-app-messages`).textContent(),
      (t) => t === 'the app says: This is message text.',
    );

    const dialogs: string[] = [];
    page.once('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    const popups: Page[] = [];
    page.context().on('page', (popup) => popups.push(popup));
    await view.getByRole('button', { name: 'Open Link' }).click();
    await until(
      'the host to ask the user',
      async () => dialogs.length,
      (n) => n === 1,
    );
    expect(dialogs[0]).toBe('The app wants to open https://modelcontextprotocol.io/');
    expect(popups).toEqual([]);
    expect(errors).toEqual([]);
  });
});
