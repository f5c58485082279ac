import { describe, expect, it } from 'vitest';
import { Retention } from '../../src/core/retention';

const uris = (prefix: string, n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(from + i).padStart(4, '0')}`);

const set = (...parts: readonly (readonly string[])[]) => new Set(parts.flat());

/** A tiny seeded linear congruential generator: the same walk on every run. */
function lcg(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

/** URIs added to or removed from the subscribed set between two plans. */
const changesBetween = (before: ReadonlySet<string>, after: ReadonlySet<string>) =>
  [...after].filter((uri) => !before.has(uri)).length +
  [...before].filter((uri) => !after.has(uri)).length;

/**
 * 104 URIs subscribed and then all released at once: 64 (2 × 32) stay, the
 * 40 released first become ghosts, and the 8 ghosts beyond 32 are forgotten,
 * each lowering the ratio by 0.125 — to 1.
 */
function lowered() {
  const retention = new Retention();
  const all = uris('u:', 104);
  retention.plan(new Set(all), new Set());
  const kept = retention.plan(new Set(), new Set(all));
  return { retention, all, kept };
}

describe('Retention (rule 10)', () => {
  it('starts at the maximum ratio, 2', () => {
    expect(new Retention().ratio).toBe(2);
  });

  it('plans every held URI', () => {
    const retention = new Retention();
    const held = set(uris('a:', 5));
    expect(retention.plan(held, new Set())).toEqual(held);
  });

  it('keeps released URIs up to 2 × 32 while fewer than 32 are held, the most recently released first', () => {
    const retention = new Retention();
    const all = uris('u:', 70);
    let active = retention.plan(new Set(all), new Set());
    // Release them one at a time, from the last to the first.
    for (let n = all.length - 1; n >= 0; n--) {
      active = retention.plan(new Set(all.slice(0, n)), active);
    }
    expect(active.size).toBe(64);
    // The first released (the highest numbers) went.
    expect([...active].sort()).toEqual(all.slice(0, 64));
  });

  it('keeps up to 2 × held extras once more than 32 are held', () => {
    const retention = new Retention();
    const held = uris('h:', 40);
    const extras = uris('x:', 100);
    retention.plan(set(held, extras), new Set());
    const kept = retention.plan(new Set(held), set(held, extras));
    expect(kept.size).toBe(40 + 2 * 40);
    expect(kept).toEqual(set(held, extras.slice(20)));
  });

  it('a URI held again is no longer an extra: it is never evicted while held', () => {
    const retention = new Retention();
    const all = uris('u:', 100);
    const active = retention.plan(new Set(all), new Set());
    // u:0000 (the oldest) is held again before the release of everything else.
    const kept = retention.plan(new Set([all[0] as string]), active);
    expect(kept.has(all[0] as string)).toBe(true);
    expect(kept.size).toBe(1 + 64);
  });

  it('ghosts forgotten (more than 32 evictions) lower the ratio by 0.125 each', () => {
    const { retention, all, kept } = lowered();
    expect(kept).toEqual(new Set(all.slice(40)));
    expect(retention.ratio).toBe(2 - 8 * 0.125);
  });

  it('a ghost wanted again raises the ratio by 0.5; a forgotten one does not', () => {
    const { retention, all, kept } = lowered();
    const forgotten = all[0] as string; // among the 8 ghosts forgotten
    retention.plan(set([...kept], [forgotten]), kept);
    expect(retention.ratio).toBe(1);

    const remembered = all[39] as string; // the last evicted: still a ghost
    retention.plan(set([...kept], [forgotten, remembered]), set([...kept], [forgotten]));
    expect(retention.ratio).toBe(1.5);

    // A ghost counts once: it is no longer one after it came back.
    retention.plan(set([...kept], [forgotten]), set([...kept], [forgotten, remembered]));
    retention.plan(set([...kept], [forgotten, remembered]), set([...kept], [forgotten]));
    expect(retention.ratio).toBe(1.5);
  });

  it('removals alone never evict below 2 × max(held, 32); an addition evicts down to the learnt ratio', () => {
    const { retention, kept } = lowered();
    expect(retention.ratio).toBe(1);
    // Only removals: 64 released extras, all kept whatever the learnt ratio.
    expect(retention.plan(new Set(), kept)).toEqual(kept);

    // Something added: the learnt ratio (1 × 32) applies, the earliest released go first.
    const added = 'new:1';
    const next = retention.plan(new Set([added]), kept);
    expect(next.size).toBe(1 + 32);
    expect(next).toEqual(set([added], [...kept].slice(32)));
  });

  it('the ratio never goes below 0 nor above 2', () => {
    const retention = new Retention();
    let active = retention.plan(new Set(uris('a:', 1000)), new Set());
    active = retention.plan(new Set(), active); // 936 evictions, 904 forgotten
    expect(retention.ratio).toBe(0);
    // With ratio 0, an addition keeps no extras at all.
    expect(retention.plan(new Set(['b:1']), active)).toEqual(new Set(['b:1']));

    const fresh = new Retention();
    const all = uris('c:', 70);
    const kept = fresh.plan(new Set(), fresh.plan(new Set(all), new Set())); // 6 ghosts, none forgotten
    fresh.plan(set([...kept], all.slice(0, 6)), kept); // all six come back
    expect(fresh.ratio).toBe(2);
  });

  it('settle returns only what is held and makes no ghosts', () => {
    const { retention, kept } = lowered();
    const keptList = [...kept];
    const held = new Set(keptList.slice(0, 3));
    const settled = retention.settle(held);
    expect(settled).toEqual(held);
    expect(settled).not.toBe(held);

    // What settle dropped is not a ghost: wanting it again is no evidence against the ratio.
    const dropped = keptList[10] as string;
    retention.plan(set([...held], [dropped]), held);
    expect(retention.ratio).toBe(1);
    // And settle forgot the released set: only what is active now can be kept.
    expect(retention.plan(new Set(), held)).toEqual(held);
  });

  it('replaying a churn-like random walk over 100 URIs (~50 held) costs about one subscription change per distinct URI', () => {
    const random = lcg(20_260_728);
    const pool = uris('r:', 100);
    const retention = new Retention();
    const held = new Set<string>();
    const seen = new Set<string>();
    let active: ReadonlySet<string> = new Set();
    let changes = 0;
    let naive = 0; // subscribing exactly what is held
    let dropped = 0; // plans that left out a held URI
    let previousHeld: ReadonlySet<string> = new Set();
    for (let step = 0; step < 3000; step++) {
      const mount = held.size === 0 || random() < (held.size < 50 ? 0.7 : 0.3);
      if (mount) {
        const free = pool.filter((uri) => !held.has(uri));
        const uri = free[Math.floor(random() * free.length)] as string;
        held.add(uri);
        seen.add(uri);
      } else {
        const list = [...held];
        held.delete(list[Math.floor(random() * list.length)] as string);
      }
      const next = retention.plan(new Set(held), active);
      if ([...held].some((uri) => !next.has(uri))) dropped += 1;
      changes += changesBetween(active, next);
      naive += changesBetween(previousHeld, held);
      previousHeld = new Set(held);
      active = next;
    }
    expect(dropped).toBe(0);
    // The floor: every distinct URI must be subscribed once.
    expect(seen.size).toBe(pool.length);
    expect(changes).toBeGreaterThanOrEqual(seen.size);
    expect(changes).toBeLessThanOrEqual(1.1 * seen.size);
    // What retention saves: without it, every mount and unmount is a change.
    expect(naive).toBeGreaterThan(20 * changes);
  });

  it('replaying a scroll (waves of 25, window 50, 3,000 URIs) sends at most 2.2 × N filter entries in total', () => {
    const WAVE = 25;
    const N = 3000;
    const retention = new Retention();
    let active: ReadonlySet<string> = new Set();
    let entries = 0;
    let streams = 0;
    for (let wave = 0; wave * WAVE < N; wave++) {
      // The window: this wave and the one before it.
      const window = uris('s:', Math.min(2, wave + 1) * WAVE, Math.max(0, wave - 1) * WAVE);
      const held = new Set(window);
      const next = retention.plan(held, active);
      if (changesBetween(active, next) > 0) {
        streams += 1;
        entries += next.size; // one new listen stream carrying the whole filter
      }
      active = next;
    }
    expect(streams).toBe(N / WAVE);
    expect(entries).toBeGreaterThanOrEqual(2 * N - WAVE); // the window itself, every time
    expect(entries).toBeLessThanOrEqual(2.2 * N);
    // It learnt that nothing comes back.
    expect(retention.ratio).toBe(0);
  });
});
