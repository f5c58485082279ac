#!/usr/bin/env node
/**
 * `npm run check:example [-- --skip-browser]`: the example app as a consumer has it.
 *
 *  1. Packs the package (npm run build + npm pack) and installs the tarball into a copy of
 *     examples/vite-react outside the repository (scripts/lib/example.mjs).
 *  2. `tsc` of the app with skipLibCheck false, including the package's type tests
 *     (test/types) against the shipped .d.ts. Any error fails.
 *  3. `vite build` for production: prints the bundle's composition (the package's share), and
 *     fails if any devtools code is in it. A development-condition build must contain the
 *     panel, or the check could not have failed.
 *  4. The production build in Chromium against the playground's /mcp and /mcp-legacy on
 *     another origin (test/example/example.e2e.ts): live data, a change, list_changed.
 */
import { join } from 'node:path';
import {
  APP_DIR,
  buildApp,
  buildAppForDevelopment,
  DEVTOOLS_MARKERS,
  devtoolsMarkersIn,
  formatReport,
  prepareApp,
  typecheckApp,
} from './lib/example.mjs';
import { packPackage } from './lib/pack.mjs';
import { bin, CheckFailed, main, run, seconds } from './lib/run.mjs';

const args = new Set(process.argv.slice(2));
const step = (title) => console.log(`\n▸ ${title}`);

main(async () => {
  const started = performance.now();
  step('pack and install into the consumer app');
  const packed = await packPackage();
  await prepareApp(packed);
  console.log(
    `  ${APP_DIR} has ${packed.tarball.split('/').pop()} installed (${seconds(started)})`,
  );

  step('tsc, skipLibCheck false (app, type tests, vite.config.ts)');
  for (const result of await typecheckApp()) {
    const errors = result.output.split('\n').filter((line) => line.includes('error TS'));
    console.log(`  tsc -p ${result.config}: ${errors.length} error(s)`);
    if (result.code !== 0) {
      console.log(result.output);
      throw new CheckFailed(`the consumer app does not type-check (${result.config})`);
    }
  }

  step('production build');
  const report = await buildApp();
  console.log(formatReport(report));
  const ours = report.groups['mcp-react-query']?.gzip ?? 0;
  console.log(
    `  mcp-react-query: ${(ours / 1000).toFixed(1)} kB of ${(report.total.gzip / 1000).toFixed(1)} kB gzip (${((100 * ours) / report.total.gzip).toFixed(1)}%); budget: npm run check:size`,
  );

  step('no devtools in the production bundle');
  const panelModules = report.modules.filter((id) =>
    /node_modules\/mcp-react-query\/dist\/(devtools\.js|DevtoolsPanel)/.test(id),
  );
  const found = devtoolsMarkersIn('dist');
  if (panelModules.length > 0 || found.length > 0) {
    throw new CheckFailed(
      `devtools code in the production bundle: ${[...panelModules, ...found].join(', ')}`,
    );
  }
  console.log(
    `  ✓ none of ${DEVTOOLS_MARKERS.map((m) => JSON.stringify(m)).join(', ')}, no panel module`,
  );
  await buildAppForDevelopment();
  const inDev = devtoolsMarkersIn('dist-dev');
  if (inDev.length !== DEVTOOLS_MARKERS.length) {
    throw new CheckFailed(
      `a development build should contain the panel (found ${inDev.join(', ') || 'nothing'}): the production check proves nothing`,
    );
  }
  console.log('  ✓ control: a NODE_ENV=development build does contain the panel');

  if (args.has('--skip-browser')) {
    console.log('\n(browser run skipped)');
  } else {
    step('Chromium: the production build against the playground, cross-origin, both eras');
    const e2e = await run(bin('vitest'), ['run', '--config', 'test/example/vitest.config.ts'], {
      env: { ...process.env, MCP_EXAMPLE_DIST: join(APP_DIR, 'dist') },
    });
    if (e2e.code !== 0) throw new CheckFailed('the example app failed in Chromium');
  }

  // The copy stays (reused next time), so it can be run by hand: cd there && npx vite.
  console.log(`\nexample app checks passed (${seconds(started)}); the installed app: ${APP_DIR}`);
});
