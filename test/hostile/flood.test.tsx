/** @vitest-environment jsdom */
/**
 * Hostile input with a real React tree mounted: a server that floods 25,000 updates for one URI,
 * and one that sends garbage and fails reads. The tree must keep rendering (nothing thrown into
 * React, a timer-driven component keeps ticking), every notification must be counted, the reads
 * must stay single-flight with a trailing read, and the final content must be shown.
 *
 * The flood runs here on the 2026-07-28 era only: nearly all of its cost is the SDK parsing each
 * message, and jsdom makes that slower still. The 2025 era's flood (GET stream instead of listen
 * stream, same path from the dispatcher on) runs without React in floodCore.test.ts.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { cleanup, render, screen } from '@testing-library/react';
import { Component, type ReactNode, useEffect, useState } from 'react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { McpProvider, useMcpDiagnostics, useResource } from '../../src';
import {
  type ServerKind,
  startServer,
  startTamperProxy,
  type TamperProxy,
  type TestServer,
} from '../servers';
import { text } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually, idle } from '../support/wait';
import {
  FLOOD,
  FLOOD_READ_HOLD_MS,
  flood,
  HOSTILE_KINDS,
  isReadOf,
  longestGap,
  URI,
  updated,
} from './harness';

const TICK_MS = 10;
// The flood is CPU-bound in the SDK; on a loaded machine it can take several times longer.
const FLOOD_TEST_TIMEOUT_MS = 90_000;

// This is a live app under load, not an act()-driven unit test: timers and the network update
// state on their own, as they would in a browser.
let actEnvironment: unknown;
beforeAll(() => {
  const scope = globalThis as { IS_REACT_ACT_ENVIRONMENT?: unknown };
  actEnvironment = scope.IS_REACT_ACT_ENVIRONMENT;
  scope.IS_REACT_ACT_ENVIRONMENT = false;
});
afterAll(() => {
  (globalThis as { IS_REACT_ACT_ENVIRONMENT?: unknown }).IS_REACT_ACT_ENVIRONMENT = actEnvironment;
});

interface Probe {
  caught: unknown[];
  viewerRenders: number;
  ticks: number[];
}

class Boundary extends Component<{ probe: Probe; children: ReactNode }, { failed: boolean }> {
  override state = { failed: false };
  static getDerivedStateFromError() {
    return { failed: true };
  }
  override componentDidCatch(error: unknown) {
    this.props.probe.caught.push(error);
  }
  override render() {
    return this.state.failed ? <div data-testid="crashed">crashed</div> : this.props.children;
  }
}

function Viewer({ probe }: { probe: Probe }) {
  probe.viewerRenders += 1;
  const query = useResource(URI);
  const content = query.data?.contents[0];
  return (
    <div data-testid="viewer">
      {content && 'text' in content ? content.text : query.isPending ? 'loading' : ''}
      {query.error ? ` error: ${query.error.message}` : ''}
    </div>
  );
}

function Ticker({ probe }: { probe: Probe }) {
  const [count, setCount] = useState(0);
  useEffect(() => {
    // biome-ignore lint/style/noRestrictedGlobals: the app's own ticking UI, the flood's witness
    const timer = setInterval(() => setCount((n) => n + 1), TICK_MS);
    return () => clearInterval(timer);
  }, []);
  // Every commit of the ticker: proof that React itself, not only the timer, kept going.
  useEffect(() => {
    probe.ticks.push(Date.now());
  });
  return <div data-testid="ticker">{count}</div>;
}

function Diagnostics() {
  const diagnostics = useMcpDiagnostics();
  const resource = diagnostics.resources.find((r) => r.uri === URI);
  const { updated: notified, malformed, unmatched } = diagnostics.counters;
  return (
    <div data-testid="diagnostics">
      {`ack:${resource?.acknowledged ?? false} updated:${notified} malformed:${malformed} unmatched:${unmatched}`}
    </div>
  );
}

const shown = (id: string) => screen.getByTestId(id).textContent ?? '';

let server: TestServer | undefined;
let proxy: TamperProxy | undefined;
let queryClient: QueryClient | undefined;
let probe: Probe = { caught: [], viewerRenders: 0, ticks: [] };

afterEach(async () => {
  cleanup();
  await disposeSyncs();
  queryClient?.clear();
  await proxy?.close();
  await server?.close();
  server = undefined;
  proxy = undefined;
  queryClient = undefined;
});

/** The app, rendered and settled: `URI` shown, acknowledged, read once. */
async function renderApp(kind: ServerKind) {
  const real = await startServer(kind);
  server = real;
  real.store.upsert(text(URI, 'v1'));
  const tamper = await startTamperProxy(real.url);
  proxy = tamper;
  const client = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  queryClient = client;
  probe = { caught: [], viewerRenders: 0, ticks: [] };
  // The request timeout is not under test here: generous, so a read slowed by a loaded machine
  // is not mistaken for the failure a test injects.
  render(
    <QueryClientProvider client={client}>
      <McpProvider url={tamper.url} lingerMs={30} requestTimeoutMs={5000}>
        <Boundary probe={probe}>
          <Viewer probe={probe} />
          <Ticker probe={probe} />
          <Diagnostics />
        </Boundary>
      </McpProvider>
    </QueryClientProvider>,
  );
  await eventually(() => expect(shown('viewer')).toBe('v1'));
  await eventually(() => expect(shown('diagnostics')).toContain('ack:true'));
  await idle(client);
  return { server: real, proxy: tamper, queryClient: client };
}

