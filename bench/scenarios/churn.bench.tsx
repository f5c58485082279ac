/** @vitest-environment jsdom */
import { loadavg } from 'node:os';
import { it } from 'vitest';
import type { ServerKind, TestServer } from '../../test/servers';
import { type ChurnSize, KINDS, OUR_OPTIONS, QUICK, SEED, SIZES } from '../lib/config';
import { CpuHog } from '../lib/cpuHog';
import { mountViews, type ViewSpec } from '../lib/dom';
import { elapsed, quiet, serverText, sleep, startBenchServer, until, uriOf } from '../lib/harness';
import { type ImplName, type OurProbe, startImpl, startOurs } from '../lib/impls';
import { Prng } from '../lib/prng';
import { type Cell, type Table, type Target, writeFragment } from '../lib/report';
import { ratio, round } from '../lib/stats';
import { Tracker } from '../lib/tracker';

interface Step {
  mounted: ViewSpec[];
  pauseMs: number;
}

interface Workload {
  steps: Step[];
  mounts: number;
  unmounts: number;
}

/** A random walk of mounts and unmounts that hovers around `targetMounted`. */
function makeWorkload(size: ChurnSize): Workload {
  const random = new Prng(SEED, 'churn');
  const uris = Array.from({ length: size.uris }, (_, i) => uriOf(i));
  let mounted: ViewSpec[] = [];
  let nextId = 0;
  let mounts = 0;
  let unmounts = 0;
  const steps: Step[] = [];
  for (let s = 0; s < size.steps; s++) {
    const pMount = mounted.length < size.targetMounted ? 0.7 : 0.3;
    if (mounted.length === 0 || random.next() < pMount) {
      mounted = [...mounted, { id: nextId++, uri: random.pick(uris) }];
      mounts += 1;
    } else {
      const gone = random.int(mounted.length);
      mounted = mounted.filter((_, i) => i !== gone);
      unmounts += 1;
    }
    steps.push({ mounted, pauseMs: random.exponential(size.meanStepMs) });
  }
  return { steps, mounts, unmounts };
}

/** ours while another process keeps one core busy for the whole run. */
const LOADED = 'ours, loaded (1 core busy)';

/** ours with another lingerMs: `ours (lingerMs N)`; ours on a loaded machine. */
type Variant = ImplName | `ours (lingerMs ${number})` | typeof LOADED;

const lingerOf = (variant: Variant): number | undefined => {
  const match = /^ours \(lingerMs (\d+)\)$/.exec(variant);
  return match ? Number(match[1]) : undefined;
};

/**
 * BENCH_CHURN_EXTRA=naive,linger:0,linger:10000 adds runs: the naive hook
 * (one subscription per mount, measured instead of counted), and ours with
 * other lingerMs (how much of the bill the linger decides).
 */
const EXTRA_VARIANTS: Variant[] = (process.env.BENCH_CHURN_EXTRA ?? '')
  .split(',')
  .map((value) => value.trim())
  .filter((value) => value !== '')
  .map((value): Variant => {
    if (value === 'naive') return 'naive';
    const linger = /^linger:(\d+)$/.exec(value);
    if (!linger) throw new Error(`BENCH_CHURN_EXTRA: unknown run ${value}`);
    return `ours (lingerMs ${Number(linger[1])})`;
  });

interface ChurnRun {
  /** modern: subscriptions/listen POSTs, i.e. streams opened. */
  listenRequests: number;
  subscribeRequests: number;
  unsubscribeRequests: number;
  /** The figure compared: listen requests (modern) or subscribe + unsubscribe (legacy). */
  subscriptionRequests: number;
  perStep: number;
  reads: number;
  /** After settling: URIs a mounted component shows but the server does not notify. */
  lostSubscriptions: number;
  /** After settling: URIs the server still notifies although nothing shows them. */
  leakedSubscriptions: number;
  /** After settling: mounted components not showing the server's content. */
  staleViews: number;
  stepsMs: number;
  /** After the last step until the server-side set matched the mounted one and went quiet. */
  settleMs: number;
  /** Loaded run: CPU time the hog process got, and the 1-minute load average at the end. */
  load?: { hogCpuMs: number | undefined; loadavg1: number };
  /** Ours only: what the library reported about its own stream. */
  probe?: OurProbe;
}

