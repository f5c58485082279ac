import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OUT_DIR, QUICK, SEED } from './config';

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
