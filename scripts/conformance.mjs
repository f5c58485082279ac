#!/usr/bin/env node
/**
 * `npm run conformance [-- options]`: runs the official MCP conformance suite
 * (@modelcontextprotocol/conformance) against a client driver, every selected
 * client scenario at every spec version the suite tags it with.
 *
 *   npm run conformance                                   every required scenario, conformance/driver.mjs
 *   npm run conformance -- --driver conformance/sdk-driver.mjs   the bare-SDK baseline
 *   npm run conformance -- --quick                        a representative subset (CI)
 *   npm run conformance -- --scenario sse-retry,auth/scope-step-up --jobs 2
 *   npm run conformance -- --list                         print the selection and exit
 *
 * Options:
 *   --driver <path>        client driver (default conformance/driver.mjs, which imports the built
 *                          package: `npm run build` first). A .mjs/.js/.cjs file runs on this Node
 *                          (the system Node 20); anything else is executed as is.
 *   --scenario a,b         only these scenarios (names as `conformance list --client` prints them)
 *   --spec-version <v>     only runs at this spec version
 *   --quick                a representative subset, each at its newest tagged version
 *   --jobs <n>             scenario runs in parallel (default 2)
 *   --timeout <ms>         per-run client timeout passed to the suite (default 30000)
 *   --out <dir>            results directory (default conformance/results/<timestamp>)
 *   --strict               also fail on WARNING checks, client exit errors and timeouts
 *   --verbose              print the suite's output for runs that did not pass
 *   --list                 print the selected scenario × version runs and exit
 *
 * The suite needs Node >= 22; the system Node stays 20. Node 22 comes from the `node` npm package
 * installed in conformance/runtime/ (its own package.json + lock, so its `node` binary does not
 * shadow the system Node in every npm script's PATH). This script runs `npm ci` there when the
 * binary is missing. CONFORMANCE_NODE=/path/to/node22 overrides.
 *
 * Output: a table (scenario × spec version → pass/fail with SUCCESS/FAILURE/WARNING counts), every
 * run's checks.json/stdout/stderr under the results directory, and <out>/summary.json. Exit code 1
 * when any run has a FAILURE check, no checks at all, or (with --strict) a warning or client error.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNTIME_DIR = join(ROOT, 'conformance', 'runtime');
const DEFAULT_DRIVER = 'conformance/driver.mjs';

/**
 * The scenarios the conformance issue requires, besides every non-extension `auth/*` one. A
 * required scenario the installed suite does not know is an error (suite version drift).
 */
const REQUIRED = [
  'initialize',
  'tools_call',
  'sse-retry',
  'request-metadata',
  'http-standard-headers',
  'http-custom-headers',
  'http-invalid-tool-headers',
  'json-schema-ref-no-deref',
  'json-schema-2020-12-preservation',
  'elicitation-sep1034-client-defaults',
  'sep-2322-client-request-state',
];

/** --quick: one run per scenario (its newest version), covering each area once. */
const QUICK = [
  'initialize',
  'tools_call',
  'sse-retry',
  'request-metadata',
  'http-standard-headers',
  'http-custom-headers',
  'json-schema-2020-12-preservation',
  'elicitation-sep1034-client-defaults',
  'sep-2322-client-request-state',
  'auth/metadata-default',
  'auth/scope-step-up',
  'auth/iss-supported',
];

