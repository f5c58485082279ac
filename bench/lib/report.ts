import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OUT_DIR, QUICK, SEED } from './config';
import { round } from './stats';

export type Cell = string | number | boolean | null | undefined;

export interface Table {
  title: string;
  head: string[];
  rows: Cell[][];
  notes?: string[];
}

export interface Target {
  scenario: string;
  kind: string;
  name: string;
  target: string;
  actual: string;
  pass: boolean;
  /** When missed: by how much, in words (e.g. "0.31× over"). */
  missedBy?: string;
  /** When missed: what the measurement says the gap is made of. */
  why?: string;
}

/** How far `actual` is past an upper bound `limit`, for a target's closing note. */
export function over(actual: number, limit: number, unit = '×'): string {
  return `${round(actual - limit, 3)}${unit} over (${round((actual / limit - 1) * 100, 1)}%)`;
}

/** One scenario's share of results.json; run.mjs merges them and prints the tables. */
export interface Fragment {
  scenario: string;
  quick: boolean;
  seed: number;
  durationMs: number;
  config: unknown;
  results: unknown;
  tables: Table[];
  targets: Target[];
  /** Mismatches of this library: run.mjs exits non-zero when any is not 0. */
  ourMismatches: number;
}

export function writeFragment(fragment: Omit<Fragment, 'quick' | 'seed'>): void {
  mkdirSync(OUT_DIR, { recursive: true });
  const full: Fragment = { ...fragment, quick: QUICK, seed: SEED };
  writeFileSync(join(OUT_DIR, `${fragment.scenario}.json`), `${JSON.stringify(full, null, 2)}\n`);
}

export const ms = (value: number | null | undefined): string =>
  value === null || value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(2);

export const times = (value: number | null | undefined): string =>
  value === null || value === undefined || !Number.isFinite(value) ? '–' : `${value.toFixed(2)}×`;
