#!/usr/bin/env node
/**
 * `npm run test:types`: the type tests in test/types, against the sources. Then the canary:
 * a file of deliberately wrong assertions that must fail on exactly its marked lines — if it
 * compiled, the assertions could not fail either (expect-type broken, types collapsed to any).
 * The same test files also run against the packed package in scripts/check-example.mjs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bin, CheckFailed, main, ROOT, run, seconds } from './lib/run.mjs';

const TSC = bin('tsc');
const CANARY = join(ROOT, 'test/types/canary/canary.test-d.tsx');

main(async () => {
  const started = performance.now();
  const tests = await run(TSC, ['--noEmit', '-p', 'test/types/tsconfig.json']);
  if (tests.code !== 0) throw new CheckFailed('type tests failed (errors above)');
  console.log(`✓ type tests pass against src/ (${seconds(started)})`);

  const canary = await run(
    TSC,
    ['--noEmit', '--pretty', 'false', '-p', 'test/types/canary/tsconfig.json'],
    { echo: false },
  );
  const marked = readFileSync(CANARY, 'utf8')
    .split('\n')
    .flatMap((line, index) => (line.includes('// canary') ? [index + 1] : []));
  const failed = new Set(
    [...canary.output.matchAll(/canary\.test-d\.tsx\((\d+),\d+\): error/g)].map((m) =>
      Number(m[1]),
    ),
  );
  const silent = marked.filter((line) => !failed.has(line));
  const unexpected = [...failed].filter((line) => !marked.includes(line));
  if (canary.code === 0 || silent.length > 0 || unexpected.length > 0) {
    console.error(canary.output);
    throw new CheckFailed(
      `canary: expected errors on lines ${marked.join(', ')}; ` +
        `no error on ${silent.join(', ') || '—'}, unexpected on ${unexpected.join(', ') || '—'}`,
    );
  }
  console.log(
    `✓ canary: all ${marked.length} wrong assertions fail, as they must (${seconds(started)})`,
  );
});
