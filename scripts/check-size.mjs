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

/** Issue 12's budget, in bytes of gzip (1 kB = 1000 bytes, as Vite prints sizes): not met yet. */
export const BUDGET_GZIP_BYTES = 10_000;
/**
 * What CI fails past until the budget is met: the measured size when issue 12 was last worked
 * on plus a little, so any growth is caught and has to be argued for. 14.37 kB with the issue-11
 * connection work and the tab-sharing hooks; 14.72 kB once a page that goes away ends its 2025
 * session (the keepalive DELETE at pagehide) and the connection's wiring moved to connect.ts.
 * See the README's "Package checks" for what reaching 10 kB would cost.
 */
export const CEILING_GZIP_BYTES = 14_850;

main(async () => {
  const started = performance.now();
  await prepareApp(await packPackage());
  const report = await buildApp();
  console.log(`examples/vite-react, production build:\n${formatReport(report)}`);
  const ours = report.groups['mcp-react-query']?.gzip ?? 0;
  const verdict = `mcp-react-query: ${ours} B gzip of ${report.total.gzip} B total; budget ${BUDGET_GZIP_BYTES} B, ceiling ${CEILING_GZIP_BYTES} B`;
  if (ours === 0)
    throw new CheckFailed('no mcp-react-query code found in the bundle: the measurement is broken');
  if (ours > CEILING_GZIP_BYTES) {
    throw new CheckFailed(
      `${verdict}: over the ceiling by ${ours - CEILING_GZIP_BYTES} B (${seconds(started)})`,
    );
  }
  if (ours > BUDGET_GZIP_BYTES) {
    console.log(
      `\n✗ budget missed (${ours - BUDGET_GZIP_BYTES} B over; not failing until the ceiling): ${verdict} (${seconds(started)})`,
    );
    return;
  }
  console.log(`\n✓ ${verdict} (${seconds(started)})`);
});
