/**
 * One hostile server per test: a real server of the given kind behind a tampering proxy, and an
 * McpCacheSync connected to the proxy. Everything a test opens is closed by `close()`, in the
 * order that keeps teardown quiet (client first, so nothing reconnects into a closing server).
 */
import { QueryClient } from '@tanstack/query-core';
import { expect } from 'vitest';
import type { McpDiagnostics } from '../../src/core/checks';
import { McpCacheSync, type McpCacheSyncOptions } from '../../src/core/mcpCacheSync';
import {
  type JsonRpcMessage,
  type ServerKind,
  startServer,
  startTamperProxy,
  type TamperProxy,
  type TamperRules,
  type TestServer,
} from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { text } from '../support/eras';
import { observeResource } from '../support/observe';
import { eventually } from '../support/wait';

export const URI = 'config://app';
export const UPDATED = 'notifications/resources/updated';

/** The eras every hostile behaviour is checked on: 2026-07-28 and 2025 on SDK v2. */
export const HOSTILE_KINDS: { kind: ServerKind; era: 'modern' | 'legacy' }[] = [
  { kind: 'modern', era: 'modern' },
  { kind: 'legacy-v2', era: 'legacy' },
];

export type View = ReturnType<typeof observeResource>;

export interface Hostile {
  server: TestServer;
  proxy: TamperProxy;
  queryClient: QueryClient;
  sync: McpCacheSync;
  /** What `useResource(uri, options)` does, without React. */
  mount(uri: string, options?: { retry?: boolean | number }): View;
  /** Resolves once `uri` is covered by the server (acknowledged / subscribed with a live stream). */
  acknowledged(uri: string, timeout?: number): Promise<void>;
  resource(uri: string): McpDiagnostics['resources'][number] | undefined;
  close(): Promise<void>;
}

export async function startHostile(
  kind: ServerKind,
  options: Partial<McpCacheSyncOptions> = {},
  rules?: TamperRules,
): Promise<Hostile> {
  const server = await startServer(kind);
  server.store.upsert(text(URI, 'v1'));
  // Rules from the start: some hostility must already be there for the very first exchange.
  const proxy = await startTamperProxy(server.url, rules);
  // Retries stay (the library's policy), only faster: a hostile answer must still settle quickly.
  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  const sync = new McpCacheSync({
    queryClient,
    url: proxy.url,
    lingerMs: 30,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    ...options,
  });
  const unmount = sync.mount();
  const views: Array<() => void> = [];
  const resource = (uri: string) => diagnosticsOf(sync)?.resources.find((r) => r.uri === uri);
  return {
    server,
    proxy,
    queryClient,
    sync,
    mount(uri, options) {
      const view = observeResource(sync, uri);
      // Query options of the hook's caller win over the provider's defaults, as in useResource.
      if (options) view.observer.setOptions({ ...sync.resourceQueryOptions(uri), ...options });
      views.push(view.unmount);
      return view;
    },
    async acknowledged(uri, timeout) {
      await eventually(() => expect(resource(uri)?.acknowledged).toBe(true), { timeout });
    },
    resource,
    async close() {
      for (const stop of views.splice(0)) stop();
      unmount();
      await sync.dispose();
      queryClient.clear();
      await proxy.close();
      await server.close();
    },
  };
}

export function updated(uri: unknown): JsonRpcMessage {
  return { jsonrpc: '2.0', method: UPDATED, params: { uri } };
}

/** Whether a JSON-RPC message is the notification with that method. */
export const isNotification = (message: JsonRpcMessage, method: string) =>
  message.method === method && message.id === undefined;

/** The request that set off a hostile answer: a read of `uri`. */
export const isReadOf = (exchange: { method: string | undefined; params: unknown }, uri: string) =>
  exchange.method === 'resources/read' &&
  (exchange.params as { uri?: unknown } | undefined)?.uri === uri;

export const ACK = 'notifications/subscriptions/acknowledged';

/** The URIs a `subscriptions/listen` request asked for. */
export function requestedUris(exchange: { params: unknown }): string[] {
  const filter = (exchange.params as { notifications?: { resourceSubscriptions?: unknown } })
    ?.notifications;
  const uris = filter?.resourceSubscriptions;
  return Array.isArray(uris) ? uris.filter((u): u is string => typeof u === 'string') : [];
}

/** The same acknowledgement, claiming to honour `uris` (and whatever else `extra` adds). */
export function honouring(ack: JsonRpcMessage, uris: string[], extra: object = {}): JsonRpcMessage {
  const params = ack.params as { notifications?: object } & Record<string, unknown>;
  return {
    ...ack,
    params: {
      ...params,
      notifications: { ...params.notifications, resourceSubscriptions: uris, ...extra },
    },
  };
}

/**
 * Whether the query is stale now. `result().isStale` is only recomputed by a timer in a
 * browser-like environment (TanStack skips stale timers where there is no `window`), so under
 * Node it is recomputed here from the observer's own options.
 */
export function staleNow(view: View): boolean {
  // An observer's options are stored already defaulted; only the type does not say so.
  const options = view.observer.options as Parameters<typeof view.observer.getOptimisticResult>[0];
  return view.observer.getOptimisticResult(options).isStale;
}

/**
 * What the flood suites check (every update counted, single flight, bounded diagnostics, the
 * event loop turning) does not depend on the number, so the suite floods 25,000: the bench
 * (`npm run bench -- --only=flood,memory`) is where 100,000 are timed and measured.
 * `HOSTILE_FLOOD=<n>` changes it.
 */
export const FLOOD = Number(process.env.HOSTILE_FLOOD) || 25_000;
export const FLOOD_CHUNKS = 4;
/**
 * Reads of a flooded URI are held this long, so "single flight plus one trailing read" has a
 * number to check: reads can only follow one another, never pile up.
 */
export const FLOOD_READ_HOLD_MS = 200;

/**
 * Sends FLOOD updates for `uri` in FLOOD_CHUNKS big SSE chunks. Between chunks the content
 * changes silently; the last change is to `finalText`, which the client must end up showing.
 */
export async function flood(
  proxy: TamperProxy,
  server: TestServer,
  uri: string,
  finalText: string,
): Promise<void> {
  const perChunk = Math.ceil(FLOOD / FLOOD_CHUNKS);
  for (let chunk = 0; chunk < FLOOD_CHUNKS; chunk++) {
    server.store.setText(uri, chunk === FLOOD_CHUNKS - 1 ? finalText : `flood ${chunk}`);
    const size = Math.min(perChunk, FLOOD - chunk * perChunk);
    const written = proxy.inject(new Array(size).fill(updated(uri)));
    if (written !== 1) throw new Error(`flood: ${written} notification streams open, expected 1`);
    // One turn of the event loop, I/O included, so each chunk goes out on its own.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Timestamps of a timer that should fire every `everyMs` while the event loop is free. */
export function ticker(everyMs: number): { ticks: number[]; stop(): void } {
  const ticks: number[] = [];
  const timer = setInterval(() => ticks.push(Date.now()), everyMs);
  return { ticks, stop: () => clearInterval(timer) };
}

export function longestGap(times: number[]): number {
  let longest = 0;
  for (let i = 1; i < times.length; i++) {
    longest = Math.max(longest, (times[i] ?? 0) - (times[i - 1] ?? 0));
  }
  return longest;
}
