import { describe, expect, it } from 'vitest';
import {
  MAX_STREAMS,
  MAX_WAIT_MS,
  OVER_BUDGET_QUIET_MS,
  type PlannedStream,
  plan,
  QUIET_MS,
  type Situation,
} from '../../src/core/listenPlan';
import type { NotifiedList } from '../../src/core/lists';
import { WaitLearner } from '../../src/core/waitLearner';

const uris = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

interface Named extends PlannedStream {
  name: string;
}

const stream = (name: string, held: string[], lists: NotifiedList[] = []): Named => ({
  name,
  uris: new Set(held),
  lists: new Set(lists),
});

const names = (streams: readonly Named[]) => streams.map((s) => s.name);

/** Three open streams of 100, 200 and 400 URIs (the first carries the lists) and `extra` new URIs. */
function full(extra: number, patch: Partial<Situation<Named>> = {}): Situation<Named> {
  const [a, b, c] = [uris('a:', 100), uris('b:', 200), uris('c:', 400)];
  return {
    streams: [stream('a', a, ['resources']), stream('b', b), stream('c', c)],
    keep: new Set([...a, ...b, ...c, ...uris('new:', extra)]),
    lists: new Set(['resources']),
    credit: 0,
    waitedMs: 0,
    sinceNewestMs: 0,
    settle: false,
    ...patch,
  };
}

/** Three open streams of 100, 150 and 400 URIs and `extra` new URIs: a list that keeps growing. */
function grown(extra: number, patch: Partial<Situation<Named>> = {}): Situation<Named> {
  const [a, b, c] = [uris('a:', 100), uris('b:', 150), uris('c:', 400)];
  return {
    ...full(0),
    streams: [stream('a', a, ['resources']), stream('b', b), stream('c', c)],
    keep: new Set([...a, ...b, ...c, ...uris('new:', extra)]),
    ...patch,
  };
}

