import { describe, expect, it } from 'vitest';
import { MAX_STREAMS, type PlannedStream } from '../../src/core/listenPlan';
import { WaitLearner } from '../../src/core/waitLearner';

/** A seeded PRNG (LCG): the same seed, the same timings. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

interface Timing {
  /** An acknowledgement takes `ackMs + perEntryMs` per filter entry, times 0.5–1.5. */
  ackMs: number;
  perEntryMs: number;
  /** The chance that the next batch comes 50–300 ms late (a busy machine's pauses). */
  pause: number;
  /**
   * Closed loop: the next batch comes only once every URI so far is covered, this long
   * (times 0.5–1.5) after (its reads and render), instead of every ~30 ms.
   */
  afterCoveredMs?: number;
}

/**
 * A list growing by 25 URIs every ~30 ms up to `n`, on a simulated clock
 * (1 ms steps), driven the way listenChannel.ts drives the plan: one request
 * in flight (a batch that comes meanwhile is told to the learner), the plan
 * asked again on every batch, acknowledgement and retry. Returns the filter
 * entries sent per URI, the most streams open and how long batches waited for
 * their coverage (mean, and how many waited longer than 200 ms).
 */
function grow(seed: number, timing: Timing, n = 3000) {
  const next = random(seed);
  const planner = new WaitLearner();
  const waits: number[] = [];
  let batchAt = 0;
  const keep = new Set<string>();
  let streams: PlannedStream[] = [];
  let opening: { at: number; uris: string[]; replaces: PlannedStream[] } | undefined;
  let credit = 0;
  let since: number | undefined;
  let newest = 0;
  let retryAt = Number.POSITIVE_INFINITY;
  let entries = 0;
  let most = 0;
  let added = 0;
  let nextBatch = 0;
  const ask = (now: number) => {
    if (opening) return;
    const fresh = [...keep].some((uri) => !streams.some((s) => s.uris.has(uri)));
    since = fresh ? (since ?? now) : undefined;
    const step = planner.plan({
      streams,
      keep,
      lists: new Set(),
      credit,
      waitedMs: since === undefined ? 0 : now - since,
      sinceNewestMs: since === undefined ? 0 : now - newest,
      settle: false,
    });
    retryAt = Number.POSITIVE_INFINITY;
    if (step.kind === 'rest') {
      streams = streams.filter((s) => !step.close.includes(s));
      if (step.retryInMs !== undefined) retryAt = now + step.retryInMs;
      return;
    }
    since = undefined;
    credit += step.added - step.resent;
    entries += step.uris.length;
    const latency = (timing.ackMs + timing.perEntryMs * step.uris.length) * (0.5 + next());
    opening = { at: now + latency, uris: step.uris, replaces: [...step.replaces, ...step.close] };
  };
  const covered = () => [...keep].every((uri) => streams.some((s) => s.uris.has(uri)));
  for (let now = 0; now < 600_000; now++) {
    if (added < n && now >= nextBatch) {
      for (let i = 0; i < 25 && added < n; i++) keep.add(`row://${added++}`);
      newest = now;
      batchAt = now;
      if (opening) planner.grewWhileAsking();
      nextBatch =
        timing.afterCoveredMs === undefined
          ? now + 30 + (next() < timing.pause ? 50 + next() * 250 : next() * 10)
          : Number.POSITIVE_INFINITY;
      ask(now);
    }
    if (opening && now >= opening.at) {
      const { uris, replaces } = opening;
      opening = undefined;
      streams = [
        ...streams.filter((s) => !replaces.includes(s)),
        { uris: new Set(uris), lists: new Set() },
      ];
      most = Math.max(most, streams.length);
      ask(now);
      if (
        timing.afterCoveredMs !== undefined &&
        nextBatch === Number.POSITIVE_INFINITY &&
        covered()
      ) {
        waits.push(now - batchAt);
        nextBatch = now + timing.afterCoveredMs * (0.5 + next());
      }
    }
    if (now >= retryAt) ask(now);
    if (added === n && !opening && covered()) {
      const meanWaitMs = waits.reduce((a, b) => a + b, 0) / Math.max(1, waits.length);
      const slow = waits.filter((wait) => wait > 200).length;
      return { perUri: entries / n, most, meanWaitMs, slow };
    }
  }
  throw new Error('the simulated list was never covered');
}

describe('listen plan, a growing list on a simulated clock', () => {
  it('without pauses, costs at most 2 filter entries per URI whatever the acknowledgement latency, in at most MAX_STREAMS streams', () => {
    for (const timing of [
      { ackMs: 5, perEntryMs: 0.05, pause: 0 },
      { ackMs: 20, perEntryMs: 0.2, pause: 0 },
      { ackMs: 30, perEntryMs: 1.5, pause: 0 },
    ]) {
      for (let seed = 1; seed <= 8; seed++) {
        const { perUri, most } = grow(seed, timing);
        expect(perUri).toBeLessThanOrEqual(2);
        expect(most).toBeLessThanOrEqual(MAX_STREAMS);
      }
    }
  });

  it('with a busy machine’s pauses between batches, stays near 2 entries per URI (at most 3.2)', () => {
    for (const timing of [
      { ackMs: 10, perEntryMs: 0.1, pause: 0.3 },
      { ackMs: 100, perEntryMs: 1, pause: 0.3 },
    ]) {
      for (let seed = 1; seed <= 8; seed++)
        expect(grow(seed, timing).perUri).toBeLessThanOrEqual(3.2);
    }
  });
});

describe('listen plan, a list that loads its next page once the last one shows', () => {
  // Each page waited out the quiet for newcomers that only come once it is covered: ~250-300 ms
  // a page, and each late merge re-sent the smallest stream (7.2 entries per URI).
  it('does not make each page wait for newcomers that cannot come, and merges log-structured', () => {
    for (const timing of [
      { ackMs: 5, perEntryMs: 0.05, pause: 0, afterCoveredMs: 20 },
      { ackMs: 20, perEntryMs: 0.2, pause: 0, afterCoveredMs: 60 },
    ]) {
      for (let seed = 1; seed <= 4; seed++) {
        const { perUri, most, meanWaitMs } = grow(seed, timing, 1000);
        expect(meanWaitMs).toBeLessThan(100);
        expect(perUri).toBeLessThanOrEqual(4);
        expect(most).toBeLessThanOrEqual(MAX_STREAMS);
      }
    }
  });

  // Each wait after a run of pages opened at once checked whether waiting paid again, over budget
  // with OVER_BUDGET_QUIET_MS of patience: 9 pages of 120 took 300 ms more than the rest.
  it('once waiting has gathered nothing twice in a row, checking again costs a page QUIET_MS, not OVER_BUDGET_QUIET_MS', () => {
    for (const timing of [
      { ackMs: 5, perEntryMs: 0.05, pause: 0, afterCoveredMs: 20 },
      { ackMs: 10, perEntryMs: 0.02, pause: 0, afterCoveredMs: 40 },
    ]) {
      for (let seed = 1; seed <= 4; seed++) {
        // Only a wait before anything was learnt may take longer than 200 ms.
        expect(grow(seed, timing, 3000).slow).toBeLessThanOrEqual(1);
      }
    }
  });
});
