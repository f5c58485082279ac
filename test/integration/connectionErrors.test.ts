/**
 * Rule 13: a failure ends in a state that says what to do, with a message that names the URL and
 * the HTTP status. Every case runs against a real server behind a proxy that answers for it (or a
 * port nothing listens on), and counts what reached it: how soon `error` comes is bounded by
 * attempts, never by the clock.
 */
import { createServer } from 'node:net';
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { McpCacheSync, type McpCacheSyncOptions } from '../../src/core/mcpCacheSync';
import { startTamperProxy, type TamperProxy, type TamperRules, type TestServer } from '../servers';
import { start, text } from '../support/eras';
import { observeResource } from '../support/observe';
import { eventually } from '../support/wait';

const URI = 'config://app';
const FAST = { initialDelayMs: 20, maxDelayMs: 100 };

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function broken(rules: TamperRules): Promise<{ server: TestServer; proxy: TamperProxy }> {
  const server = await start('legacy-v2');
  server.store.upsert(text(URI, 'v1'));
  cleanups.push(() => server.close());
  const proxy = await startTamperProxy(server.url, rules);
  cleanups.push(() => proxy.close());
  return { server, proxy };
}

function connect(url: string, options: Partial<McpCacheSyncOptions> = {}) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const sync = new McpCacheSync({ queryClient, url, reconnect: FAST, ...options });
  cleanups.push(async () => {
    await sync.dispose();
    queryClient.clear();
  });
  sync.mount();
  return sync;
}

/** Every request the proxy answered itself or passed on. */
const requests = (proxy: TamperProxy) =>
  ['server/discover', 'initialize', 'POST', 'GET'].reduce(
    (sum, method) => sum + proxy.stats(method).requests,
    0,
  );

const answer = (status: number, body = '', type = 'text/plain'): TamperRules => ({
  respond: () => ({ status, headers: { 'content-type': type }, body }),
});

describe('a server that is not an MCP endpoint ends in error after a bounded number of attempts', () => {
  it.each([
    ['a 404 (wrong path)', answer(404, 'Cannot POST /mcp'), 'HTTP 404'],
    ['a 405 (method refused)', answer(405), 'HTTP 405'],
    ['a 400 on the first request', answer(400, 'Bad Request'), 'HTTP 400'],
    [
      'an HTML 500 page',
      answer(500, '<html><body><h1>Internal Server Error</h1></body></html>', 'text/html'),
      'HTTP 500 — Internal Server Error',
    ],
    ['a 200 that is not JSON', answer(200, 'not json', 'application/json'), 'not an MCP endpoint'],
    ['a 200 HTML page', answer(200, '<html>hello</html>', 'text/html'), 'not an MCP endpoint'],
  ])('%s', async (_, rules, expected) => {
    const { proxy } = await broken(rules);
    const sync = connect(proxy.url);
    const statuses: string[] = [];
    sync.subscribeState(() => {
      const { status } = sync.getState();
      if (statuses.at(-1) !== status) statuses.push(status);
    });
    await eventually(() => expect(sync.getState().status).toBe('error'));
    const message = sync.getState().error?.message ?? '';
    expect(message).toContain(proxy.url);
    expect(message).toContain(expected);
    // Two attempts (each a version probe and, as a 2025 fallback, an initialize): then it stops.
    const attempts = requests(proxy);
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(attempts).toBeLessThanOrEqual(4);
    expect(statuses.filter((status) => status === 'reconnecting').length).toBeLessThanOrEqual(1);
    // A read fails with the connection's error at once (TanStack's retry then applies), not pending.
    const view = observeResource(sync, URI);
    cleanups.push(view.unmount);
    await eventually(() => expect(view.result().failureReason?.message).toContain(proxy.url));
    // reconnect() tries again.
    sync.reconnect();
    await eventually(() => expect(requests(proxy)).toBeGreaterThan(attempts));
    await eventually(() => expect(sync.getState().status).toBe('error'));
  });

  it('an invalid URL is an error at once, naming the URL, with no request', async () => {
    const sync = connect('not a url');
    await eventually(() => expect(sync.getState().status).toBe('error'));
    expect(sync.getState().error?.message).toContain('"not a url" is not a valid URL');
    expect(sync.getState().attempt).toBe(0);
  });
});

describe('a server that wants credentials is unauthorized, not retried', () => {
  it.each([401, 403])('HTTP %s', async (status) => {
    const { proxy } = await broken({
      respond: () => ({ status, headers: { 'www-authenticate': 'Bearer' } }),
    });
    // Fake timers before connecting: a retry, had one been scheduled, would be on them.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    cleanups.push(() => vi.useRealTimers());
    const sync = connect(proxy.url);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    const message = sync.getState().error?.message ?? '';
    expect(message).toContain(proxy.url);
    expect(message).toContain(`HTTP ${status}`);
    const attempts = requests(proxy);
    // Nothing more is tried until someone signs in (authorize) or calls reconnect: nothing is
    // scheduled, and ten backoff periods start nothing.
    expect(sync.getState().nextRetryAt).toBeUndefined();
    await vi.advanceTimersByTimeAsync(FAST.maxDelayMs * 10);
    expect(sync.getState().status).toBe('unauthorized');
    expect(requests(proxy)).toBe(attempts);
    sync.getState().authorize(); // no interactive provider: connects again
    await eventually(() => expect(requests(proxy)).toBeGreaterThan(attempts));
  });
});

describe('a server that is down is retried with backoff, and reads do not wait forever', () => {
  it('a closed port: reconnecting with a growing attempt count, reads fail after requestTimeoutMs', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address() as { port: number };
        probe.close(() => resolve(address.port));
      });
    });
    const url = `http://127.0.0.1:${port}/mcp`;
    const sync = connect(url, { requestTimeoutMs: 300 });
    await eventually(() => expect(sync.getState().attempt).toBeGreaterThanOrEqual(3));
    expect(sync.getState().status).toBe('reconnecting');
    expect(sync.getState().error?.message).toContain(`${url} is unreachable`);
    const view = observeResource(sync, URI);
    cleanups.push(view.unmount);
    await eventually(() =>
      expect(view.result().failureReason?.message).toContain('is unreachable'),
    );
    expect(sync.getState().status).toBe('reconnecting');
  });

  it('a gateway 503 is transient: reconnecting, then ready once the server answers', async () => {
    let down = true;
    const { proxy } = await broken({
      respond: () => (down ? { status: 503, body: 'Service Unavailable' } : undefined),
    });
    const sync = connect(proxy.url);
    await eventually(() => expect(sync.getState().attempt).toBeGreaterThanOrEqual(2));
    expect(sync.getState().status).toBe('reconnecting');
    expect(sync.getState().error?.message).toContain('HTTP 503');
    down = false;
    await eventually(() => expect(sync.getState().status).toBe('ready'));
  });
});