describe('listen plan', () => {
  it('while there is room, new URIs get a stream of their own at once, whatever the credit', () => {
    const base = full(0);
    const next = plan({ ...base, streams: base.streams.slice(1), keep: new Set(uris('x:', 5)) });
    // b and c keep nothing: they close; the new one also takes the lists.
    expect(next).toMatchObject({
      kind: 'open',
      uris: uris('x:', 5),
      lists: ['resources'],
      replaces: [],
      added: 5,
      resent: 0,
    });
    expect(names(next.close)).toEqual(['b', 'c']);
  });

  it(`with ${MAX_STREAMS} streams open, a merge the credit pays for goes at once, with the smallest stream`, () => {
    // a (100) re-sent for 10 new: 90 of credit, and 110 left for the next forced merge (the
    // smallest stream then: a + the new ones).
    const next = plan(full(10, { credit: 200 }));
    expect(next.kind).toBe('open');
    if (next.kind !== 'open') return;
    expect(names(next.replaces)).toEqual(['a']);
    expect(next).toMatchObject({ added: 10, resent: 100, lists: ['resources'] });
    expect(next.uris).toHaveLength(110);
  });

  it('a merge the credit does not pay for waits while new URIs keep coming, at most MAX_WAIT_MS', () => {
    expect(plan(full(10, { credit: 199, waitedMs: 0, sinceNewestMs: 0 }))).toEqual({
      kind: 'rest',
      close: [],
      retryInMs: QUIET_MS,
    });
    expect(plan(full(10, { waitedMs: MAX_WAIT_MS - 30, sinceNewestMs: 10 }))).toEqual({
      kind: 'rest',
      close: [],
      retryInMs: 30,
    });
  });

  it('a merge keeps back the credit the next forced merge needs, so a list that stops growing stays within 2 entries per URI', () => {
    // The credit pays for re-sending a (100) for 10 new, but would leave nothing for merging
    // the last newcomers of a list that stops growing: it waits instead.
    expect(plan(full(10, { credit: 90 })).kind).toBe('rest');
    // Once the list stops growing, that merge goes, and the credit kept covers it.
    const last = plan(full(10, { credit: 90, sinceNewestMs: QUIET_MS }));
    expect(last.kind === 'open' && names(last.replaces)).toEqual(['a']);
  });

  it('when the credit would not pay for the merge, a pause of QUIET_MS is not the end of a list: it waits up to OVER_BUDGET_QUIET_MS', () => {
    // a (100) re-sent for 10 new with no credit: over budget.
    expect(plan(full(10, { waitedMs: QUIET_MS, sinceNewestMs: QUIET_MS }))).toEqual({
      kind: 'rest',
      close: [],
      retryInMs: OVER_BUDGET_QUIET_MS - QUIET_MS,
    });
    const late = plan(
      full(10, { waitedMs: OVER_BUDGET_QUIET_MS, sinceNewestMs: OVER_BUDGET_QUIET_MS }),
    );
    expect(late.kind === 'open' && names(late.replaces)).toEqual(['a']);
  });

  it('after QUIET_MS without a new URI, the cheapest merge the credit pays for goes ahead', () => {
    const next = plan(full(10, { credit: 90, waitedMs: QUIET_MS, sinceNewestMs: QUIET_MS }));
    expect(next.kind === 'open' && names(next.replaces)).toEqual(['a']);
  });

  it('after MAX_WAIT_MS of growth, the merge also takes each next stream no bigger than what it merges', () => {
    // 60 new + a (100) = 160 ≥ 150: b goes too; 310 < 400: c stays.
    const next = plan(grown(60, { waitedMs: MAX_WAIT_MS }));
    expect(next.kind === 'open' && names(next.replaces)).toEqual(['a', 'b']);
    const fewer = plan(grown(40, { waitedMs: MAX_WAIT_MS }));
    expect(fewer.kind === 'open' && names(fewer.replaces)).toEqual(['a']);
  });

  it('eager (waiting has lately brought no newcomer): a merge over budget goes at once, log-structured', () => {
    // Not eager, the same plan waits (over budget, nothing quiet yet).
    expect(plan(grown(60)).kind).toBe('rest');
    const next = plan(grown(60, { eager: true }));
    expect(next.kind === 'open' && names(next.replaces)).toEqual(['a', 'b']);
    const fewer = plan(grown(40, { eager: true }));
    expect(fewer.kind === 'open' && names(fewer.replaces)).toEqual(['a']);
  });

  it('doubtful (the last wait gathered nothing): over budget, a wait still ends after QUIET_MS without a newcomer', () => {
    const quiet = { waitedMs: QUIET_MS, sinceNewestMs: QUIET_MS };
    expect(plan(full(10, quiet)).kind).toBe('rest');
    const next = plan(full(10, { ...quiet, doubtful: true }));
    expect(next.kind === 'open' && names(next.replaces)).toEqual(['a']);
  });

  describe('WaitLearner', () => {
    // Over budget with 10 new URIs and nothing quiet yet: the plan waits.
    const pending = full(10);
    const over = { waitedMs: OVER_BUDGET_QUIET_MS, sinceNewestMs: OVER_BUDGET_QUIET_MS };
    const quiet = { waitedMs: QUIET_MS, sinceNewestMs: QUIET_MS };
    /** A wait that ends with `extra` new URIs, then how many groups open at once after it. */
    const run = (learner: WaitLearner, extra: number, end = over) => {
      expect(learner.plan(pending).kind).toBe('rest');
      expect(learner.plan(full(extra, end)).kind).toBe('open');
      let n = 0;
      while (learner.plan(pending).kind === 'open') n += 1;
      return n;
    };

    it('after a wait that brought nothing, the next 1, 2, 4, … (at most 16) groups open at once; a wait that brought some ends that', () => {
      const learner = new WaitLearner();
      const runs = [1, 2, 3, 4, 5, 6].map(() => run(learner, 10));
      expect(runs).toEqual([1, 2, 4, 8, 16, 16]);
      // A wait that gathered newcomers: waiting pays again, and the next fruitless one starts at 1.
      expect(run(learner, 20)).toBe(0);
      expect(run(learner, 10)).toBe(1);
    });

    it('once two waits in a row brought nothing, the wait after the groups that open at once ends after QUIET_MS, over budget or not', () => {
      const learner = new WaitLearner();
      /** Whether a wait, over budget, ends after QUIET_MS without a newcomer. */
      const impatient = () => {
        expect(learner.plan(pending).kind).toBe('rest');
        return learner.plan(full(10, quiet)).kind === 'open';
      };
      // Full patience at first, and after one fruitless wait (a busy machine's pause).
      expect(impatient()).toBe(false);
      expect(learner.plan(full(10, over)).kind).toBe('open');
      expect(learner.plan(pending).kind).toBe('open');
      expect(impatient()).toBe(false);
      expect(learner.plan(full(10, over)).kind).toBe('open');
      expect(learner.plan(pending).kind).toBe('open');
      expect(learner.plan(pending).kind).toBe('open');
      // Two in a row: the next waits only check whether waiting pays again.
      expect(impatient()).toBe(true);
      while (learner.plan(pending).kind === 'open');
      expect(impatient()).toBe(true);
      while (learner.plan(pending).kind === 'open');
      // It did (a wait gathered newcomers): full patience again.
      expect(run(learner, 20, quiet)).toBe(0);
      expect(impatient()).toBe(false);
    });

    it('newcomers that came while a request was in flight end the groups opened at once: the list grows on its own', () => {
      const learner = new WaitLearner();
      expect(run(learner, 10)).toBe(1);
      expect(learner.plan(pending).kind).toBe('rest');
      expect(learner.plan(full(10, over)).kind).toBe('open');
      // Eager now (a run of 2), until newcomers arrive during a request.
      expect(learner.plan(pending).kind).toBe('open');
      learner.grewWhileAsking();
      expect(learner.plan(pending).kind).toBe('rest');
      // With full patience again.
      expect(learner.plan(full(10, quiet)).kind).toBe('rest');
      expect(run(learner, 10)).toBe(1);
    });
  });

  it('a stream that keeps nothing wanted closes without a request; one that only carries lists is merged for free', () => {
    const gone = stream('gone', uris('old:', 50));
    const lists = stream('lists', [], ['resources']);
    const kept = stream('kept', uris('k:', 3));
    const next = plan({
      streams: [gone, lists, kept],
      keep: new Set([...uris('k:', 3), 'n:1']),
      lists: new Set(['resources']),
      credit: 0,
      waitedMs: 0,
      sinceNewestMs: 0,
      settle: false,
    });
    expect(next).toMatchObject({
      kind: 'open',
      uris: ['n:1'],
      lists: ['resources'],
      resent: 0,
    });
    expect(names(next.close)).toEqual(['gone']);
    expect(next.kind === 'open' && names(next.replaces)).toEqual(['lists']);
  });

  it('a released URI that retention keeps stays where it is; nothing is asked while nothing is new', () => {
    const next = plan({ ...full(0), keep: new Set(uris('a:', 100)) });
    // b and c keep nothing any more: they close; a still carries the lists.
    expect(next.kind).toBe('rest');
    expect(names(next.close)).toEqual(['b', 'c']);
  });

  it('settle: the streams become one with exactly what is kept and listed, unless one already is', () => {
    const next = plan({ ...full(0), keep: new Set(uris('c:', 10)), settle: true });
    expect(next).toMatchObject({ kind: 'open', uris: uris('c:', 10), lists: ['resources'] });
    expect(next.kind === 'open' && names(next.replaces)).toEqual(['a', 'c']);
    expect(names(next.close)).toEqual(['b']);

    const one = stream('one', uris('c:', 10), ['resources']);
    const exact = { ...full(0), streams: [one], keep: new Set(uris('c:', 10)), settle: true };
    expect(plan(exact)).toEqual({ kind: 'rest', close: [] });
  });
});