describe('a React tree against a 2026-07-28 server that floods', () => {
  it(
    `${FLOOD.toLocaleString('en')} updates for one URI: every one counted, reads single-flight, the UI keeps rendering`,
    async ({ annotate }) => {
      const { server, proxy, queryClient } = await renderApp('modern');
      const reads = server.store.reads(URI);
      const queries = queryClient.getQueryCache().getAll().length;
      proxy.setRules({
        hold: (exchange) => (isReadOf(exchange, URI) ? FLOOD_READ_HOLD_MS : undefined),
      });
      proxy.resetStats();
      const heapBefore = process.memoryUsage().heapUsed;
      const started = Date.now();
      await flood(proxy, server, URI, 'final');

      await eventually(() => expect(shown('diagnostics')).toContain(`updated:${FLOOD} `), {
        timeout: FLOOD_TEST_TIMEOUT_MS,
      });
      await eventually(() => expect(shown('viewer')).toBe('final'), { timeout: 5000 });
      const floodMs = Date.now() - started;
      // The read in flight when the last notification landed, then at most one trailing read.
      await idle(queryClient);

      expect(probe.caught).toEqual([]);
      expect(screen.queryByTestId('crashed')).toBeNull();
      // Single flight with one trailing read: reads follow one another, so their number is bounded
      // by time, not by the number of notifications.
      const floodReads = server.store.reads(URI) - reads;
      expect(floodReads).toBeGreaterThanOrEqual(1);
      expect(floodReads).toBeLessThanOrEqual(Math.ceil(floodMs / FLOOD_READ_HOLD_MS) + 2);
      const maxInFlight = proxy.stats('resources/read').maxInFlight;
      expect(maxInFlight).toBeLessThanOrEqual(2);
      // Renders follow reads, not notifications.
      expect(probe.viewerRenders).toBeLessThan(100);
      // The flood left nothing per notification behind: no new queries, no unmatched entries.
      expect(queryClient.getQueryCache().getAll().length).toBe(queries);
      expect(shown('diagnostics')).toContain('malformed:0 unmatched:0');
      // The timer kept firing and React kept committing while the flood was processed.
      const ticksDuring = probe.ticks.filter((at) => at >= started && at <= started + floodMs);
      expect(ticksDuring.length).toBeGreaterThanOrEqual(3);
      const tickCount = Number(shown('ticker'));
      await eventually(() => expect(Number(shown('ticker'))).toBeGreaterThan(tickCount));

      const heapDelta = process.memoryUsage().heapUsed - heapBefore;
      await annotate(
        `flood of ${FLOOD} processed in ${floodMs} ms; reads ${floodReads} (max ${maxInFlight} in flight); viewer renders ${probe.viewerRenders}; ` +
          `ticks during flood ${ticksDuring.length}, longest gap ${longestGap(ticksDuring)} ms; ` +
          `heap delta ${(heapDelta / 1024 / 1024).toFixed(1)} MB (no gc, informational)`,
      );
    },
    FLOOD_TEST_TIMEOUT_MS,
  );
});

describe.each(HOSTILE_KINDS)('a React tree against a hostile $kind server', ({ kind }) => {
  it('garbage notifications and failing reads never throw into React', async () => {
    const { server, proxy } = await renderApp(kind);
    proxy.inject([
      updated(42),
      updated(''),
      updated({ nested: true }),
      { jsonrpc: '2.0', method: 'notifications/unheard/of', params: { uri: URI } },
      'definitely not json',
      updated('CONFIG://app'),
    ]);
    await eventually(() => expect(shown('diagnostics')).toContain('malformed:4 unmatched:1'));

    proxy.setRules({
      rewrite: (message, exchange) =>
        isReadOf(exchange, URI) && 'result' in message
          ? { jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'disk on fire' } }
          : undefined,
    });
    server.setText(URI, 'v2');
    await eventually(() => expect(shown('viewer')).toBe('v1 error: disk on fire'), {
      timeout: 5000,
    });

    proxy.setRules(undefined);
    server.setText(URI, 'v3');
    await eventually(() => expect(shown('viewer')).toBe('v3'));
    expect(probe.caught).toEqual([]);
    expect(screen.queryByTestId('crashed')).toBeNull();
    const tickCount = Number(shown('ticker'));
    await eventually(() => expect(Number(shown('ticker'))).toBeGreaterThan(tickCount));
  });
});
