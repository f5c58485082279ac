/**
 * Seeded randomness for the chaos suite. Every random choice the suite makes comes from one of
 * these, so a failing run is replayed with the same seed (`CHAOS_SEED=<n>`).
 */

/** FNV-1a: turns a label into 32 bits, so each era and each URI gets its own stream. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A key chosen with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K;
}

/** mulberry32, seeded from `seed` and a label naming the consumer. */
export function createRng(seed: number, label: string): Rng {
  let state = hash32(`${seed >>> 0}:${label}`);
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick(items) {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error('Rng.pick: empty list');
      return item;
    },
    weighted(weights) {
      const entries = Object.entries(weights) as [keyof typeof weights, number][];
      const total = entries.reduce((sum, [, w]) => sum + w, 0);
      let roll = next() * total;
      for (const [key, weight] of entries) {
        roll -= weight;
        if (roll < 0) return key;
      }
      const last = entries[entries.length - 1];
      if (!last) throw new Error('Rng.weighted: no weights');
      return last[0];
    },
  };
}

/** The suite's seed: `CHAOS_SEED` when set, so any run can be replayed. */
export function chaosSeed(fallback: number): number {
  const raw = process.env.CHAOS_SEED;
  if (raw === undefined || raw === '') return fallback;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`CHAOS_SEED must be an integer, got ${raw}`);
  return seed;
}