function parseArgs(argv) {
  const opts = {
    driver: DEFAULT_DRIVER,
    scenarios: undefined,
    specVersion: undefined,
    quick: false,
    jobs: 2,
    timeout: 30000,
    out: undefined,
    strict: false,
    verbose: false,
    list: false,
  };
  const value = (i, name) => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) fail(`${name} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [name, inline] = arg.includes('=') ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    const take = () => (inline !== undefined ? inline : value(i++, name));
    switch (name) {
      case '--driver':
        opts.driver = take();
        break;
      case '--scenario':
      case '--scenarios':
        opts.scenarios = take()
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        break;
      case '--spec-version':
        opts.specVersion = take();
        break;
      case '--quick':
        opts.quick = true;
        break;
      case '--jobs':
        opts.jobs = Number(take());
        if (!Number.isInteger(opts.jobs) || opts.jobs < 1) fail('--jobs needs a positive integer');
        break;
      case '--timeout':
        opts.timeout = Number(take());
        if (!Number.isFinite(opts.timeout) || opts.timeout <= 0)
          fail('--timeout needs milliseconds');
        break;
      case '--out':
        opts.out = resolve(take());
        break;
      case '--strict':
        opts.strict = true;
        break;
      case '--verbose':
        opts.verbose = true;
        break;
      case '--list':
        opts.list = true;
        break;
      case '--help':
      case '-h':
        process.stdout.write(
          `${readFileSync(fileURLToPath(import.meta.url), 'utf8').split('*/')[0]}*/\n`,
        );
        process.exit(0);
        break;
      default:
        fail(`unknown option ${arg} (see --help)`);
    }
  }
  return opts;
}

function fail(message) {
  console.error(`conformance: ${message}`);
  process.exit(2);
}

/** The Node >= 22 binary that runs the suite. */
function findNode22() {
  const override = process.env.CONFORMANCE_NODE;
  if (override) return override;
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const bin = join(RUNTIME_DIR, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(bin)) {
    console.error('conformance: installing Node 22 for the suite (npm ci in conformance/runtime)…');
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: RUNTIME_DIR,
      stdio: 'inherit',
    });
    if (r.status !== 0 || !existsSync(bin)) {
      fail(
        `no Node 22 binary at ${relative(ROOT, bin)} after npm ci in conformance/runtime. ` +
          'The `node` package installs it from a preinstall script: check that install scripts ' +
          'are allowed (allowScripts in conformance/runtime/package.json), or set CONFORMANCE_NODE.',
      );
    }
  }
  const version = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout?.trim();
  if (!version?.startsWith('v2') || Number(version.slice(1).split('.')[0]) < 22) {
    fail(`${relative(ROOT, bin)} is ${version || 'not runnable'}; the suite needs Node >= 22`);
  }
  return bin;
}

function findSuite() {
  let pkg;
  try {
    pkg = createRequire(join(ROOT, 'package.json')).resolve(
      '@modelcontextprotocol/conformance/package.json',
    );
  } catch {
    fail('@modelcontextprotocol/conformance is not installed: run `npm ci` first');
  }
  const version = JSON.parse(readFileSync(pkg, 'utf8')).version;
  return { entry: join(dirname(pkg), 'dist', 'index.js'), version };
}

/** `conformance list --client` → [{ name, versions: [...], extension }]. */
function listClientScenarios(node, suite) {
  const r = spawnSync(node, [suite.entry, 'list', '--client'], { encoding: 'utf8', cwd: ROOT });
  if (r.status !== 0) fail(`\`conformance list --client\` failed:\n${r.stderr}`);
  const scenarios = [];
  for (const line of r.stdout.split('\n')) {
    const m = line.match(/^\s+-\s+(\S+)\s+\[([^\]]*)\]\s*$/);
    if (!m) continue;
    const tags = m[2].split(',').map((s) => s.trim());
    const extension = tags.includes('extension');
    scenarios.push({ name: m[1], versions: extension ? [] : tags, extension });
  }
  if (scenarios.length === 0) fail(`could not parse \`conformance list --client\`:\n${r.stdout}`);
  return scenarios;
}

function selectRuns(all, opts) {
  const byName = new Map(all.map((s) => [s.name, s]));
  const missing = REQUIRED.filter((n) => !byName.has(n));
  if (missing.length > 0)
    fail(`the installed suite lacks required scenarios: ${missing.join(', ')}`);
  const required = all.filter(
    (s) => !s.extension && (REQUIRED.includes(s.name) || s.name.startsWith('auth/')),
  );
  let names;
  if (opts.scenarios) {
    const unknown = opts.scenarios.filter((n) => !byName.has(n));
    if (unknown.length > 0) {
      fail(
        `unknown scenario(s): ${unknown.join(', ')}\nclient scenarios: ${all.map((s) => s.name).join(', ')}`,
      );
    }
    const ext = opts.scenarios.filter((n) => byName.get(n).extension);
    if (ext.length > 0) fail(`extension scenarios are not run by this harness: ${ext.join(', ')}`);
    names = opts.scenarios;
  } else if (opts.quick) {
    names = QUICK;
  } else {
    names = required.map((s) => s.name);
  }
  const runs = [];
  for (const name of names) {
    let versions = byName.get(name).versions;
    if (opts.quick && !opts.scenarios) versions = versions.slice(-1);
    if (opts.specVersion) versions = versions.filter((v) => v === opts.specVersion);
    for (const version of versions) runs.push({ scenario: name, version });
  }
  return runs;
}

