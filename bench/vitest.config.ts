import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const quick = process.env.BENCH_QUICK === '1';
const profileDir = process.env.BENCH_PROFILE_DIR;

/** Latency first, while the process pool is fresh; the long storm and memory runs last. */
const ORDER = ['latency', 'churn', 'scroll', 'grow', 'storm', 'flood', 'memory'];

class ScenarioOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = ORDER.findIndex((name) => file.moduleId.endsWith(`/${name}.bench.tsx`));
      return index === -1 ? ORDER.length : index;
    };
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  // JSX for React's production build (bench/lib/productionReact.ts): the automatic runtime's
  // `jsx`, not the development `jsxDEV` (which React's production build does not have).
  oxc: { jsx: { runtime: 'automatic', development: false } },
  test: {
    include: [`bench/scenarios/${process.env.BENCH_ONLY ?? '*'}.bench.{ts,tsx}`],
    // Each scenario in a fresh process (no shared heap), one at a time so
    // they do not compete for the 2 cores.
    pool: 'forks',
    isolate: true,
    fileParallelism: false,
    sequence: { sequencer: ScenarioOrder },
    setupFiles: ['bench/lib/productionReact.ts'],
    // The memory scenario forces full collections before each heap sample.
    execArgv: [
      '--expose-gc',
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ],
    testTimeout: quick ? 120_000 : 1_200_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
