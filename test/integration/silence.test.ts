import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import type { TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start, text } from '../support/eras';
import { observeResource } from '../support/observe';
import { eventually, idle } from '../support/wait';

const URI = 'config://app';
/** A change found by a read counts as silent once this long has passed without a notification. */
const GRACE_MS = 2000;

// The probe's period and the grace for a late notification are the subject here, so the client
// runs on fake timers (and a fake clock) from its start; the server and the network stay real.
describe.each(ERA_CASES)('"subscribed but silent" ($kind)', ({ kind }) => {
  let server: TestServer;
  let sync: McpCacheSync;
  const queryClient = new QueryClient();
  const resource = () => diagnosticsOf(sync).resources[0];

  afterEach(async () => {
    vi.useRealTimers();
    await sync.dispose();
    queryClient.clear();
    await server.close();
  });

  async function setUp(silenceProbeMs?: number) {
    server = await start(kind);
    server.store.upsert(text(URI, 'v1'));
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
    });
    sync = new McpCacheSync({ queryClient, url: server.url, lingerMs: 20, silenceProbeMs });
    sync.mount();
    const view = observeResource(sync, URI);
    await eventually(() => expect(resource()?.acknowledged).toBe(true));
    await eventually(() => expect(view.text()).toBe('v1'));
    await idle(queryClient);
    return view;
  }

  /** Lets `ms` of the client's time pass, then waits for the reads that set off. */
  async function pass(ms: number) {
    await vi.advanceTimersByTimeAsync(ms);
    await idle(queryClient);
  }

  it('a change the server never announces is found by the probe and shown by the check', async () => {
    const view = await setUp(200);
    server.store.setText(URI, 'changed on another instance'); // no notification
    await pass(200);
    expect(view.text()).toBe('changed on another instance');
    expect(resource()?.silentChanges).toBe(0); // a notification may still be on its way
    await pass(GRACE_MS);
    expect(resource()?.silentChanges).toBe(1);
    const check = diagnosticsOf(sync).checks.find((c) => c.id === 'silent');
    expect(check?.ok).toBe(false);
    expect(check?.detail).toContain('another process or instance');
    view.unmount();
  });

  it('without the probe a quiet resource is never polled', async () => {
    const view = await setUp();
    const reads = server.store.reads(URI);
    server.store.setText(URI, 'unannounced');
    await vi.advanceTimersByTimeAsync(10 * GRACE_MS);
    // A poll would have started a read when its timer fired.
    expect(queryClient.isFetching()).toBe(0);
    expect(server.store.reads(URI)).toBe(reads);
    expect(view.text()).toBe('v1');
    view.unmount();
  });

  it('announced changes are not counted as silent', async () => {
    const view = await setUp(200);
    server.setText(URI, 'announced');
    await eventually(() => expect(view.text()).toBe('announced'));
    await idle(queryClient);
    const reads = server.store.reads(URI);
    await pass(200); // the probe reads again, finds nothing new
    expect(server.store.reads(URI)).toBeGreaterThan(reads);
    await pass(GRACE_MS);
    expect(resource()?.silentChanges).toBe(0);
    view.unmount();
  });

  it('a change announced whose first read failed, read by the retry, is not counted as silent', async () => {
    const view = await setUp();
    server.store.failReads(URI); // the re-read the notification sets off fails (a busy server)
    server.setText(URI, 'announced, read on retry');
    await eventually(() => expect(resource()?.lastError).toBeDefined());
    server.store.failReads(URI, null);
    await pass(1000); // TanStack's first retry
    await eventually(() => expect(view.text()).toBe('announced, read on retry'));
    await pass(GRACE_MS);
    expect(resource()?.silentChanges).toBe(0);
    expect(diagnosticsOf(sync).checks.find((c) => c.id === 'silent')?.ok).toBe(true);
    view.unmount();
  });

  it('a resource whose reads fail is probed once per period, not on every tick of the probe', async () => {
    const view = await setUp(200);
    // Not retried by TanStack (not found), so every read here is the probe's.
    server.store.failReads(URI, { code: -32002, message: 'gone for now' });
    await pass(200); // the first probe read, which fails
    await eventually(() => expect(resource()?.lastError).toBeDefined());
    const reads = server.store.reads(URI);
    for (let tick = 0; tick < 10; tick++) await pass(100); // 1 s: five periods, ten ticks
    expect(server.store.reads(URI) - reads).toBeLessThanOrEqual(5);
    view.unmount();
  });

  it('a change announced only after the probe read it is not counted as silent', async () => {
    const view = await setUp(200);
    server.store.setText(URI, 'announced late'); // the bus is slow: the probe gets there first
    await pass(200);
    expect(view.text()).toBe('announced late');
    const notified = resource()?.notifications ?? 0;
    server.resourceUpdated(URI);
    await eventually(() => expect(resource()?.notifications).toBe(notified + 1));
    await pass(GRACE_MS);
    expect(resource()?.silentChanges).toBe(0);
    view.unmount();
  });
});
