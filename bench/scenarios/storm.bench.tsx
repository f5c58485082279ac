/** @vitest-environment jsdom */
import { it } from 'vitest';
import type { ServerKind, TestServer } from '../../test/servers';
import { KINDS, OUR_OPTIONS, QUICK, SEED, SIZES, type StormSize } from '../lib/config';
import { mountViews, type ViewSpec } from '../lib/dom';
import { RawResourceSet } from '../lib/floor';
import {
  elapsed,
  ioTurn,
  quiet,
  serverText,
  sleep,
  startBenchServer,
  until,
  uriOf,
} from '../lib/harness';
import { type ImplName, startImpl } from '../lib/impls';
import { Prng } from '../lib/prng';
import { type Cell, ms, over, type Table, type Target, writeFragment } from '../lib/report';
import { histogram, ratio, type Summary, summarize } from '../lib/stats';
import { Tracker } from '../lib/tracker';

/**
 * A burst that has not moved for this long with something still stale has
 * ended stale. Longer than TanStack's first two retry delays (1 s, 2 s).
 */
const STALE_AFTER_MS = 3500;

interface Update {
  uri: string;
  text: string;
}

interface Burst {
  touched: string[];
  slices: Update[][];
}

interface Workload {
  specs: ViewSpec[];
  bursts: Burst[];
}

/** The same seeded workload for every implementation and era. */
function makeWorkload(size: StormSize, slicesPerBurst = size.slicesPerBurst): Workload {
  const random = new Prng(SEED, 'storm');
  const uris = Array.from({ length: size.uris }, (_, i) => uriOf(i));
  // Every URI is shown at least once; the rest of the components land at random.
  const specs: ViewSpec[] = Array.from({ length: size.components }, (_, id) => ({
    id,
    uri: id < uris.length ? (uris[id] as string) : random.pick(uris),
  }));
  const perBurst = Math.floor(size.updates / size.bursts);
  const bursts: Burst[] = [];
  for (let b = 0; b < size.bursts; b++) {
    const touched = random.sample(uris, size.urisPerBurst);
    const targets = [
      ...touched,
      ...Array.from({ length: perBurst - touched.length }, () => random.pick(touched)),
    ];
    const updates = random.shuffle(targets).map((uri, k) => ({ uri, text: `b${b}.${k}` }));
    const sliceSize = Math.ceil(updates.length / slicesPerBurst);
    const slices: Update[][] = [];
    for (let s = 0; s < updates.length; s += sliceSize)
      slices.push(updates.slice(s, s + sliceSize));
    bursts.push({ touched, slices });
  }
  return { specs, bursts };
}

interface BurstResult {
  /** Last notification of the burst → every component of it shows the final content. */
  settleMs: number | null;
  /** Per touched URI: its last notification → all its components show its final content. */
  uriSettleMs: number[];
  readsPerUri: number[];
  stale: number;
}

interface StormRun {
  /** Bursts of the workload this run fired (the first n). */
  bursts: number;
  updates: number;
  /** Reads served per burst, to compare runs over the same bursts. */
  readsPerBurst: number[];
  mountMs: number;
  /** All components showing the initial content, subscriptions in place. */
  readyMs: number;
  burstsMs: number;
  totalReads: number;
  readsPerUriPerBurst: Summary & { histogram: Record<string, number> };
  settleMs: Summary;
  /** Each settled burst's settle time, to pool the runs of one contender. */
  settleSamples: number[];
  uriSettleMs: Summary;
  burstsNotSettled: number;
  staleAfterBursts: number;
  finalMismatches: number;
  server: ReturnType<TestServer['counters']>;
  /** Failed read attempts by message, retries included. */
  failures: Record<string, number>;
}

/** The React implementations, and the raw-SDK floor (no React: one "view" per URI). */
type StormImpl = ImplName | 'raw-sdk';

/** What a run watches: who shows what, and how it ends. */
interface Subject {
  specs: ViewSpec[];
  /** What each of `specs` shows at the end (React: the DOM; raw-sdk: its last read). */
  finalTexts(): (string | null | undefined)[];
  failures(): Record<string, number>;
  close(): Promise<void>;
}

