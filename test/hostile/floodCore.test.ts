/**
 * The 25,000-update flood on the 2025 era, without React (the React tree is flooded on the
 * 2026-07-28 era in flood.test.tsx; from the dispatcher on, the path is the same). Here the
 * updates ride the session's GET SSE stream instead of a listen stream.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { diagnosticsOf } from '../support/diagnostics';
import { eventually, idle } from '../support/wait';
import {
  FLOOD,
  FLOOD_READ_HOLD_MS,
  flood,
  type Hostile,
  isReadOf,
  longestGap,
  startHostile,
  ticker,
  URI,
} from './harness';

const FLOOD_TEST_TIMEOUT_MS = 90_000;
// Whatever the diagnostics keep after a flood must not grow with it.
const DIAGNOSTICS_BUDGET = 16 * 1024;

describe('a 2025 server that floods', () => {
  let h: Hostile | undefined;

  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it(
    `${FLOOD.toLocaleString('en')} updates for one URI: every one counted, reads single-flight, the event loop keeps turning`,
    async ({ annotate }) => {
      h = await startHostile('legacy-v2');
      const hostile = h;
      const view = hostile.mount(URI);
      await hostile.acknowledged(URI);
      await eventually(() => expect(view.text()).toBe('v1'));
      await idle(hostile.queryClient);
      const reads = hostile.server.store.reads(URI);
      const queries = hostile.queryClient.getQueryCache().getAll().length;
      hostile.proxy.setRules({
        hold: (exchange) => (isReadOf(exchange, URI) ? FLOOD_READ_HOLD_MS : undefined),
      });
      hostile.proxy.resetStats();
      const heapBefore = process.memoryUsage().heapUsed;
      const clock = ticker(10);
      const started = Date.now();
      await flood(hostile.proxy, hostile.server, URI, 'final');

      await eventually(() => expect(diagnosticsOf(hostile.sync).counters.updated).toBe(FLOOD), {
        timeout: FLOOD_TEST_TIMEOUT_MS,
        interval: 50,
      });
      // Every notification has been handled; from here on only trailing reads may start.
      const readsAtLast = hostile.proxy.stats('resources/read').requests;
      await eventually(() => expect(view.text()).toBe('final'));
      const floodMs = Date.now() - started;
      clock.stop();
      // The read in flight when the last notification landed, then at most one trailing read.
      await idle(hostile.queryClient);

      // The one trailing read, plus one that may have been on its way to the proxy when counted.
      expect(hostile.proxy.stats('resources/read').requests - readsAtLast).toBeLessThanOrEqual(2);
      const floodReads = hostile.server.store.reads(URI) - reads;
      expect(floodReads).toBeGreaterThanOrEqual(1);
      expect(floodReads).toBeLessThanOrEqual(Math.ceil(floodMs / FLOOD_READ_HOLD_MS) + 2);
      const maxInFlight = hostile.proxy.stats('resources/read').maxInFlight;
      expect(maxInFlight).toBeLessThanOrEqual(2);
      expect(view.result()).toMatchObject({ status: 'success', fetchStatus: 'idle', error: null });

      const diagnostics = diagnosticsOf(hostile.sync);
      expect(diagnostics.resources.find((r) => r.uri === URI)?.notifications).toBe(FLOOD);
      expect(diagnostics.counters).toMatchObject({ malformed: 0, unmatched: 0 });
      expect(diagnostics.unmatched).toEqual([]);
      expect(JSON.stringify(diagnostics).length).toBeLessThan(DIAGNOSTICS_BUDGET);
      expect(hostile.queryClient.getQueryCache().getAll().length).toBe(queries);
      expect(hostile.sync.getState().status).toBe('ready');
      const ticksDuring = clock.ticks.filter((at) => at >= started && at <= started + floodMs);
      expect(ticksDuring.length).toBeGreaterThanOrEqual(3);

      const heapDelta = process.memoryUsage().heapUsed - heapBefore;
      await annotate(
        `flood of ${FLOOD} processed in ${floodMs} ms; reads ${floodReads} (max ${maxInFlight} in flight); ` +
          `ticks during flood ${ticksDuring.length}, longest gap ${longestGap(ticksDuring)} ms; ` +
          `heap delta ${(heapDelta / 1024 / 1024).toFixed(1)} MB (no gc, informational)`,
      );
    },
    FLOOD_TEST_TIMEOUT_MS,
  );
});
