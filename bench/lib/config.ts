import type { ServerKind } from '../../test/servers';

/** `npm run bench -- --quick` (via run.mjs): small counts, the CI smoke run. */
export const QUICK = process.env.BENCH_QUICK === '1';

/** Every random choice in every scenario derives from this, so a run can be repeated. */
export const SEED = Number(process.env.BENCH_SEED ?? 20260728);

const requestedKinds = process.env.BENCH_KINDS?.split(',').filter(Boolean);

/** Protocol eras measured (BENCH_KINDS=modern,legacy-v2,legacy-v1 to choose). */
export const KINDS: ServerKind[] = (requestedKinds as ServerKind[] | undefined) ?? [
  'modern',
  'legacy-v2',
];

/** The latency scenario is cheap enough to cover the v1-SDK legacy server as well. */
export const LATENCY_KINDS: ServerKind[] =
  (requestedKinds as ServerKind[] | undefined) ?? (QUICK ? KINDS : [...KINDS, 'legacy-v1']);

/** Where each scenario leaves its piece of results.json for run.mjs to merge. */
export const OUT_DIR = process.env.BENCH_OUT_DIR ?? 'bench/.out';

export interface StormSize {
  uris: number;
  components: number;
  updates: number;
  bursts: number;
  /** Distinct URIs a burst touches. */
  urisPerBurst: number;
  /** A burst is fired in this many synchronous slices, with an I/O turn between them. */
  slicesPerBurst: number;
  /** Give up waiting for a burst to show everywhere after this long (a stale baseline). */
  burstTimeoutMs: number;
  /** Bursts the baselines run: their cost grows per update (and, naive, per component). */
  tanstackBursts: number;
  naiveBursts: number;
  /** An extra run of ours whose bursts are fired in this many slices (≤ 1: none). */
  spreadSlices: number;
  spreadBursts: number;
}

export interface ChurnSize {
  uris: number;
  steps: number;
  /** Mounted components the random walk hovers around. */
  targetMounted: number;
  /** Mean of the exponential pause between steps. */
  meanStepMs: number;
}

export interface ScrollSize {
  /** Distinct URIs in the list, each shown by one row. */
  uris: number;
  /** Rows that scroll into view together. */
  wave: number;
  /** Waves mounted at once: the new wave plus the ones still in view (overscan). */
  windowWaves: number;
  /** The fixed-cadence variant mounts one wave per frame of this length. */
  frameMs: number;
  /** Closed-loop runs per contender and era, in ABBA order (ours, plain, plain, ours, …). */
  rounds: number;
  /** Fixed-cadence runs per contender and era (information only, no timing target). */
  fixedRounds: number;
  /** Warm-up rows (read without a subscription) before the measured scroll. */
  warmRows: number;
  /** Give up on a wave (closed loop) or on the last window (fixed) after this long. */
  waveTimeoutMs: number;
}

export interface GrowSize {
  /** Distinct URIs appended, one row each; none is ever removed. */
  uris: number;
  /** Rows appended together. */
  batch: number;
  /** One batch per this many ms (open loop). */
  intervalMs: number;
  /** Give up on rows that never show after this long. */
  timeoutMs: number;
}

export interface FloodSize {
  /** `updated` notifications for URIs nobody shows. */
  updates: number;
  /** How many distinct such URIs they name. */
  distinctUris: number;
  /** Injected in this many chunks, 20 ms apart. */
  chunks: number;
}

export interface BrowserSize {
  /** Resources in the list (notes made on the playground's server), mounted at once. */
  rows: number;
  /** Runs per implementation and era, in ABBA order. */
  rounds: number;
  timeoutMs: number;
}

export interface LatencySize {
  samples: number;
  warmup: number;
}

export interface MemorySize {
  uris: number;
  mounted: number;
  cycles: number;
  /** Components mounted and unmounted together in one cycle batch. */
  batch: number;
  floodUpdates: number;
  floodSlice: number;
}

export interface TabsSize {
  /** Simulated tabs of one app: each its own QueryClient and McpCacheSync. */
  tabs: number;
  /** Resources every tab holds (the same set in every tab). */
  uris: number;
  /** Updates, one at a time, each to a random held resource. */
  updates: number;
  /** Give up waiting for an update (or the start) to show in every tab after this long. */
  consistentTimeoutMs: number;
}

export interface ServersSize {
  /** Servers added at once (the manager) or written as providers (the baseline). */
  servers: number;
  /** Measured rounds per contender and era, in ABBA order. */
  rounds: number;
  /** A round of each contender first, thrown away (compiled code, warmed pools). */
  warmUp: boolean;
  /** Give up on a round whose servers are not all ready and shown after this long. */
  readyTimeoutMs: number;
}