async function startSubject(
  name: StormImpl,
  url: string,
  workload: Workload,
  size: StormSize,
  tracker: Tracker,
): Promise<Subject> {
  if (name === 'raw-sdk') {
    const uris = Array.from({ length: size.uris }, (_, i) => uriOf(i));
    const idOf = new Map(uris.map((uri, id) => [uri, id]));
    const set = await RawResourceSet.start(url, uris, (uri, text) =>
      tracker.report(idOf.get(uri) as number, text),
    );
    const specs = uris.map((uri, id) => ({ id, uri }));
    return {
      specs,
      finalTexts: () => specs.map((spec) => set.text(spec.uri)),
      failures: () => ({ ...set.failures }),
      close: () => set.close(),
    };
  }
  const impl = await startImpl(name, url);
  const views = mountViews(impl, tracker.report, workload.specs);
  return {
    specs: workload.specs,
    finalTexts: () => [...views.container.querySelectorAll('span')].map((s) => s.textContent),
    failures: impl.failures,
    async close() {
      views.unmount();
      await sleep(50);
      await impl.close();
    },
  };
}

async function runStorm(kind: ServerKind, name: StormImpl, workload: Workload, size: StormSize) {
  const server = await startBenchServer(kind, size.uris);
  const tracker = new Tracker();

  const mountStart = performance.now();
  const subject = await startSubject(name, server.url, workload, size, tracker);
  const mountMs = elapsed(mountStart);
  const byUri = new Map<string, number[]>();
  for (const spec of subject.specs) byUri.set(spec.uri, [...(byUri.get(spec.uri) ?? []), spec.id]);
  const ids = (uri: string) => byUri.get(uri) ?? [];
  const shown = await until(
    () => subject.specs.every((spec) => tracker.text(spec.id) === 'v0'),
    QUICK ? 30_000 : 180_000,
    20,
  );
  if (!shown) throw new Error(`${name}/${kind}: the views never showed the initial content`);
  await until(() => server.subscribedUris().length === size.uris, 60_000, 20);
  await quiet(() => [server.store.reads(), server.counters(), tracker.commits], 200);
  const readyMs = elapsed(mountStart);

  const readsBefore = server.store.reads();
  const results: BurstResult[] = [];
  const burstsStart = performance.now();
  for (const burst of workload.bursts) {
    const before = new Map(burst.touched.map((uri) => [uri, server.store.reads(uri)]));
    const lastSentAt = new Map<string, number>();
    for (const [index, slice] of burst.slices.entries()) {
      if (index > 0) await ioTurn();
      for (const update of slice) {
        server.setText(update.uri, update.text);
        lastSentAt.set(update.uri, performance.now());
      }
    }
    const burstEnd = performance.now();
    const expected = new Map(burst.touched.map((uri) => [uri, serverText(server, uri)]));
    const matches = () =>
      burst.touched.every((uri) => ids(uri).every((id) => tracker.text(id) === expected.get(uri)));
    // Done when everything shows the final content, or when nothing has moved
    // for STALE_AFTER_MS although something is still stale (a baseline that
    // ends stale). Settle times come from commit timestamps, not this loop.
    let settledEverywhere = false;
    const deadline = performance.now() + size.burstTimeoutMs;
    let lastProbe = '';
    let lastMove = performance.now();
    while (performance.now() < deadline) {
      if (matches()) {
        settledEverywhere = true;
        break;
      }
      const probe = JSON.stringify([server.store.reads(), tracker.commits]);
      if (probe !== lastProbe) {
        lastProbe = probe;
        lastMove = performance.now();
      } else if (performance.now() - lastMove > STALE_AFTER_MS) {
        break;
      }
      await sleep(5);
    }
    await quiet(() => [server.store.reads(), tracker.commits], 100);
    let stale = 0;
    let settle = Number.NEGATIVE_INFINITY;
    const uriSettleMs: number[] = [];
    for (const uri of burst.touched) {
      let uriSettle = Number.NEGATIVE_INFINITY;
      let uriStale = 0;
      for (const id of ids(uri)) {
        if (tracker.text(id) !== expected.get(uri)) uriStale += 1;
        uriSettle = Math.max(uriSettle, tracker.since(id) ?? Number.NaN);
      }
      stale += uriStale;
      // A URI still stale has no settle time; it is counted as stale instead.
      if (uriStale === 0) uriSettleMs.push(uriSettle - (lastSentAt.get(uri) as number));
      settle = Math.max(settle, uriSettle);
    }
    results.push({
      settleMs: settledEverywhere && stale === 0 ? settle - burstEnd : null,
      uriSettleMs,
      readsPerUri: burst.touched.map((uri) => server.store.reads(uri) - (before.get(uri) ?? 0)),
      stale,
    });
  }
  const burstsMs = elapsed(burstsStart);

  // The DOM is the judge: every component's text against what the server holds now.
  let finalMismatches = 0;
  const finalTexts = subject.finalTexts();
  for (const [index, spec] of subject.specs.entries()) {
    if (finalTexts[index] !== serverText(server, spec.uri)) finalMismatches += 1;
  }
  const run: StormRun = {
    bursts: workload.bursts.length,
    updates: workload.bursts.reduce((sum, b) => sum + b.slices.flat().length, 0),
    readsPerBurst: results.map((r) => r.readsPerUri.reduce((a, b) => a + b, 0)),
    mountMs,
    readyMs,
    burstsMs,
    totalReads: server.store.reads() - readsBefore,
    readsPerUriPerBurst: {
      ...summarize(results.flatMap((r) => r.readsPerUri)),
      histogram: histogram(results.flatMap((r) => r.readsPerUri)),
    },
    settleMs: summarize(results.flatMap((r) => (r.settleMs === null ? [] : [r.settleMs]))),
    settleSamples: results.flatMap((r) => (r.settleMs === null ? [] : [r.settleMs])),
    uriSettleMs: summarize(results.flatMap((r) => r.uriSettleMs.filter(Number.isFinite))),
    burstsNotSettled: results.filter((r) => r.settleMs === null).length,
    staleAfterBursts: results.reduce((sum, r) => sum + r.stale, 0),
    finalMismatches,
    server: server.counters(),
    failures: subject.failures(),
  };
  await subject.close();
  await server.close();
  (globalThis as { gc?: () => void }).gc?.();
  await sleep(100);
  return run;
}