function subscriptionRequests(kind: ServerKind, counters: ReturnType<TestServer['counters']>) {
  return kind === 'modern'
    ? counters.listenRequests
    : counters.subscribeRequests + counters.unsubscribeRequests;
}

async function runChurn(kind: ServerKind, variant: Variant, workload: Workload, size: ChurnSize) {
  const hog = variant === LOADED ? new CpuHog() : undefined;
  try {
    return await churnOnce(kind, variant, workload, size, hog);
  } finally {
    await hog?.stop();
  }
}

async function churnOnce(
  kind: ServerKind,
  variant: Variant,
  workload: Workload,
  size: ChurnSize,
  hog: CpuHog | undefined,
) {
  const server = await startBenchServer(kind, size.uris);
  const linger = lingerOf(variant);
  const impl =
    linger !== undefined
      ? startOurs(server.url, { lingerMs: linger, probe: true })
      : variant === 'ours' || variant === LOADED
        ? startOurs(server.url, { probe: true })
        : await startImpl(variant as ImplName, server.url);
  const tracker = new Tracker();
  const views = mountViews(impl, tracker.report, []);
  // The connection (and, modern, our list_changed stream) is not churn.
  await sleep(50);
  await quiet(() => server.counters(), 150);
  server.resetCounters();
  server.store.resetCounters();

  const start = performance.now();
  for (const step of workload.steps) {
    views.set(step.mounted);
    await sleep(step.pauseMs);
  }
  const stepsMs = elapsed(start);
  // Lingering releases, in-flight (un)subscribes and ours' deferred narrowing of
  // the server-side set (10 linger periods after a release) are part of the bill:
  // wait until the server's set is the mounted one (at most that long), then for
  // one more linger period of quiet, so nothing still pending is missed. The
  // smoke run waits one linger period at most: its figures are not meant to be read.
  const isOurs = variant === 'ours' || variant === LOADED || linger !== undefined;
  const lingerMs = linger ?? (isOurs ? OUR_OPTIONS.lingerMs : 0);
  const held = new Set(workload.steps.at(-1)?.mounted.map((spec) => spec.uri));
  const matchesHeld = () => {
    const uris = server.subscribedUris();
    return uris.length === held.size && uris.every((uri) => held.has(uri));
  };
  const settleStart = performance.now();
  await until(matchesHeld, (isOurs && !QUICK ? 11 : 1) * lingerMs + 100, 20);
  await quiet(() => [server.counters(), server.subscribedUris()], lingerMs + 200, 60_000);
  const settleMs = elapsed(settleStart);

  // Every component mounted at the end shows the server's content (bounded: one that never
  // does is counted stale).
  const last = workload.steps.at(-1)?.mounted ?? [];
  const shows = (spec: ViewSpec) => tracker.text(spec.id) === serverText(server, spec.uri);
  await until(() => last.every(shows), 10_000, 10);
  const staleViews = last.filter((spec) => !shows(spec)).length;

  const counters = server.counters();
  const subscribed = new Set(server.subscribedUris());
  const requests = subscriptionRequests(kind, counters);
  const run: ChurnRun = {
    listenRequests: counters.listenRequests,
    subscribeRequests: counters.subscribeRequests,
    unsubscribeRequests: counters.unsubscribeRequests,
    subscriptionRequests: requests,
    perStep: round(requests / workload.steps.length, 4),
    reads: server.store.reads(),
    lostSubscriptions: [...held].filter((uri) => !subscribed.has(uri)).length,
    leakedSubscriptions: [...subscribed].filter((uri) => !held.has(uri)).length,
    staleViews,
    stepsMs,
    settleMs,
    ...(hog && { load: { hogCpuMs: hog.cpuMs(), loadavg1: round(loadavg()[0] ?? 0, 2) } }),
    ...(impl.probe && { probe: impl.probe() }),
  };
  views.unmount();
  await sleep(50);
  await impl.close();
  await server.close();
  (globalThis as { gc?: () => void }).gc?.();
  return run;
}

