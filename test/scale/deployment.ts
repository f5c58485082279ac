/**
 * A scaled-out deployment on loopback: N instances (each with its own bus), a round-robin proxy
 * in front, and one client (`McpCacheSync` with a few mounted resources) talking to the proxy
 * only. Records when each `notifications/resources/updated` reaches the client.
 */
import { performance } from 'node:perf_hooks';
import {
  InMemoryServerEventBus,
  type McpHttpHandler,
  type ServerEventBus,
} from '@modelcontextprotocol/server';
import { QueryClient } from '@tanstack/query-core';
import { createClient } from 'redis';
import { expect } from 'vitest';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { createRedisEventBus, type RedisEventBus } from '../../src/server';
import { ResourceStore } from '../servers/resourceStore';
import { diagnosticsOf } from '../support/diagnostics';
import { text } from '../support/eras';
import { observeResource } from '../support/observe';
import { eventually } from '../support/wait';
import { type Instance, startInstance } from './instance';
import { type RoundRobinProxy, startRoundRobinProxy } from './roundRobinProxy';

export type BusKind = 'redis' | 'memory';

export interface Deployment {
  kind: BusKind;
  uris: string[];
  store: ResourceStore;
  instances: Instance[];
  /** The Redis buses, one per instance (empty for in-memory ones). */
  buses: RedisEventBus[];
  /** Whether every instance's own Redis client (the one its bus publishes with) is connected. */
  publishersReady(): boolean[];
  proxy: RoundRobinProxy;
  sync: McpCacheSync;
  texts(): Array<string | undefined>;
  /** Resolves once the client shows `text` for `uri`. */
  contentIs(uri: string, text: string): Promise<void>;
  /** Index of the instance holding the client's one listen stream. */
  streamInstance(): number;
  /** Notifications the client got (for `uri`, or all). */
  notifications(uri?: string): number;
  /** The arrival time (performance.now()) of the next notification for `uri`, once it comes. */
  nextNotification(uri: string): { at(): number | undefined; cancel(): void };
  /**
   * Resolves once the client has handled a resource list_changed announced on the instance that
   * holds its stream: whatever that stream carried before it has been handled too.
   */
  fence(): Promise<void>;
  close(): Promise<void>;
}

export interface DeployOptions {
  kind: BusKind;
  instances: number;
  uris: string[];
  redisUrl?: string;
  channel?: string;
}

export async function deploy(options: DeployOptions): Promise<Deployment> {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  try {
    return await build(options, cleanups, close);
  } catch (error) {
    await close();
    throw error;
  }
}

