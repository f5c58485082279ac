import { QueryClient } from '@tanstack/query-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { McpQueryError } from '../../src/core/errors';
import { REQUESTS_AT_ONCE } from '../../src/core/local';
import { McpCacheSync, type McpCacheSyncOptions } from '../../src/core/mcpCacheSync';
import type { TestServer } from '../servers';
import { deferred } from '../support/deferred';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start, text } from '../support/eras';
import { recordEvents } from '../support/events';
import { observeList, observeResource } from '../support/observe';
import { eventually, idle } from '../support/wait';

const URI = 'config://app';

describe.each(ERA_CASES)('McpCacheSync against the $kind server', ({ kind, era }) => {
  let server: TestServer;
  let queryClient: QueryClient;
  let sync: McpCacheSync | undefined;
  const unmounts: Array<() => void> = [];

  beforeEach(async () => {
    server = await start(kind);
    server.store.upsert(text(URI, 'v1'));
    server.store.upsert(text('note://1', 'first note'));
    queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  });

  afterEach(async () => {
    for (const unmount of unmounts.splice(0)) unmount();
    await sync?.dispose();
    sync = undefined;
    queryClient.clear();
    await server.close();
  });

  function connect(options: Partial<McpCacheSyncOptions> = {}): McpCacheSync {
    sync = new McpCacheSync({
      queryClient,
      url: server.url,
      lingerMs: 30,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
      ...options,
    });
    sync.mount();
    return sync;
  }

  function mount(uri: string) {
    if (!sync) throw new Error('connect first');
    const view = observeResource(sync, uri);
    unmounts.push(view.unmount);
    return view;
  }

  const resource = (uri: string) => diagnosticsOf(sync)?.resources.find((r) => r.uri === uri);
  const acknowledged = (uri: string) =>
    eventually(() => expect(resource(uri)?.acknowledged).toBe(true));
  /** Resolves once the client has handled `count` updates of `uri` in all. */
  const notified = (uri: string, count: number) =>
    eventually(() => expect(resource(uri)?.notifications).toBe(count));

  it('negotiates the era and loads a resource with one read, after the acknowledgement', async () => {
    connect();
    const view = mount(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    expect(sync?.getState()).toMatchObject({ status: 'ready', era });
    expect(server.subscribedUris()).toEqual([URI]);
    await acknowledged(URI);
    await idle(queryClient);
    expect(server.store.reads(URI)).toBe(1);
  });

  it('an update causes exactly one re-read and reaches every observer', async () => {
    connect();
    const a = mount(URI);
    const b = mount(URI);
    await eventually(() => expect([a.text(), b.text()]).toEqual(['v1', 'v1']));
    await acknowledged(URI);
    await idle(queryClient);
    const before = server.store.reads(URI);

    server.setText(URI, 'v2');
    await notified(URI, 1);
    await eventually(() => expect([a.text(), b.text()]).toEqual(['v2', 'v2']));
    await idle(queryClient);
    expect(server.store.reads(URI) - before).toBe(1);
    expect(server.subscribedUris()).toEqual([URI]);
  });

  it('a burst of 100 updates costs at most two reads and ends on the latest content', async () => {
    connect();
    const view = mount(URI);
    await acknowledged(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    await idle(queryClient);
    const before = server.store.reads(URI);

    for (let i = 1; i <= 100; i++) server.setText(URI, `burst ${i}`);
    await notified(URI, 100);
    await eventually(() => expect(view.text()).toBe('burst 100'));
    await idle(queryClient);
    // One read, or two when some of the burst arrived after the first read had begun.
    expect(server.store.reads(URI) - before).toBeGreaterThanOrEqual(1);
    expect(server.store.reads(URI) - before).toBeLessThanOrEqual(2);
    expect(view.text()).toBe('burst 100');
  });

  it('a list of 100 rows has at most 64 reads on the server at once, and each row is read once', async () => {
    const uris = Array.from({ length: 100 }, (_, i) => `row://${i}`);
    for (const uri of uris) server.store.upsert(text(uri, `row ${uri}`));
    const gate = deferred();
    let open = 0;
    let most = 0;
    server.store.onRead(async () => {
      open += 1;
      most = Math.max(most, open);
      await gate.promise;
      open -= 1;
    });
    connect();
    const views = uris.map(mount);
    await eventually(() => expect(open).toBe(REQUESTS_AT_ONCE));
    gate.resolve();
    await eventually(() =>
      expect(views.map((view) => view.text())).toEqual(uris.map((uri) => `row ${uri}`)),
    );
    expect(most).toBe(REQUESTS_AT_ONCE);
    expect(uris.map((uri) => server.store.reads(uri))).toEqual(uris.map(() => 1));
  });

  it('a row that leaves while its read waits its turn is never read', async () => {
    const uris = Array.from({ length: 100 }, (_, i) => `row://${i}`);
    for (const uri of uris) server.store.upsert(text(uri, `row ${uri}`));
    const gate = deferred();
    const arrived = new Set<string>();
    server.store.onRead(async (uri) => {
      arrived.add(uri);
      await gate.promise;
    });
    connect();
    const views = new Map(uris.map((uri) => [uri, mount(uri)]));
    await eventually(() => expect(arrived.size).toBe(REQUESTS_AT_ONCE));
    // The rows whose reads wait in line (for their turn, or their subscription) scroll away.
    const left = uris.filter((uri) => !arrived.has(uri));
    for (const uri of left) views.get(uri)?.unmount();
    gate.resolve();
    const stayed = [...arrived];
    await eventually(() =>
      expect(stayed.map((uri) => views.get(uri)?.text())).toEqual(
        stayed.map((uri) => `row ${uri}`),
      ),
    );
    // A row mounted now waits behind anything still in line: once it shows, the line is empty.
    server.store.upsert(text('row://late', 'late'));
    const late = mount('row://late');
    await eventually(() => expect(late.text()).toBe('late'));
    expect(left).toHaveLength(uris.length - REQUESTS_AT_ONCE);
    expect(left.map((uri) => server.store.reads(uri))).toEqual(left.map(() => 0));
  });

  it('when the server answers none of the reads in flight, the rows waiting their turn fail with TIMEOUT as those do, unsent', async () => {
    const uris = Array.from({ length: 200 }, (_, i) => `row://${i}`);
    for (const uri of uris) server.store.upsert(text(uri, `row ${uri}`));
    const gate = deferred();
    server.store.onRead(() => gate.promise);
    connect({ requestTimeoutMs: 300 });
    // Unsubscribed: on 2025 a subscribed row's read would wait its subscribe's turn first, and
    // the subscribes of a server that hangs every read crawl (most time out): the rows would
    // reach the read line one by one, never 136 at once.
    const views = uris.map((uri) => {
      if (!sync) throw new Error('connect first');
      const view = observeResource(sync, uri, { subscribe: false });
      unmounts.push(view.unmount);
      return view;
    });
    // 64 are sent and never answered; when they time out, 64 more are sent, and the rest time
    // out in line at the same time instead of waiting 300 ms more per 64 ahead of them.
    const unsentTimeouts = () =>
      uris.filter((uri, i) => {
        const reason = views[i]?.result().failureReason as McpQueryError | null | undefined;
        return reason?.code === 'TIMEOUT' && server.store.reads(uri) === 0;
      });
    await eventually(() =>
      expect(unsentTimeouts().length).toBeGreaterThanOrEqual(uris.length - 2 * REQUESTS_AT_ONCE),
    );
    gate.resolve();
  });

  it('an update during the very first read is not lost', async () => {
    let hold: (() => void) | undefined;
    server.store.onRead(
      () =>
        new Promise<void>((resolve) => {
          if (hold) return resolve();
          hold = resolve;
        }),
    );
    connect();
    const view = mount(URI);
    await eventually(() => expect(hold).toBeDefined()); // first read is on the server, answering v1
    server.setText(URI, 'v2');
    await notified(URI, 1); // the notification lands while that read is still open
    hold?.();
    await eventually(() => expect(view.text()).toBe('v2'));
    await idle(queryClient);
    expect(server.store.reads(URI)).toBe(2);
  });

  it('list_changed refetches the list once and re-reads only resources whose entry changed', async () => {
    server.store.upsert(text('note://2', 'second note'));
    connect();
    const list = observeList(sync as McpCacheSync);
    unmounts.push(list.unmount);
    const config = mount(URI);
    const note1 = mount('note://1');
    const note2 = mount('note://2');
    await eventually(() => expect(list.uris()).toEqual([URI, 'note://1', 'note://2']));
    await eventually(() =>
      expect([config.text(), note1.text(), note2.text()]).toEqual([
        'v1',
        'first note',
        'second note',
      ]),
    );
    await Promise.all([acknowledged(URI), acknowledged('note://1'), acknowledged('note://2')]);
    await eventually(() => expect(diagnosticsOf(sync)?.listAcknowledged).toBe(true));
    await idle(queryClient);
    const listChanged = diagnosticsOf(sync)?.counters.listChanged ?? 0;
    const before = {
      ...server.counters(),
      config: server.store.reads(URI),
      n1: server.store.reads('note://1'),
    };

    // note://1's entry changes, note://2 disappears, a new note appears; config is untouched.
    server.store.upsert({ ...text('note://1', 'first note, edited'), title: 'Edited' });
    server.store.remove('note://2');
    server.store.upsert(text('note://3', 'third note'));
    server.resourcesChanged();
    server.resourcesChanged(); // a burst still costs one or two list reads

    await eventually(() => expect(list.uris()).toEqual([URI, 'note://1', 'note://3']));
    await eventually(() => expect(note1.text()).toBe('first note, edited'));
    await eventually(() => expect(note2.result().error).toBeTruthy());
    await eventually(() => expect(diagnosticsOf(sync)?.counters.listChanged).toBe(listChanged + 2));
    await idle(queryClient);
    const after = server.counters();
    expect(after.listRequests - before.listRequests).toBeGreaterThanOrEqual(1);
    expect(after.listRequests - before.listRequests).toBeLessThanOrEqual(2);
    expect(server.store.reads(URI)).toBe(before.config);
    expect(server.store.reads('note://1') - before.n1).toBe(1);
    expect(server.store.reads('note://3')).toBe(0);
    expect(note2.text()).toBe('second note'); // the failed re-read keeps the old content
  });

  it('server-side subscriptions follow the reference count through mount/unmount churn', async () => {
    connect({ lingerMs: 30 });
    const log = recordEvents(sync as McpCacheSync);
    const a1 = mount('a://1');
    const a2 = mount('a://1');
    const b = mount('b://2');
    await eventually(() => expect(server.subscribedUris()).toEqual(['a://1', 'b://2']));
    // a1 and b let go together: once b's linger has ended, a://1's would have as well.
    a1.unmount();
    b.unmount();
    await eventually(() => expect(log.released('b://2')).toBe(true));
    expect(log.released('a://1')).toBe(false); // a2 still holds it
    expect(resource('a://1')).toMatchObject({ refs: 1, subscribed: true });
    expect(server.subscribedUris()).toContain('a://1');
    a2.unmount();
    const c = mount('c://3');
    await eventually(() => expect(server.subscribedUris()).toEqual(['c://3']));

    // Unmount and remount within the linger: no churn on the server. The linger is the subject,
    // so it passes on fake timers; a last release is the control that they drive it.
    const countersBefore = server.counters();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      c.unmount();
      const again = mount('c://3');
      await vi.advanceTimersByTimeAsync(30 * 3);
      expect(log.released('c://3')).toBe(false);
      expect(server.subscribedUris()).toEqual(['c://3']);
      const countersAfter = server.counters();
      expect(countersAfter.listenRequests).toBe(countersBefore.listenRequests);
      expect(countersAfter.subscribeRequests).toBe(countersBefore.subscribeRequests);
      expect(countersAfter.unsubscribeRequests).toBe(countersBefore.unsubscribeRequests);
      again.unmount();
      await vi.advanceTimersByTimeAsync(30 * 3);
      expect(log.released('c://3')).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('an update for a URI nobody subscribed causes no read and is listed', async () => {
    server.store.upsert(text('other://x', 'x'));
    connect();
    const view = mount(URI);
    await acknowledged(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    await idle(queryClient);
    const reads = server.store.reads();
    // Notify a spelling the client did not subscribe, and a URI nobody wants. Then a real change:
    // the same stream carries it, so once it is shown the two before it have been handled.
    server.resourceUpdated('CONFIG://app');
    server.resourceUpdated('other://x');
    server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
    await idle(queryClient);
    expect(server.store.reads()).toBe(reads + 1);
    expect(server.store.reads(URI)).toBe(2);
    // Both eras' servers deliver only what the client subscribed, so nothing else arrived.
    expect(diagnosticsOf(sync)?.counters.unmatched).toBe(0);
  });

  it('a failed read keeps the previous content and exposes the error', async () => {
    connect();
    const view = mount(URI);
    await acknowledged(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    server.store.failReads(URI, { code: -32603, message: 'disk on fire' });
    server.setText(URI, 'v2');
    await eventually(() => expect(view.result().error?.message).toContain('disk on fire'), {
      timeout: 15_000,
    });
    expect(view.text()).toBe('v1');
    expect(diagnosticsOf(sync)?.resources.find((r) => r.uri === URI)?.lastError).toContain(
      'disk on fire',
    );
    server.store.failReads(URI, null);
    server.setText(URI, 'v3');
    await eventually(() => expect(view.text()).toBe('v3'));
    expect(view.result().error).toBeNull();
  });

  it('a missing resource is an error without retries', async () => {
    connect();
    const view = mount('missing://nothing');
    // Failed for good (TanStack retries inside one fetch), and covered: no re-read can follow.
    await eventually(() =>
      expect(view.result()).toMatchObject({ status: 'error', fetchStatus: 'idle' }),
    );
    await acknowledged('missing://nothing');
    await idle(queryClient);
    expect(server.store.reads('missing://nothing')).toBe(1);
  });

  it('a dropped stream is re-established and everything subscribed is re-read once', async () => {
    connect();
    const view = mount(URI);
    await acknowledged(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    await idle(queryClient);
    const before = server.store.reads(URI);

    server.dropStreams();
    server.setText(URI, 'changed during the gap'); // published to nobody
    await eventually(() => expect(view.text()).toBe('changed during the gap'));
    await acknowledged(URI);
    await idle(queryClient);
    expect(server.store.reads(URI) - before).toBe(1);
    expect(diagnosticsOf(sync)?.stream.reopenCount).toBeGreaterThanOrEqual(1);
    server.setText(URI, 'after recovery');
    await eventually(() => expect(view.text()).toBe('after recovery'));
  });

  it('a server restart is survived: status shows it, changes made while down are shown', async () => {
    connect();
    const view = mount(URI);
    await acknowledged(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    const statuses = new Set<string>();
    const stop = sync?.subscribeState(() => statuses.add(sync?.getState().status ?? ''));
    await server.restart();
    server.setText(URI, 'changed across the restart');
    await eventually(() => expect(view.text()).toBe('changed across the restart'));
    await eventually(() => expect(server.subscribedUris()).toEqual([URI]));
    await acknowledged(URI);
    server.setText(URI, 'live again');
    await eventually(() => expect(view.text()).toBe('live again'));
    stop?.();
    expect(statuses.has('reconnecting')).toBe(true);
    expect(sync?.getState().status).toBe('ready');
  });
});

describe.each(ERA_CASES)('a $kind server without the subscribe capability', ({ kind }) => {
  it('gets no subscribe request, and the diagnostics say why', async () => {
    const server = await start(kind, { capabilities: { subscribe: false, listChanged: true } });
    server.store.upsert(text(URI, 'v1', { ttlMs: 0 }));
    const queryClient = new QueryClient();
    const sync = new McpCacheSync({ queryClient, url: server.url, lingerMs: 10 });
    sync.mount();
    const view = observeResource(sync, URI);
    try {
      await eventually(() => expect(view.text()).toBe('v1'));
      // Declined for want of the capability: decided without asking the server.
      await eventually(() =>
        expect(diagnosticsOf(sync).resources.find((r) => r.uri === URI)?.declined).toContain(
          'resources.subscribe',
        ),
      );
      expect(server.counters().subscribeRequests).toBe(0);
      expect(server.subscribedUris()).toEqual([]);
      const diagnostics = diagnosticsOf(sync);
      const resource = diagnostics.resources.find((r) => r.uri === URI);
      expect(resource?.acknowledged).toBe(false);
      expect(resource?.declined).toContain('resources.subscribe');
      const check = diagnostics.checks.find((c) => c.id === 'capabilities');
      expect(check?.ok).toBe(false);
      expect(check?.detail).toContain('resources.subscribe');
      // Not pushed, so freshness follows the TTL: stale at once.
      expect(view.result().isStale).toBe(true);
    } finally {
      view.unmount();
      await sync.dispose();
      queryClient.clear();
      await server.close();
    }
  });
});
