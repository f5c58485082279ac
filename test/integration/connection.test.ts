import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { McpCacheSync, type McpCacheSyncOptions } from '../../src/core/mcpCacheSync';
import type { TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start, text } from '../support/eras';
import { recordEvents } from '../support/events';
import { observeResource } from '../support/observe';
import { eventually, idle } from '../support/wait';

const URI = 'config://app';

describe('connection sources and protocol choice', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function serve(kind: TestServer['kind']) {
    const server = await start(kind);
    server.store.upsert(text(URI, 'v1'));
    cleanups.push(() => server.close());
    return server;
  }

  function sync(options: Omit<McpCacheSyncOptions, 'queryClient'>) {
    const queryClient = new QueryClient();
    const instance = new McpCacheSync({ queryClient, lingerMs: 20, ...options });
    instance.mount();
    cleanups.push(async () => {
      await instance.dispose();
      queryClient.clear();
    });
    return instance;
  }

  it.each(ERA_CASES)(
    'a connected client passed in is used as is and never closed ($kind)',
    async ({ kind, era }) => {
      const server = await serve(kind);
      const client = new Client(
        { name: 'host', version: '1' },
        { versionNegotiation: { mode: 'auto' } },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      cleanups.push(() => client.close());
      let hostSawClose = false;
      client.onclose = () => {
        hostSawClose = true;
      };

      const instance = sync({ client });
      const view = observeResource(instance, URI);
      await eventually(() => expect(view.text()).toBe('v1'));
      expect(instance.getState()).toMatchObject({ status: 'ready', era, client });
      server.setText(URI, 'v2');
      await eventually(() => expect(view.text()).toBe('v2'));
      // The host keeps calling the server on the same connection.
      await expect(client.listResources()).resolves.toMatchObject({ resources: [{ uri: URI }] });
      view.unmount();
      await instance.dispose();
      // Still open after a round trip on it, so nothing closed it on the way out.
      await expect(client.readResource({ uri: URI })).resolves.toBeTruthy();
      expect(hostSawClose).toBe(false);
    },
  );

  it('a client that is not connected is a clear error state', async () => {
    const client = new Client({ name: 'host', version: '1' });
    const instance = sync({ client });
    await eventually(() => expect(instance.getState().status).toBe('error'));
    expect(instance.getState().error?.message).toContain('not connected');
  });

  it.each(ERA_CASES)(
    'a transport factory is called once per connection ($kind)',
    async ({ kind }) => {
      const server = await serve(kind);
      let made = 0;
      const instance = sync({
        transport: () => {
          made += 1;
          return new StreamableHTTPClientTransport(new URL(server.url));
        },
      });
      const view = observeResource(instance, URI);
      cleanups.push(view.unmount);
      await eventually(() => expect(view.text()).toBe('v1'));
      expect(made).toBe(1);
      instance.reconnect();
      await eventually(() => expect(instance.getState().status).toBe('ready'));
      expect(made).toBe(2);
      server.setText(URI, 'after reconnect');
      await eventually(() => expect(view.text()).toBe('after reconnect'));
    },
  );

  it("protocol 'legacy' speaks 2025 even to a modern server", async () => {
    const server = await serve('modern');
    const instance = sync({ url: server.url, protocol: 'legacy' });
    await eventually(() => expect(instance.getState().status).toBe('ready'));
    expect(instance.getState().era).toBe('legacy');
    expect(diagnosticsOf(instance).legacy).toBe(true);
  });

  it("protocol '2026-07-28' refuses a legacy server instead of falling back", async () => {
    const server = await serve('legacy-v2');
    const instance = sync({
      url: server.url,
      protocol: '2026-07-28',
      reconnect: { initialDelayMs: 50, maxDelayMs: 100 },
    });
    await eventually(() => expect(instance.getState().status).toBe('reconnecting'));
    expect(instance.getState().error).toBeInstanceOf(Error);
    expect(instance.getState().era).toBeUndefined();
  });

  it('exactly one of url, client or transport is required', () => {
    expect(() => new McpCacheSync({ queryClient: new QueryClient() })).toThrow(
      'needs one of url, client or transport',
    );
  });
});

