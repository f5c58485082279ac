/**
 * Rule 6 on a 2025 session: a notification stream that ends is resumed in the same session
 * (the SDK waits the server's `retry:` and sends `Last-Event-ID`); the session is rebuilt only
 * when the server has forgotten it. What was missed is caught up once: replayed by a resumable
 * server, re-read after a fresh stream from one that is not.
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { startTamperProxy, type TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { start, text } from '../support/eras';
import { observeResource } from '../support/observe';
import { eventually, idle } from '../support/wait';

const URI = 'config://app';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function setUp(kind: TestServer['kind'], options?: Parameters<typeof start>[1]) {
  const server = await start(kind, options);
  server.store.upsert(text(URI, 'v1'));
  cleanups.push(() => server.close());
  const proxy = await startTamperProxy(server.url);
  cleanups.push(() => proxy.close());
  const queryClient = new QueryClient();
  const sync = new McpCacheSync({
    queryClient,
    url: proxy.url,
    lingerMs: 20,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
  });
  cleanups.push(async () => {
    await sync.dispose();
    queryClient.clear();
  });
  const view = observeResource(sync, URI);
  cleanups.push(view.unmount);
  await eventually(() => expect(view.text()).toBe('v1'));
  await eventually(() => expect(diagnosticsOf(sync)?.resources[0]?.acknowledged).toBe(true));
  return { server, proxy, sync, view };
}

describe.each(['legacy-v2', 'legacy-v1'] as const)('a dropped SSE stream (%s)', (kind) => {
  it('is resumed in the same session, and a change made meanwhile is read once', async () => {
    const { server, proxy, sync, view } = await setUp(kind);
    await idle(sync.queryClient);
    const reads = server.store.reads(URI);
    server.dropStreams();
    server.store.setText(URI, 'changed during the gap'); // no stream: nobody is told
    await eventually(() => expect(view.text()).toBe('changed during the gap'));
    expect(sync.getState().status).toBe('ready');
    expect(proxy.stats('initialize').requests).toBe(1); // the same session, no rebuild
    await eventually(() => expect(diagnosticsOf(sync)?.stream.state).toBe('open'));
    await eventually(() => expect(diagnosticsOf(sync)?.resources[0]?.acknowledged).toBe(true));
    await idle(sync.queryClient);
    expect(server.store.reads(URI) - reads).toBe(1);
    // And it is live again.
    server.setText(URI, 'after');
    await eventually(() => expect(view.text()).toBe('after'));
  });

  it('a session the server forgot (restart) is rebuilt, and caught up', async () => {
    const { server, proxy, view } = await setUp(kind);
    await server.restart();
    server.store.setText(URI, 'after the restart');
    await eventually(() => expect(view.text()).toBe('after the restart'));
    expect(proxy.stats('initialize').requests).toBe(2);
    server.setText(URI, 'live again');
    await eventually(() => expect(view.text()).toBe('live again'));
  });
});

describe('a resumable 2025 server (event store)', () => {
  it('replays what was missed after Last-Event-ID, without a catch-up storm', async () => {
    const { server, proxy, sync, view } = await setUp('legacy-v2', { eventStore: true });
    // One notification on the stream, so it carries an event id to resume from.
    server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
    await idle(sync.queryClient);
    const reads = server.store.reads(URI);
    const notified = diagnosticsOf(sync)?.resources[0]?.notifications ?? 0;
    // Resumed with Last-Event-ID, coverage never lapses: no catch-up re-read is needed. Nor is
    // it acknowledged again (the channel names every URI when the stream changes state; the
    // session tells only what moved, so the diagnostics count no new coverage).
    const lapses: string[] = [];
    const again: string[] = [];
    sync.subscribeEvents((event) => {
      if (event.type !== 'coverage') return;
      lapses.push(...event.lost);
      again.push(...event.acknowledged);
    });
    // The resumed stream stalls on its way (a slow network) while the server sends a burst.
    let release: () => void = () => {};
    const stall = new Promise<void>((resolve) => {
      release = resolve;
    });
    proxy.setRules({ hold: (exchange) => (exchange.httpMethod === 'GET' ? stall : undefined) });
    server.dropStreams();
    await eventually(() => expect(diagnosticsOf(sync)?.stream.state).toBe('reopening'));
    await eventually(() => expect(proxy.stats('GET').inFlight).toBe(1));
    for (let i = 1; i <= 20; i++) server.setText(URI, `burst ${i}`);
    release();
    await eventually(() => expect(view.text()).toBe('burst 20'));
    await eventually(() =>
      expect(diagnosticsOf(sync)?.resources[0]?.notifications).toBe(notified + 20),
    );
    await idle(sync.queryClient);
    // The replayed burst costs what a live burst costs: one read, at most two (rule 3).
    expect(server.store.reads(URI) - reads).toBeGreaterThanOrEqual(1);
    expect(server.store.reads(URI) - reads).toBeLessThanOrEqual(2);
    expect(proxy.stats('initialize').requests).toBe(1);
    expect(lapses).toEqual([]);
    expect(again).toEqual([]);
  });
});