it('churn: random mount/unmount steps', async () => {
  const start = performance.now();
  const size = SIZES.churn;
  const workload = makeWorkload(size);
  // The naive hook's bill is one subscription per mount by construction: it
  // is counted, and measured only on request (it costs a client per mount).
  const variants: Variant[] = ['ours', LOADED, 'tanstack-default', ...EXTRA_VARIANTS];
  const results: Record<string, unknown> = {};
  const tables: Table[] = [];
  const targets: Target[] = [];
  // Ours showing stale content, or not subscribed to what it shows (a change would be missed).
  let ourMismatches = 0;

  for (const kind of KINDS) {
    const runs: Partial<Record<Variant, ChurnRun>> = {};
    for (const variant of variants) {
      const runStart = performance.now();
      runs[variant] = await runChurn(kind, variant, workload, size);
      console.log(`churn ${kind} ${variant}: ${elapsed(runStart)} ms`);
    }
    // One subscription per mount: modern opens a stream per mount; legacy
    // sends a subscribe per mount and an unsubscribe per unmount.
    const perMount = kind === 'modern' ? workload.mounts : workload.mounts + workload.unmounts;
    results[kind] = { runs, perMount };
    const ours = runs.ours as ChurnRun;
    const loaded = runs[LOADED] as ChurnRun;
    for (const variant of variants) {
      if (variant !== 'ours' && variant !== LOADED && lingerOf(variant) === undefined) continue;
      const run = runs[variant] as ChurnRun;
      ourMismatches += run.staleViews + run.lostSubscriptions;
    }
    const what = kind === 'modern' ? 'listen streams opened' : 'subscribe + unsubscribe requests';
    const rows: Cell[][] = [
      [
        'one subscription per mount (count)',
        perMount,
        round(perMount / size.steps, 4),
        '',
        '',
        '',
        '',
      ],
      ...variants.map((variant): Cell[] => {
        const run = runs[variant] as ChurnRun;
        return [
          variant,
          run.subscriptionRequests,
          run.perStep,
          variant === 'ours' || variant === LOADED
            ? ''
            : ratio(ours.subscriptionRequests, run.subscriptionRequests),
          run.reads,
          `${run.lostSubscriptions} / ${run.leakedSubscriptions}`,
          run.stepsMs,
          run.settleMs,
        ];
      }),
    ];
    tables.push({
      title: `churn · ${kind} · ${size.steps} steps over ${size.uris} URIs (${workload.mounts} mounts, ${workload.unmounts} unmounts, ~${size.targetMounted} mounted, mean pause ${size.meanStepMs} ms)`,
      head: [
        'impl',
        what,
        'per step',
        'ours/this',
        'reads',
        'lost / leaked subs at end',
        'steps ms',
        'settle ms',
      ],
      rows,
      notes: [
        `loaded: a child process busy-looping on one core for the whole run${loaded.load?.hogCpuMs === undefined ? '' : ` (it got ${Math.round(loaded.load.hogCpuMs)} ms of CPU, 1-min load ${loaded.load.loadavg1} at the end)`}.`,
        QUICK
          ? 'settle (smoke run): at most one linger period after the last step, then one of quiet; the deferred narrowing is not waited for, so ours may show leaked subscriptions and fewer requests.'
          : 'settle: after the last step, until the server-side set is the mounted one (ours: at most 11 linger periods) and has been quiet for one linger period.',
      ],
    });
    for (const [label, run] of [
      ['quiet', ours],
      ['loaded', loaded],
    ] as const) {
      // Nothing requested at all is not "infinitely fewer": nothing was subscribed.
      const fewer =
        run.subscriptionRequests === 0 ? undefined : perMount / run.subscriptionRequests;
      targets.push({
        scenario: 'churn',
        kind,
        name: `${what} vs one subscription per mount (${label})`,
        target: '≥ 10× fewer',
        actual:
          fewer === undefined
            ? `nothing requested (vs ${perMount}): no subscription was made`
            : `${round(fewer, 2)}× fewer (${run.subscriptionRequests} vs ${perMount})`,
        pass: fewer !== undefined && fewer >= 10,
      });
    }
  }

  writeFragment({
    scenario: 'churn',
    durationMs: elapsed(start),
    config: { ...size, kinds: KINDS, ourOptions: OUR_OPTIONS, seed: SEED },
    results,
    tables,
    targets,
    ourMismatches,
  });
});