function driverCommand(driver) {
  const abs = resolve(ROOT, driver);
  if (!existsSync(abs)) {
    if (driver === DEFAULT_DRIVER) {
      fail(
        `${DEFAULT_DRIVER} does not exist yet. It is the package's own driver, written against ` +
          "mcp-react-query's public API (see conformance/NOTES.md). Until then run the bare-SDK " +
          'baseline: npm run conformance -- --driver conformance/sdk-driver.mjs',
      );
    }
    fail(`driver not found: ${driver}`);
  }
  if (driver === DEFAULT_DRIVER) checkBuild();
  if (/\.ts$|\.tsx$/.test(abs)) {
    fail(
      `${driver}: Node 20 cannot run TypeScript directly; write the driver as .mjs against the built package (dist/)`,
    );
  }
  // The suite splits --command on spaces, so both paths must be space-free.
  const rel = relative(ROOT, abs);
  const cmd = /\.(mjs|cjs|js)$/.test(abs) ? `${process.execPath} ${rel}` : rel;
  if (/\s/.test(process.execPath) || /\s/.test(rel)) {
    fail(`the suite splits --command on spaces; paths must not contain any: ${cmd}`);
  }
  return cmd;
}

/** The package's driver imports the built package: there must be one, and it should be current. */
function checkBuild() {
  const built = ['core.js', 'auth.js'].map((file) => join(ROOT, 'dist', file));
  const missing = built.filter((file) => !existsSync(file));
  if (missing.length > 0) {
    fail(
      `${DEFAULT_DRIVER} imports the built package, and dist/ lacks ${missing.map((f) => relative(ROOT, f)).join(', ')}: run \`npm run build\` first`,
    );
  }
  const builtAt = Math.min(...built.map((file) => statSync(file).mtimeMs));
  const newest = (dir) => {
    let latest = { at: 0, path: dir };
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, entry.name);
      const found = entry.isDirectory() ? newest(p) : { at: statSync(p).mtimeMs, path: p };
      if (found.at > latest.at) latest = found;
    }
    return latest;
  };
  const source = newest(join(ROOT, 'src'));
  if (source.at > builtAt) {
    console.error(
      `conformance: warning: ${relative(ROOT, source.path)} is newer than dist/; the driver tests the build (npm run build)`,
    );
  }
}

function findChecks(dir) {
  if (!existsSync(dir)) return undefined;
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (entry === 'checks.json') return p;
    if (statSync(p).isDirectory()) {
      const found = findChecks(p);
      if (found) return found;
    }
  }
  return undefined;
}

