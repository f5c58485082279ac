import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { QueryClient } from '@tanstack/query-core';
import { it } from 'vitest';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { mcpDiagnostics } from '../../src/core/mcpDiagnostics';
import { type ServerKind, startTamperProxy } from '../../test/servers';
import { observeResource } from '../../test/support/observe';
import { type FloodSize, KINDS, OUR_OPTIONS, SIZES } from '../lib/config';
import { elapsed, quiet, sleep, startBenchServer, until, uriOf } from '../lib/harness';
import { type Cell, ms, over, type Table, type Target, writeFragment } from '../lib/report';
import { round } from '../lib/stats';

/**
 * A flood of `notifications/resources/updated` for URIs nobody shows, on a
 * connection whose notification stream (2025: the GET stream; 2026-07-28:
 * the listen stream) carries them, injected by a proxy in a few big chunks.
 * Measured: the CPU time of this process until every one of them is counted
 * in the diagnostics (as unmatched), and that nothing was read. The server
 * and the proxy live in this process too, but only write bytes here; the
 * client parses them. `url`: the package's own transport, which drops such
 * updates from the stream's bytes; `transport`: the SDK's transport passed
 * in, where the SDK parses and validates every message first (the baseline).
 */

type Variant = 'url' | 'transport';
const VARIANTS: Variant[] = ['url', 'transport'];

interface FloodRun {
  variant: Variant;
  updates: number;
  cpuMs: number;
  wallMs: number;
  microsPerUpdate: number;
  unmatched: number;
  reads: number;
  malformed: number;
}

async function runFlood(kind: ServerKind, variant: Variant, size: FloodSize): Promise<FloodRun> {
  const server = await startBenchServer(kind, 1);
  const proxy = await startTamperProxy(server.url);
  const queryClient = new QueryClient();
  const sync = new McpCacheSync({
    queryClient,
    lingerMs: OUR_OPTIONS.lingerMs,
    ...(variant === 'url'
      ? { url: proxy.url }
      : { transport: () => new StreamableHTTPClientTransport(new URL(proxy.url)) }),
  });
  const unmount = sync.mount();
  const diagnostics = mcpDiagnostics(sync);
  const view = observeResource(sync, uriOf(0));
  const label = `flood ${kind} ${variant}`;
  if (!(await until(() => view.text() === 'v0', 20_000)))
    throw new Error(`${label}: no first read`);
  const covered = () =>
    diagnostics.getSnapshot().resources.find((r) => r.uri === uriOf(0))?.acknowledged === true;
  if (!(await until(covered, 20_000))) throw new Error(`${label}: never covered`);
  await quiet(() => server.store.reads(), 200);
  const readsBefore = server.store.reads();
  const unmatchedBefore = diagnostics.getSnapshot().counters.unmatched;

  const messages = Array.from({ length: size.distinctUris }, (_, i) => ({
    jsonrpc: '2.0' as const,
    method: 'notifications/resources/updated',
    params: { uri: `nobody://shows/${i}` },
  }));
  const perChunk = Math.ceil(size.updates / size.chunks);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (let sent = 0; sent < size.updates; sent += perChunk) {
    const count = Math.min(perChunk, size.updates - sent);
    const chunk = Array.from({ length: count }, (_, k) => messages[(sent + k) % messages.length]);
    if (proxy.inject(chunk as (typeof messages)[number][]) !== 1) {
      throw new Error(`${label}: expected one notification stream`);
    }
    await sleep(20);
  }
  const counted = () =>
    diagnostics.getSnapshot().counters.unmatched - unmatchedBefore === size.updates;
  const done = await until(counted, 120_000, 20);
  const cpu = process.cpuUsage(cpuBefore);
  const wallMs = performance.now() - started;
  if (!done) throw new Error(`${label}: not every update was counted`);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const snapshot = diagnostics.getSnapshot();
  const run: FloodRun = {
    variant,
    updates: size.updates,
    cpuMs: round(cpuMs, 1),
    wallMs: round(wallMs, 1),
    microsPerUpdate: round((cpuMs * 1000) / size.updates, 2),
    unmatched: snapshot.counters.unmatched - unmatchedBefore,
    reads: server.store.reads() - readsBefore,
    malformed: snapshot.counters.malformed,
  };
  view.unmount();
  unmount();
  await sync.dispose();
  queryClient.clear();
  await proxy.close();
  await server.close();
  (globalThis as { gc?: () => void }).gc?.();
  await sleep(100);
  return run;
}

it('flood: 100,000 updates for URIs nobody shows', async () => {
  const start = performance.now();
  const size = SIZES.flood;
  const results: Record<string, FloodRun[]> = {};
  const tables: Table[] = [];
  const targets: Target[] = [];
  // The target is for 100,000 updates: 2 s, i.e. 20 µs each.
  const budgetMs = (2000 * size.updates) / 100_000;

  for (const kind of KINDS) {
    const runs: FloodRun[] = [];
    for (const variant of VARIANTS) {
      const runStart = performance.now();
      const run = await runFlood(kind, variant, size);
      runs.push(run);
      console.log(
        `flood ${kind} ${variant}: ${elapsed(runStart)} ms (${run.cpuMs} ms CPU, ${run.microsPerUpdate} µs per update)`,
      );
    }
    results[kind] = runs;
    tables.push({
      title: `flood · ${kind} · ${size.updates.toLocaleString('en')} updates for ${size.distinctUris} URIs nobody shows, in ${size.chunks} chunks`,
      head: ['transport', 'CPU ms', 'µs per update', 'wall ms', 'counted unmatched', 'reads'],
      rows: runs.map((run): Cell[] => [
        run.variant === 'url' ? 'url (ours)' : 'transport (SDK parses)',
        ms(run.cpuMs),
        run.microsPerUpdate,
        ms(run.wallMs),
        run.unmatched,
        run.reads,
      ]),
      notes: [
        'CPU: this process (client, proxy, server) from the first chunk until the diagnostics counted every update; the proxy only writes the bytes.',
      ],
    });
    const ours = runs.find((run) => run.variant === 'url') as FloodRun;
    const sdk = runs.find((run) => run.variant === 'transport') as FloodRun;
    targets.push({
      scenario: 'flood',
      kind,
      name: `CPU for ${size.updates.toLocaleString('en')} updates nobody shows (url transport)`,
      target: `≤ ${budgetMs.toLocaleString('en')} ms, nothing read`,
      actual: `${ms(ours.cpuMs)} ms (${ours.microsPerUpdate} µs each; the SDK's path: ${ms(sdk.cpuMs)} ms), ${ours.reads} reads, ${ours.unmatched} counted`,
      pass: ours.cpuMs <= budgetMs && ours.reads === 0 && ours.unmatched === size.updates,
      missedBy: over(ours.cpuMs, budgetMs, ' ms'),
      why: 'the CPU is the whole process (proxy and server write the bytes, the client reads and frames them); see the µs per update against the SDK path',
    });
  }

  writeFragment({
    scenario: 'flood',
    durationMs: elapsed(start),
    config: { ...size, kinds: KINDS },
    results,
    tables,
    targets,
    ourMismatches: 0,
  });
});