async function build(
  options: DeployOptions,
  cleanups: Array<() => Promise<unknown> | unknown>,
  close: () => Promise<void>,
): Promise<Deployment> {
  const { kind, uris } = options;
  const store = new ResourceStore(uris.map((uri) => text(uri, 'v0')));
  const buses: RedisEventBus[] = [];
  const clients: Array<{ isReady: boolean }> = [];
  const plain: ServerEventBus[] = [];
  const serve: Array<((handler: McpHttpHandler) => McpHttpHandler) | undefined> = [];
  for (let i = 0; i < options.instances; i++) {
    if (kind === 'memory') {
      plain.push(new InMemoryServerEventBus());
      continue;
    }
    // One client per instance: each stands for a separate process.
    const client = createClient({ url: options.redisUrl, socket: { reconnectStrategy: 20 } });
    client.on('error', () => {});
    await client.connect();
    cleanups.push(() => client.destroy());
    clients.push(client);
    const bus = createRedisEventBus({
      redis: client,
      channel: options.channel,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    cleanups.push(() => bus.close());
    await bus.ready();
    buses.push(bus);
    plain.push(bus);
    serve.push((handler) => bus.attach(handler));
  }
  const instances: Instance[] = [];
  for (const [i, bus] of plain.entries()) {
    const instance = await startInstance({ name: `instance-${i}`, store, bus, serve: serve[i] });
    cleanups.push(() => instance.close());
    instances.push(instance);
  }
  const proxy = await startRoundRobinProxy(instances.map((instance) => instance.origin));
  cleanups.push(() => proxy.close());

  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  const sync = new McpCacheSync({
    queryClient,
    url: `${proxy.origin}/mcp`,
    protocol: '2026-07-28',
    lingerMs: 30,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
  });
  cleanups.push(() => queryClient.clear());
  cleanups.push(() => sync.dispose());

  const counts = new Map<string, number>();
  let total = 0;
  const waiters = new Map<string, Array<(at: number) => void>>();
  cleanups.push(
    sync.subscribeEvents((event) => {
      if (event.type !== 'updated' || !event.matched) return;
      const at = performance.now();
      total += 1;
      counts.set(event.uri, (counts.get(event.uri) ?? 0) + 1);
      const pending = waiters.get(event.uri);
      waiters.delete(event.uri);
      for (const resolve of pending ?? []) resolve(at);
    }),
  );

  sync.mount();
  const views = uris.map((uri) => observeResource(sync, uri));
  cleanups.push(() => {
    for (const view of views) view.unmount();
  });
  const texts = () => views.map((view) => view.text());
  await eventually(() => {
    expect(texts()).toEqual(uris.map(() => 'v0'));
    const covered = diagnosticsOf(sync)?.resources.filter((r) => r.acknowledged);
    expect(covered).toHaveLength(uris.length);
    // One multiplexed stream, after make-before-break has closed any earlier one.
    expect(instances.map((instance) => instance.listenStreams()).reduce((a, b) => a + b)).toBe(1);
  });
  store.resetCounters();

  return {
    kind,
    uris,
    store,
    instances,
    buses,
    publishersReady: () => clients.map((client) => client.isReady),
    proxy,
    sync,
    texts,
    async contentIs(uri, expected) {
      const view = views[uris.indexOf(uri)];
      await eventually(() => expect(view?.text()).toBe(expected), { timeout: 2000, interval: 1 });
    },
    streamInstance: () => instances.findIndex((instance) => instance.listenStreams() > 0),
    notifications: (uri) => (uri === undefined ? total : (counts.get(uri) ?? 0)),
    nextNotification(uri) {
      let arrivedAt: number | undefined;
      const arrived = (at: number) => {
        arrivedAt = at;
      };
      waiters.set(uri, [...(waiters.get(uri) ?? []), arrived]);
      return {
        at: () => arrivedAt,
        cancel() {
          waiters.set(
            uri,
            (waiters.get(uri) ?? []).filter((waiter) => waiter !== arrived),
          );
        },
      };
    },
    async fence() {
      const before = diagnosticsOf(sync).counters.listChanged;
      const holder = instances.find((instance) => instance.listenStreams() > 0);
      holder?.handler.notify.resourcesChanged();
      await eventually(() => expect(diagnosticsOf(sync).counters.listChanged).toBe(before + 1));
    },
    close,
  };
}

export interface Sample {
  instance: number;
  uri: string;
  /** publish → client notification (ms); undefined if it never came. */
  latencyMs: number | undefined;
}

/**
 * Update `count` times, round-robin over the resources and over the instances: change the shared
 * store, then announce it on instance k % N, like a request handled by that instance would.
 * Waits for each notification before the next update, so every latency is one event's own. With
 * `mayMiss`, a notification that has not come once the stream's own instance has fenced it
 * (`fence()`) never will: it is recorded as missed.
 */
export async function updateRoundRobin(
  deployment: Deployment,
  count: number,
  { first = 0, mayMiss = false }: { first?: number; mayMiss?: boolean } = {},
): Promise<Sample[]> {
  const { uris, instances, store } = deployment;
  const samples: Sample[] = [];
  for (let k = first; k < first + count; k++) {
    const uri = uris[k % uris.length] as string;
    const instance = k % instances.length;
    store.setText(uri, `v${k + 1}`);
    const arrival = deployment.nextNotification(uri);
    const start = performance.now();
    instances[instance]?.handler.notify.resourceUpdated(uri);
    if (mayMiss) await deployment.fence();
    else {
      // Polled every millisecond: the wait itself must not add to the next sample.
      await eventually(() => expect(arrival.at(), `the update of ${uri}`).toBeDefined(), {
        interval: 1,
      });
    }
    const at = arrival.at();
    arrival.cancel();
    samples.push({ instance, uri, latencyMs: at === undefined ? undefined : at - start });
    // Let the re-read land before the next update: client, proxy and instances share this one
    // event loop, and a read still in flight would be measured as notification latency.
    if (at !== undefined) await deployment.contentIs(uri, `v${k + 1}`);
  }
  return samples;
}

/** Content each resource should show after updates 0..n-1 (`v0` if it never changed). */
export function latestTexts(uris: string[], updates: number): string[] {
  return uris.map((_, i) => {
    const last = i < updates ? updates - 1 - ((updates - 1 - i) % uris.length) : -1;
    return `v${last + 1}`;
  });
}

export function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

export const ms = (value: number | undefined) =>
  value === undefined ? '   -   ' : `${value.toFixed(2).padStart(6)}ms`;
