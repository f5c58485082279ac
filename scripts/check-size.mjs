#!/usr/bin/env node
/**
 * `npm run check:size`: the size budget. Builds the example app for production against the
 * packed package (as scripts/check-example.mjs does) and fails when the package's own code in
 * that bundle — devtools excluded, since a production build has none — exceeds the budget.
 * Gzip level 9 of the bytes the bundle's source maps attribute to node_modules/mcp-react-query.
 */
import { buildApp, formatReport, prepareApp } from './lib/example.mjs';
import { packPackage } from './lib/pack.mjs';
import { CheckFailed, main, seconds } from './lib/run.mjs';

/** The budget, in bytes of gzip (1 kB = 1000 bytes, as Vite prints sizes). */
export const BUDGET_GZIP_BYTES = 10_000;

main(async () => {
  const started = performance.now();
  await prepareApp(await packPackage());
  const report = await buildApp();
  console.log(`examples/vite-react, production build:\n${formatReport(report)}`);
  const ours = report.groups['mcp-react-query']?.gzip ?? 0;
  const verdict = `mcp-react-query: ${ours} B gzip of ${report.total.gzip} B total; budget ${BUDGET_GZIP_BYTES} B`;
  if (ours === 0)
    throw new CheckFailed('no mcp-react-query code found in the bundle: the measurement is broken');
  if (ours > BUDGET_GZIP_BYTES) {
    throw new CheckFailed(
      `${verdict}: over by ${ours - BUDGET_GZIP_BYTES} B (${seconds(started)})`,
    );
  }
  console.log(`\n✓ ${verdict} (${seconds(started)})`);
});