function runOne(node, suite, command, run, opts, outDir) {
  const dir = join(outDir, `${run.scenario.replaceAll('/', '__')}@${run.version}`);
  mkdirSync(dir, { recursive: true });
  const args = [
    suite.entry,
    'client',
    '--command',
    command,
    '--scenario',
    run.scenario,
    '--spec-version',
    run.version,
    '--timeout',
    String(opts.timeout),
    '-o',
    dir,
  ];
  const started = performance.now();
  return new Promise((done) => {
    const child = spawn(node, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('close', (code) => {
      const ms = Math.round(performance.now() - started);
      writeFileSync(join(dir, 'suite-output.txt'), output);
      const checksPath = findChecks(dir);
      const checks = checksPath ? JSON.parse(readFileSync(checksPath, 'utf8')) : [];
      const counts = { SUCCESS: 0, FAILURE: 0, WARNING: 0, INFO: 0, SKIPPED: 0 };
      for (const c of checks) counts[c.status] = (counts[c.status] ?? 0) + 1;
      const clientError = /CLIENT EXITED WITH ERROR/.test(output);
      const timedOut = /CLIENT TIMED OUT/.test(output);
      const skipped = /^SKIPPED:/m.test(output);
      let status;
      if (skipped) status = 'skipped';
      else if (!checksPath || checks.length === 0 || counts.FAILURE > 0) status = 'fail';
      else if (counts.WARNING > 0 || clientError || timedOut || code !== 0) status = 'warn';
      else status = 'pass';
      done({
        ...run,
        status,
        counts,
        suiteExitCode: code,
        clientError,
        timedOut,
        ms,
        dir: relative(ROOT, dir),
        failures: checks
          .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
          .map((c) => ({
            id: c.id,
            status: c.status,
            name: c.name,
            message: c.errorMessage ?? c.description,
          })),
        output,
      });
    });
  });
}

async function runAll(runs, jobs, fn, onDone) {
  const results = new Array(runs.length);
  let next = 0;
  const worker = async () => {
    while (next < runs.length) {
      const i = next++;
      results[i] = await fn(runs[i]);
      onDone(results[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, runs.length) }, worker));
  return results;
}

function printTable(results, versions) {
  const names = [...new Set(results.map((r) => r.scenario))];
  const cell = (r) => {
    if (!r) return '—';
    const { SUCCESS, FAILURE, WARNING } = r.counts;
    const label = { pass: 'pass', warn: 'WARN', fail: 'FAIL', skipped: 'skip' }[r.status];
    return `${label} ${SUCCESS}/${FAILURE}/${WARNING}`;
  };
  const width = Math.max(8, ...names.map((n) => n.length));
  const colW = Math.max(14, ...versions.map((v) => v.length));
  const lines = [];
  lines.push(`${'scenario'.padEnd(width)}  ${versions.map((v) => v.padEnd(colW)).join('  ')}`);
  lines.push(`${'-'.repeat(width)}  ${versions.map(() => '-'.repeat(colW)).join('  ')}`);
  for (const name of names) {
    const cells = versions.map((v) =>
      cell(results.find((r) => r.scenario === name && r.version === v)).padEnd(colW),
    );
    lines.push(`${name.padEnd(width)}  ${cells.join('  ')}`);
  }
  lines.push('');
  lines.push('cells: status SUCCESS/FAILURE/WARNING check counts; — = not tagged for that version');
  console.log(lines.join('\n'));
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const node = findNode22();
  const suite = findSuite();
  const all = listClientScenarios(node, suite);
  const runs = selectRuns(all, opts);
  if (runs.length === 0) fail('the selection is empty');
  if (opts.list) {
    for (const r of runs) console.log(`${r.scenario}\t${r.version}`);
    console.log(`${runs.length} runs`);
    return;
  }
  const command = driverCommand(opts.driver);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const outDir = opts.out ?? join(ROOT, 'conformance', 'results', stamp);
  mkdirSync(outDir, { recursive: true });
  console.log(
    `conformance ${suite.version} on ${spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()}; ` +
      `driver: ${command}; ${runs.length} runs, ${opts.jobs} at a time`,
  );
  const started = performance.now();
  const results = await runAll(
    runs,
    opts.jobs,
    (run) => runOne(node, suite, command, run, opts, outDir),
    (r) => {
      const { SUCCESS, FAILURE, WARNING } = r.counts;
      console.log(
        `  ${r.status.padEnd(7)} ${r.scenario} @ ${r.version}  (${SUCCESS}/${FAILURE}/${WARNING}, ${(r.ms / 1000).toFixed(1)} s)`,
      );
      if (r.status !== 'pass' && r.status !== 'skipped') {
        for (const f of r.failures) console.log(`      ${f.status} ${f.id}: ${f.message}`);
        if (r.clientError) console.log('      client exited with an error');
        if (r.timedOut) console.log('      client timed out');
        if (opts.verbose) console.log(r.output.replace(/^/gm, '      | '));
      }
    },
  );
  const wallMs = Math.round(performance.now() - started);
  const versions = [...new Set(all.flatMap((s) => s.versions))]
    .filter((v) => results.some((r) => r.version === v))
    .sort();
  console.log('');
  printTable(results, versions);
  const failed = results.filter((r) => r.status === 'fail');
  const warned = results.filter((r) => r.status === 'warn');
  const summary = {
    suite: `@modelcontextprotocol/conformance@${suite.version}`,
    node: spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim(),
    driverNode: process.version,
    driver: command,
    options: { quick: opts.quick, jobs: opts.jobs, timeout: opts.timeout, strict: opts.strict },
    startedAt: new Date(Date.now() - wallMs).toISOString(),
    wallMs,
    totals: {
      runs: results.length,
      pass: results.filter((r) => r.status === 'pass').length,
      warn: warned.length,
      fail: failed.length,
      skipped: results.filter((r) => r.status === 'skipped').length,
    },
    runs: results.map(({ output, ...r }) => r),
  };
  writeFileSync(join(outDir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  console.log(
    `\n${summary.totals.pass} passed, ${failed.length} failed, ${warned.length} with warnings ` +
      `(${results.length} runs) in ${(wallMs / 1000).toFixed(1)} s — ${relative(ROOT, join(outDir, 'summary.json'))}`,
  );
  if (failed.length > 0 || (opts.strict && warned.length > 0)) process.exit(1);
}

main().catch((error) => {
  console.error(error);
  process.exit(2);
});
