import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import type { TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start, text } from '../support/eras';
import { observeResource } from '../support/observe';
import { eventually, sleep } from '../support/wait';

const URI = 'config://app';

describe.each(ERA_CASES)('"subscribed but silent" ($kind)', ({ kind }) => {
  let server: TestServer;
  let sync: McpCacheSync;
  const queryClient = new QueryClient();

  afterEach(async () => {
    await sync.dispose();
    queryClient.clear();
    await server.close();
  });

  async function setUp(silenceProbeMs?: number) {
    server = await start(kind);
    server.store.upsert(text(URI, 'v1'));
    sync = new McpCacheSync({ queryClient, url: server.url, lingerMs: 20, silenceProbeMs });
    sync.mount();
    const view = observeResource(sync, URI);
    await eventually(() => expect(diagnosticsOf(sync)?.resources[0]?.acknowledged).toBe(true));
    await eventually(() => expect(view.text()).toBe('v1'));
    return view;
  }

  it('a change the server never announces is found by the probe and shown by the check', async () => {
    const view = await setUp(200);
    server.store.setText(URI, 'changed on another instance'); // no notification
    await eventually(() => expect(view.text()).toBe('changed on another instance'), {
      timeout: 3000,
    });
    // Counted once the grace for a late notification (2 s) has passed.
    await eventually(() => expect(diagnosticsOf(sync)?.resources[0]?.silentChanges).toBe(1), {
      timeout: 4000,
    });
    const diagnostics = diagnosticsOf(sync);
    const check = diagnostics.checks.find((c) => c.id === 'silent');
    expect(check?.ok).toBe(false);
    expect(check?.detail).toContain('another process or instance');
    view.unmount();
  });

  it('without the probe a quiet resource is never polled', async () => {
    const view = await setUp();
    const reads = server.store.reads(URI);
    server.store.setText(URI, 'unannounced');
    await sleep(500);
    expect(server.store.reads(URI)).toBe(reads);
    expect(view.text()).toBe('v1');
    view.unmount();
  });

  it('announced changes are not counted as silent', async () => {
    const view = await setUp(200);
    server.setText(URI, 'announced');
    await eventually(() => expect(view.text()).toBe('announced'));
    await sleep(500); // the probe reads again, finds nothing new
    expect(diagnosticsOf(sync)?.resources[0]?.silentChanges).toBe(0);
    view.unmount();
  });

  it('a change announced only after the probe read it is not counted as silent', async () => {
    const view = await setUp(200);
    server.store.setText(URI, 'announced late'); // the bus is slow: the probe gets there first
    await eventually(() => expect(view.text()).toBe('announced late'), { timeout: 3000 });
    server.resourceUpdated(URI);
    await sleep(2500);
    expect(diagnosticsOf(sync)?.resources[0]?.silentChanges).toBe(0);
    view.unmount();
  });
});