describe.each(ERA_CASES)('freshness and the cache against the $kind server', ({ kind }) => {
  let server: TestServer;
  let queryClient: QueryClient;
  let instance: McpCacheSync;

  afterEach(async () => {
    await instance.dispose();
    queryClient.clear();
    await server.close();
  });

  async function setUp(resources = [text(URI, 'v1', { ttlMs: 60_000, cacheScope: 'public' })]) {
    server = await start(kind);
    for (const resource of resources) server.store.upsert(resource);
    queryClient = new QueryClient();
    instance = new McpCacheSync({ queryClient, url: server.url, lingerMs: 20 });
    instance.mount();
  }

  it('a subscribed, acknowledged resource is fresh until notified', async () => {
    await setUp([text(URI, 'v1')]); // no TTL: without the subscription it would be stale at once
    const view = observeResource(instance, URI);
    await eventually(() => expect(diagnosticsOf(instance).resources[0]?.acknowledged).toBe(true));
    await eventually(() => expect(view.text()).toBe('v1'));
    expect(view.result().isStale).toBe(false);
    view.unmount();
  });

  it('reads bypass the SDK response cache: a refetch always reaches the server', async () => {
    await setUp();
    const unrelated = observeResource(instance, 'unrelated://x'); // keeps a stream up
    const { QueryObserver } = await import('@tanstack/query-core');
    // An observer that opts out of the subscription: URI itself stays unsubscribed.
    const observer = new QueryObserver(queryClient, {
      ...instance.resourceQueryOptions(URI),
      meta: { mcpSubscribe: false },
    });
    const stop = observer.subscribe(() => {});
    await eventually(() => expect(observer.getCurrentResult().data).toBeDefined());
    server.store.setText(URI, 'changed silently');
    await observer.refetch();
    expect(server.store.reads(URI)).toBe(2);
    expect(observer.getCurrentResult().data?.contents[0]).toMatchObject({
      text: 'changed silently',
    });
    stop();
    unrelated.unmount();
  });

  it('an update for a cached resource nobody observes only marks it stale', async () => {
    await setUp([text(URI, 'v1')]);
    const view = observeResource(instance, URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    await eventually(() => expect(diagnosticsOf(instance).resources[0]?.acknowledged).toBe(true));
    // Nobody observes it any more, but the subscription is kept (lingering, then retained).
    view.unmount();
    await idle(queryClient);
    const reads = server.store.reads(URI);
    server.setText(URI, 'v2');
    await eventually(() =>
      expect(
        queryClient.getQueryCache().find({ queryKey: ['resource', URI] })?.state.isInvalidated,
      ).toBe(true),
    );
    // A re-read would have started with the invalidation, from the same notification.
    expect(queryClient.isFetching()).toBe(0);
    expect(server.store.reads(URI)).toBe(reads);
  });

  it('list_changed with no list on screen still re-reads removed cached resources', async () => {
    await setUp([text(URI, 'v1'), text('note://1', 'n')]);
    const config = observeResource(instance, URI);
    const note = observeResource(instance, 'note://1');
    await eventually(() => expect(note.text()).toBe('n'));
    await eventually(() => expect(diagnosticsOf(instance).listAcknowledged).toBe(true));
    await idle(queryClient);
    const configReads = server.store.reads(URI);
    server.removeResource('note://1');
    await eventually(() => expect(note.result().error).toBeTruthy());
    await idle(queryClient);
    expect(note.text()).toBe('n');
    expect(server.store.reads(URI)).toBe(configReads);
    config.unmount();
    note.unmount();
  });
});

describe.each(ERA_CASES)('shutdown during a reconnect ($kind)', ({ kind }) => {
  it('closes everything and sends nothing more, however the stream was lost', async () => {
    const server = await start(kind);
    server.store.upsert(text(URI, 'v1'));
    const queryClient = new QueryClient();
    const instance = new McpCacheSync({
      queryClient,
      url: server.url,
      lingerMs: 20,
      reconnect: { initialDelayMs: 200, maxDelayMs: 400 },
    });
    const unmount = instance.mount();
    const view = observeResource(instance, URI);
    try {
      await eventually(() => expect(view.text()).toBe('v1'));
      await eventually(() => expect(server.openStreams()).toBe(1));
      // From here the backoff runs on fake timers, so it can be let run out after the shutdown.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      server.dropStreams();
      await eventually(() => expect(instance.getState().status).toBe('reconnecting'));
      // The attempt count is shown; nextRetryAt only while waiting (not during an attempt).
      expect(instance.getState().attempt).toBeGreaterThanOrEqual(1);
      view.unmount();
      unmount();
      await instance.dispose(); // what the deferred teardown does
      expect(instance.getState().status).toBe('closed');
      const log = recordEvents(instance);
      const counters = { ...server.counters(), reads: server.store.reads() };
      await vi.advanceTimersByTimeAsync(400 * 3); // longer than any pending backoff
      expect(log.events).toEqual([]);
      expect({ ...server.counters(), reads: server.store.reads() }).toEqual(counters);
      expect(server.openStreams()).toBe(0);
    } finally {
      vi.useRealTimers();
      queryClient.clear();
      await server.close();
    }
  });
});

describe.each(['legacy-v2', 'legacy-v1'] as const)('a 2025 session (%s)', (kind) => {
  it('is ended on the server when the provider unmounts, taking its subscriptions along', async () => {
    const server = await start(kind);
    server.store.upsert(text(URI, 'v1'));
    const queryClient = new QueryClient();
    const instance = new McpCacheSync({ queryClient, url: server.url, lingerMs: 20 });
    const unmount = instance.mount();
    const view = observeResource(instance, URI);
    try {
      await eventually(() => expect(server.subscribedUris()).toEqual([URI]));
      view.unmount();
      unmount();
      await eventually(() => expect(server.subscribedUris()).toEqual([]));
    } finally {
      queryClient.clear();
      await server.close();
    }
  });
});
