/** @vitest-environment jsdom */
import { it } from 'vitest';
import type { ServerKind } from '../../test/servers';
import { LATENCY_KINDS, OUR_OPTIONS, SEED, SIZES } from '../lib/config';
import { type MountedViews, mountViews } from '../lib/dom';
import { RawFloor } from '../lib/floor';
import { elapsed, quiet, serverText, sleep, startBenchServer, until, uriOf } from '../lib/harness';
import { IMPL_NAMES, type ImplInstance, type ImplName, startImpl } from '../lib/impls';
import { Prng } from '../lib/prng';
import { ReadTimer } from '../lib/readTimer';
import { type Cell, ms, over, type Table, type Target, times, writeFragment } from '../lib/report';
import { ratio, type Summary, summarize } from '../lib/stats';
import { Tracker } from '../lib/tracker';

type Contender = ImplName | 'raw-sdk';

const CONTENDERS: Contender[] = ['raw-sdk', ...IMPL_NAMES];
const SAMPLE_TIMEOUT_MS = 10_000;

interface Rig {
  uri: string;
  /** Read timings of this contender's own client (not for naive: one client per hook). */
  timer: ReadTimer | undefined;
  /** Resolves with the time `text` is shown (React) or read (raw-sdk). */
  waitFor(text: string): Promise<number>;
  close(): Promise<void>;
}

async function rigFor(
  contender: Contender,
  url: string,
  uri: string,
  id: number,
  tracker: Tracker,
): Promise<Rig> {
  const timer = contender === 'naive' ? undefined : new ReadTimer();
  if (contender === 'raw-sdk') {
    const floor = await RawFloor.start(url, uri, timer?.fetch);
    return { uri, timer, waitFor: (text) => floor.waitFor(text), close: () => floor.close() };
  }
  const impl: ImplInstance = await startImpl(contender, url, { fetch: timer?.fetch });
  const views: MountedViews = mountViews(impl, tracker.report, [{ id, uri }]);
  return {
    uri,
    timer,
    waitFor: (text) => tracker.waitFor(id, text),
    async close() {
      views.unmount();
      await sleep(20);
      await impl.close();
    },
  };
}

function withTimeout(promise: Promise<number>): Promise<number | undefined> {
  return Promise.race([promise, sleep(SAMPLE_TIMEOUT_MS).then(() => undefined)]);
}

async function runLatency(kind: ServerKind) {
  const size = SIZES.latency;
  const server = await startBenchServer(kind, CONTENDERS.length);
  const tracker = new Tracker();
  // Every contender watches its own URI on the same server: an update for one
  // is never delivered to another, and all of them share the same noise.
  const rigs = new Map<Contender, Rig>();
  for (const [index, contender] of CONTENDERS.entries()) {
    rigs.set(contender, await rigFor(contender, server.url, uriOf(index), index, tracker));
  }
  const ready = await until(
    () =>
      server.subscribedUris().length === CONTENDERS.length &&
      CONTENDERS.every((c, index) => c === 'raw-sdk' || tracker.text(index) === 'v0'),
    30_000,
    10,
  );
  if (!ready) throw new Error(`latency/${kind}: contenders not ready`);
  await quiet(() => [server.store.reads(), server.counters()], 300);

  const random = new Prng(SEED, `latency:${kind}`);
  const samples = new Map<Contender, number[]>(CONTENDERS.map((c) => [c, []]));
  const phases = new Map<Contender, Phases>(
    CONTENDERS.map((c) => [c, { beforeRead: [], read: [], afterRead: [] }]),
  );
  let timeouts = 0;
  let ourTimeouts = 0;
  for (let i = 0; i < size.warmup + size.samples; i++) {
    // Interleaved in a random order, so drift in machine load hits everyone alike.
    for (const contender of random.shuffle(CONTENDERS)) {
      const rig = rigs.get(contender) as Rig;
      const text = `s${i}`;
      const shown = withTimeout(rig.waitFor(text));
      const sent = performance.now();
      server.setText(rig.uri, text);
      const at = await shown;
      if (at === undefined) {
        timeouts += 1;
        if (contender === 'ours') ourTimeouts += 1;
      } else if (i >= size.warmup) {
        samples.get(contender)?.push(at - sent);
        const read = rig.timer?.firstAfter(sent);
        const phase = phases.get(contender) as Phases;
        if (read?.done !== undefined) {
          phase.beforeRead.push(read.issued - sent);
          phase.read.push(read.done - read.issued);
          phase.afterRead.push(at - read.done);
        }
      }
      // A quiet system: the next update goes out once this one is fully done.
      await sleep(1);
    }
  }
  // Ours shows the last update: an update never shown, or a final stale view, is a mismatch.
  const oursIndex = CONTENDERS.indexOf('ours');
  const oursUri = (rigs.get('ours') as Rig).uri;
  const finalStale = tracker.text(oursIndex) === serverText(server, oursUri) ? 0 : 1;
  const ourMismatches = ourTimeouts + finalStale;
  for (const rig of rigs.values()) await rig.close();
  await server.close();
  const summaries = Object.fromEntries(
    CONTENDERS.map((c) => [c, summarize(samples.get(c) ?? [])]),
  ) as Record<Contender, Summary>;
  const breakdown = Object.fromEntries(
    CONTENDERS.filter((c) => (phases.get(c)?.read.length ?? 0) > 0).map((c) => {
      const phase = phases.get(c) as Phases;
      return [
        c,
        {
          beforeRead: summarize(phase.beforeRead),
          read: summarize(phase.read),
          afterRead: summarize(phase.afterRead),
        },
      ];
    }),
  ) as Partial<Record<Contender, Record<keyof Phases, Summary>>>;
  return { summaries, breakdown, timeouts, ourMismatches };
}