interface Sizes {
  servers: ServersSize;
  storm: StormSize;
  churn: ChurnSize;
  scroll: ScrollSize;
  grow: GrowSize;
  flood: FloodSize;
  browser: BrowserSize;
  latency: LatencySize;
  memory: MemorySize;
  tabs: TabsSize;
}

const base: Sizes = QUICK
  ? {
      storm: {
        uris: 10,
        components: 20,
        updates: 80,
        bursts: 2,
        urisPerBurst: 5,
        slicesPerBurst: 1,
        burstTimeoutMs: 10_000,
        tanstackBursts: 2,
        naiveBursts: 2,
        spreadSlices: 0,
        spreadBursts: 0,
      },
      churn: { uris: 20, steps: 100, targetMounted: 10, meanStepMs: 2 },
      scroll: {
        uris: 200,
        wave: 25,
        windowWaves: 2,
        frameMs: 16,
        rounds: 1,
        fixedRounds: 1,
        warmRows: 25,
        waveTimeoutMs: 20_000,
      },
      grow: { uris: 300, batch: 25, intervalMs: 30, timeoutMs: 30_000 },
      flood: { updates: 10_000, distinctUris: 100, chunks: 4 },
      browser: { rows: 200, rounds: 1, timeoutMs: 30_000 },
      latency: { samples: 20, warmup: 3 },
      memory: {
        uris: 20,
        mounted: 10,
        cycles: 100,
        batch: 10,
        floodUpdates: 2_000,
        floodSlice: 500,
      },
      tabs: { tabs: 4, uris: 10, updates: 10, consistentTimeoutMs: 10_000 },
      servers: { servers: 20, rounds: 1, warmUp: true, readyTimeoutMs: 20_000 },
    }
  : {
      storm: {
        uris: 200,
        components: 1_000,
        updates: 10_000,
        bursts: 20,
        urisPerBurst: 50,
        slicesPerBurst: 1,
        burstTimeoutMs: 60_000,
        tanstackBursts: 6,
        naiveBursts: 2,
        spreadSlices: 5,
        spreadBursts: 3,
      },
      churn: { uris: 100, steps: 2_000, targetMounted: 50, meanStepMs: 2 },
      scroll: {
        uris: 3_000,
        wave: 25,
        windowWaves: 2,
        frameMs: 16,
        rounds: 2,
        fixedRounds: 1,
        warmRows: 25,
        waveTimeoutMs: 30_000,
      },
      grow: { uris: 3_000, batch: 25, intervalMs: 30, timeoutMs: 180_000 },
      flood: { updates: 100_000, distinctUris: 100, chunks: 4 },
      browser: { rows: 200, rounds: 4, timeoutMs: 60_000 },
      latency: { samples: 500, warmup: 20 },
      memory: {
        uris: 100,
        mounted: 20,
        cycles: 10_000,
        batch: 10,
        floodUpdates: 100_000,
        floodSlice: 1_000,
      },
      tabs: { tabs: 8, uris: 20, updates: 30, consistentTimeoutMs: 30_000 },
      servers: { servers: 20, rounds: 12, warmUp: true, readyTimeoutMs: 30_000 },
    };

/**
 * BENCH_SIZES='{"storm":{"bursts":5}}' overrides single counts, for exploring
 * without editing this file. Results record the sizes actually used.
 */
export const SIZES: Sizes = (() => {
  const overrides = JSON.parse(process.env.BENCH_SIZES ?? '{}') as Partial<{
    [K in keyof Sizes]: Partial<Sizes[K]>;
  }>;
  return {
    storm: { ...base.storm, ...overrides.storm },
    churn: { ...base.churn, ...overrides.churn },
    scroll: { ...base.scroll, ...overrides.scroll },
    grow: { ...base.grow, ...overrides.grow },
    flood: { ...base.flood, ...overrides.flood },
    browser: { ...base.browser, ...overrides.browser },
    latency: { ...base.latency, ...overrides.latency },
    memory: { ...base.memory, ...overrides.memory },
    tabs: { ...base.tabs, ...overrides.tabs },
    servers: { ...base.servers, ...overrides.servers },
  };
})();

/**
 * BENCH_TANSTACK_SCHEDULER=microtask|immediate replaces TanStack's notify
 * scheduler (default `setTimeout(0)`) for everything in the run: an analysis
 * knob for where the latency goes, never set by default.
 */
export const TANSTACK_SCHEDULER = process.env.BENCH_TANSTACK_SCHEDULER as
  | 'microtask'
  | 'immediate'
  | undefined;

/**
 * The library's tunables as the bench passes them: the defaults, written out
 * so results.json states what was measured.
 */
export const OUR_OPTIONS = { lingerMs: 1000 } as const;