interface Variant {
  label: string;
  impl: StormImpl;
  workload: Workload;
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** ours / other, both over the bursts `other` ran (always a prefix of ours). */
function sameBurstRatio(ours: StormRun, other: StormRun): number | null {
  return ratio(sum(ours.readsPerBurst.slice(0, other.bursts)), sum(other.readsPerBurst));
}

/** Bursts of the discarded runs before the measured ones. */
const WARM_UP_BURSTS = 4;

it('storm: bursts of updates over many mounted components', async () => {
  const start = performance.now();
  const size = SIZES.storm;
  const workload = makeWorkload(size);
  const prefix = (bursts: number, slices?: number): Workload => {
    const source = slices === undefined ? workload : makeWorkload(size, slices);
    return { specs: source.specs, bursts: source.bursts.slice(0, bursts) };
  };
  const variants: Variant[] = [
    // Ours and the floor on the same bursts, ABBA (the machine drifts between runs): the
    // settle target pools both runs of each.
    { label: 'ours', impl: 'ours', workload },
    { label: 'raw-sdk', impl: 'raw-sdk', workload },
    { label: 'raw-sdk, again', impl: 'raw-sdk', workload },
    { label: 'ours, again', impl: 'ours', workload },
    { label: 'tanstack-default', impl: 'tanstack-default', workload: prefix(size.tanstackBursts) },
    { label: 'naive', impl: 'naive', workload: prefix(size.naiveBursts) },
    ...(size.spreadSlices > 1
      ? [
          {
            label: `ours, bursts spread over ${size.spreadSlices} I/O turns`,
            impl: 'ours' as const,
            workload: prefix(size.spreadBursts, size.spreadSlices),
          },
        ]
      : []),
  ];
  const results: Record<string, Record<string, StormRun>> = {};
  const tables: Table[] = [];
  const targets: Target[] = [];
  let ourMismatches = 0;

  for (const kind of KINDS) {
    const runs: Record<string, StormRun> = {};
    // Discarded: ours and the floor on the first bursts, so the measured ABBA
    // starts warm (round one of ours used to pay for the code that all the
    // contenders share — the SDK, the servers, undici — coming up to speed).
    for (const impl of ['ours', 'raw-sdk'] as const) {
      await runStorm(kind, impl, prefix(WARM_UP_BURSTS), size);
    }
    for (const variant of variants) {
      const runStart = performance.now();
      runs[variant.label] = await runStorm(kind, variant.impl, variant.workload, size);
      console.log(`storm ${kind} ${variant.label}: ${elapsed(runStart)} ms`);
    }
    results[kind] = runs;
    const ours = runs.ours as StormRun;
    for (const variant of variants) {
      const run = runs[variant.label] as StormRun;
      if (variant.impl === 'ours') ourMismatches += run.finalMismatches + run.staleAfterBursts;
    }
    const rows: Cell[][] = variants.map(({ label, impl }) => {
      const run = runs[label] as StormRun;
      return [
        label,
        `${run.bursts} / ${run.updates}`,
        run.readsPerUriPerBurst.mean,
        run.readsPerUriPerBurst.p99,
        run.readsPerUriPerBurst.max,
        run.totalReads,
        impl === 'ours' ? '' : sameBurstRatio(ours, run),
        ms(run.settleMs.p50),
        ms(run.settleMs.p99),
        ms(run.uriSettleMs.p50),
        ms(run.uriSettleMs.p99),
        run.burstsNotSettled,
        sum(Object.values(run.failures)),
        run.staleAfterBursts,
        run.finalMismatches,
        run.readyMs,
        run.burstsMs,
      ];
    });
    tables.push({
      title: `storm · ${kind} · ${size.uris} URIs, ${size.components} components; workload ${size.updates} updates in ${size.bursts} bursts of ${size.urisPerBurst} URIs`,
      head: [
        'impl',
        'bursts / updates run',
        'reads/URI/burst mean',
        'p99',
        'max',
        'total reads',
        'ours/this (same bursts)',
        'burst settle p50 ms',
        'p99',
        'URI settle p50 ms',
        'p99',
        'bursts never settled',
        'failed reads',
        'stale after bursts',
        'final mismatches',
        'mount→ready ms',
        'bursts ms',
      ],
      rows,
      notes: [
        'A burst is fired in one synchronous loop; "spread" fires the same updates in slices with an I/O turn between them.',
        'Baselines run the first bursts of the same seeded workload (their cost is per update and per component); ratios compare the same bursts.',
        'raw-sdk: one client, one subscription set, no React; per URI one read in flight and one trailing read for what arrived meanwhile. Its "components" are its URIs (settle: the last touched URI holds its final content).',
      ],
    });
    targets.push(
      {
        scenario: 'storm',
        kind,
        name: 'reads per URI per burst',
        target: '≤ 2',
        actual: `max ${ours.readsPerUriPerBurst.max}, mean ${ours.readsPerUriPerBurst.mean}`,
        pass: ours.readsPerUriPerBurst.max <= 2,
      },
      {
        scenario: 'storm',
        kind,
        name: 'mismatches',
        target: '0',
        actual: `${ours.finalMismatches} final, ${ours.staleAfterBursts} after bursts`,
        pass: ours.finalMismatches === 0 && ours.staleAfterBursts === 0,
      },
    );
    const floor = runs['raw-sdk'] as StormRun;
    const pooled = (a: string, b: string) =>
      summarize([...(runs[a] as StormRun).settleSamples, ...(runs[b] as StormRun).settleSamples]);
    const oursSettle = pooled('ours', 'ours, again');
    const floorSettle = pooled('raw-sdk', 'raw-sdk, again');
    const settleRatio = ratio(oursSettle.p50, floorSettle.p50) ?? Number.NaN;
    const pairRatio = (a: string, b: string) =>
      ratio((runs[a] as StormRun).settleMs.p50, (runs[b] as StormRun).settleMs.p50);
    const readsRatio = sameBurstRatio(ours, floor) ?? Number.NaN;
    targets.push(
      {
        scenario: 'storm',
        kind,
        name: `burst settle p50 vs raw-sdk floor (same ${floor.bursts} bursts, two runs each, ABBA)`,
        target: '≤ 1.1×',
        actual: `${settleRatio}× (${oursSettle.p50} ms vs ${floorSettle.p50} ms; run by run ${pairRatio('ours', 'raw-sdk')}× and ${pairRatio('ours, again', 'raw-sdk, again')}×)`,
        pass: settleRatio <= 1.1,
        missedBy: over(settleRatio, 1.1),
        why: "the floor has no cache and no React: ours also runs TanStack Query (setData, its notify batch on a timer) and re-renders the burst's components (jsdom), in the process that also runs the server; `--profile` splits the CPU by layer; one run's p50 of 20 bursts moves by ±0.15× between runs on this machine, hence two runs each",
      },
      {
        scenario: 'storm',
        kind,
        name: `reads vs raw-sdk floor (same ${floor.bursts} bursts)`,
        target: '≤ 1.00×',
        actual: `${readsRatio}× (${sum(ours.readsPerBurst.slice(0, floor.bursts))} vs ${sum(floor.readsPerBurst)})`,
        pass: readsRatio <= 1,
      },
    );
    for (const label of ['tanstack-default', 'naive']) {
      const run = runs[label] as StormRun;
      const oursReads = sum(ours.readsPerBurst.slice(0, run.bursts));
      targets.push({
        scenario: 'storm',
        kind,
        name: `total reads < ${label} (first ${run.bursts} bursts)`,
        target: `< ${run.totalReads}`,
        actual: `${oursReads} (${sameBurstRatio(ours, run)}×)`,
        pass: oursReads < run.totalReads,
      });
    }
  }

  writeFragment({
    scenario: 'storm',
    durationMs: elapsed(start),
    config: { ...size, kinds: KINDS, ourOptions: OUR_OPTIONS },
    results,
    tables,
    targets,
    ourMismatches,
  });
});
