/**
 * Health (issue 21): the optional keep-alive (`keepAlive({ pingIntervalMs })`) on the three real servers and
 * the reference server. An idle connection pings (`ping` on 2025, `server/discover` on
 * 2026-07-28, which has no ping); the round trip is in the diagnostics; a ping that fails
 * makes the connection reconnect like any dead connection; without the option nothing is sent.
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { McpEvent } from '../../src/core/events';
import { keepAlive } from '../../src/core/keepAlive';
import { McpCacheSync, type McpCacheSyncOptions } from '../../src/core/mcpCacheSync';
import { mcpDiagnostics } from '../../src/core/mcpDiagnostics';
import { callTool } from '../../src/core/tools';
import { startTamperProxy, type TestServer } from '../servers';
import { startEverythingServer } from '../servers/everything';
import { ERA_CASES, start } from '../support/eras';
import { eventually } from '../support/wait';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

function connect(url: string, options: Partial<McpCacheSyncOptions> = {}) {
  const sync = new McpCacheSync({
    queryClient: new QueryClient(),
    url,
    reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
    ...options,
  });
  const events: McpEvent[] = [];
  sync.subscribeEvents((event) => events.push(event));
  const diagnostics = mcpDiagnostics(sync);
  cleanups.push(diagnostics.subscribe(() => {}));
  cleanups.push(() => sync.dispose());
  sync.mount();
  return { sync, events, diagnostics };
}

const pingMethod = (era: 'modern' | 'legacy') => (era === 'modern' ? 'server/discover' : 'ping');

async function serve(kind: (typeof ERA_CASES)[number]['kind']): Promise<TestServer> {
  const server = await start(kind);
  cleanups.push(() => server.close());
  return server;
}

describe.each(ERA_CASES)('keep-alive ($kind)', ({ kind, era }) => {
  it('an idle connection pings, and the round trip is in the diagnostics', async () => {
    const server = await serve(kind);
    const { sync, diagnostics } = connect(server.url, {
      keepAlive: keepAlive({ pingIntervalMs: 50 }),
    });
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    const connectedWith = server.counters().methods[pingMethod(era)] ?? 0;
    await eventually(() =>
      expect(server.counters().methods[pingMethod(era)]).toBeGreaterThanOrEqual(connectedWith + 2),
    );
    await eventually(() =>
      expect(diagnostics.getSnapshot().health?.rttMs).toBeGreaterThanOrEqual(0),
    );
    expect(diagnostics.getSnapshot().health?.failures).toBe(0);
    expect(sync.getState().status).toBe('ready');
  });

  it('without keepAlive nothing is pinged', async () => {
    const server = await serve(kind);
    server.store.setTools([{ name: 'echo' }]);
    // Time is the subject: the client runs on fake timers and a fake clock from its start, so a
    // ping, had one been scheduled, would be due once they have run far past any period.
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
    });
    cleanups.push(() => vi.useRealTimers());
    const { sync, events, diagnostics } = connect(server.url);
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    const connectedWith = server.counters().methods[pingMethod(era)];
    await vi.advanceTimersByTimeAsync(30_000);
    // A ping would have gone out when its timer fired, before this call, answered since.
    await callTool(sync, { name: 'echo' });
    expect(server.counters().methods[pingMethod(era)]).toBe(connectedWith);
    expect(events.filter((event) => event.type === 'ping')).toEqual([]);
    expect(diagnostics.getSnapshot().health).toBeUndefined();
    expect(sync.getState().status).toBe('ready');
  });

  it('a ping that fails makes the connection reconnect, and it comes back', async () => {
    const server = await serve(kind);
    const proxy = await startTamperProxy(server.url);
    cleanups.push(() => proxy.close());
    const { sync, events, diagnostics } = connect(proxy.url, {
      keepAlive: keepAlive({ pingIntervalMs: 50 }),
    });
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    proxy.setRules({
      respond: (exchange) =>
        exchange.method === pingMethod(era)
          ? { status: 503, headers: { 'content-type': 'text/plain' }, body: 'down' }
          : undefined,
    });
    await eventually(() =>
      expect(events.some((e) => e.type === 'status' && e.status === 'reconnecting')).toBe(true),
    );
    expect(events.some((e) => e.type === 'ping' && e.error !== undefined)).toBe(true);
    proxy.setRules(undefined);
    await eventually(() => {
      expect(sync.getState().status).toBe('ready');
      const health = diagnostics.getSnapshot().health;
      expect(health?.failures).toBeGreaterThanOrEqual(1);
      expect(health?.lastError).toBeUndefined();
    });
  });
});

it('keep-alive against the reference server (server-everything)', async () => {
  const server = await startEverythingServer();
  cleanups.push(() => server.close());
  const { sync, diagnostics } = connect(server.url, {
    keepAlive: keepAlive({ pingIntervalMs: 50 }),
  });
  await eventually(() => expect(sync.getState().status).toBe('ready'));
  await eventually(() => expect(server.methods().ping).toBeGreaterThanOrEqual(1));
  await eventually(() => expect(diagnostics.getSnapshot().health?.rttMs).toBeGreaterThanOrEqual(0));
});