/** Where one sample's time went, split at the read's HTTP exchange. */
interface Phases {
  /** setText → the read request leaves (notification delivery + scheduling). */
  beforeRead: number[];
  /** The read's HTTP exchange, body included (server work shares this process). */
  read: number[];
  /** Response body in → shown (SDK decoding, cache, React commit). */
  afterRead: number[];
}

it('latency: one update on a quiet system, notification → component shows it', async () => {
  const start = performance.now();
  const size = SIZES.latency;
  const results: Record<string, unknown> = {};
  const tables: Table[] = [];
  const targets: Target[] = [];
  let ourMismatches = 0;
  for (const kind of LATENCY_KINDS) {
    const runStart = performance.now();
    const run = await runLatency(kind);
    const { summaries, breakdown, timeouts } = run;
    ourMismatches += run.ourMismatches;
    console.log(`latency ${kind}: ${elapsed(runStart)} ms`);
    const floor = summaries['raw-sdk'];
    const ratios = Object.fromEntries(
      IMPL_NAMES.map((name) => [
        name,
        { p50: ratio(summaries[name].p50, floor.p50), p99: ratio(summaries[name].p99, floor.p99) },
      ]),
    );
    // The target: nothing added over what every TanStack-based client pays.
    // The raw-SDK floor stays in the table (and results) as information.
    const tanstack = summaries['tanstack-default'];
    const vsTanstack = {
      p50: ratio(summaries.ours.p50, tanstack.p50),
      p99: ratio(summaries.ours.p99, tanstack.p99),
    };
    results[kind] = {
      summaries,
      ratiosToFloor: ratios,
      oursToTanstackDefault: vsTanstack,
      breakdown,
      timeouts,
    };
    const rows: Cell[][] = CONTENDERS.map((c) => [
      c,
      summaries[c].n,
      ms(summaries[c].p50),
      ms(summaries[c].p90),
      ms(summaries[c].p99),
      ms(summaries[c].mean),
      c === 'raw-sdk' ? '1×' : times(ratios[c]?.p50),
      c === 'raw-sdk' ? '1×' : times(ratios[c]?.p99),
      c === 'ours' ? times(vsTanstack.p50) : c === 'tanstack-default' ? '1×' : '',
    ]);
    tables.push({
      title: `latency · ${kind} · setText → shown (React commit) / read done (raw-sdk), ${size.samples} samples each`,
      head: [
        'impl',
        'n',
        'p50 ms',
        'p90',
        'p99',
        'mean',
        'p50 / floor',
        'p99 / floor',
        'p50 / tanstack-default',
      ],
      rows,
      notes: timeouts > 0 ? [`${timeouts} samples timed out after ${SAMPLE_TIMEOUT_MS} ms`] : [],
    });
    tables.push({
      title: `latency breakdown · ${kind} · medians, ms (naive has a client per hook: not instrumented)`,
      head: ['impl', 'setText → read sent', 'read exchange', 'read in → shown', 'total p50'],
      rows: CONTENDERS.flatMap((c) => {
        const b = breakdown[c];
        return b
          ? [[c, ms(b.beforeRead.p50), ms(b.read.p50), ms(b.afterRead.p50), ms(summaries[c].p50)]]
          : [];
      }),
    });
    const oursVsTanstack = vsTanstack.p50 ?? Number.NaN;
    targets.push({
      scenario: 'latency',
      kind,
      name: 'p50 vs tanstack-default',
      target: '≤ 1.05×',
      actual: `${oursVsTanstack}× (${summaries.ours.p50} ms vs ${tanstack.p50} ms; raw-sdk floor ${floor.p50} ms: ours ${ratios.ours?.p50}×)`,
      pass: oursVsTanstack <= 1.05,
      missedBy: over(oursVsTanstack, 1.05),
      why: (() => {
        const ours = breakdown.ours;
        const them = breakdown['tanstack-default'];
        const gap = (pick: (b: NonNullable<typeof ours>) => number) =>
          ours && them ? `${ms(pick(ours) - pick(them))} ms` : '?';
        return `the read exchange is the same; ours spends ${gap((b) => b.beforeRead.p50)} more before the read is sent (exact-match check, single flight, the coverage check rule 4 asks for, signals fencing the read) and ${gap((b) => b.afterRead.p50)} more after it returns (the answer's checks of rule 8, the read events the diagnostics fold), where tanstack-default calls invalidateQueries and stores whatever comes back`;
      })(),
    });
  }
  writeFragment({
    scenario: 'latency',
    durationMs: elapsed(start),
    config: { ...size, kinds: LATENCY_KINDS, ourOptions: OUR_OPTIONS },
    results,
    tables,
    targets,
    ourMismatches,
  });
});
