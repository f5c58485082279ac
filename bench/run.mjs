#!/usr/bin/env node
// `npm run bench [-- --quick] [-- --only=storm,latency] [-- --profile]`
//
// Runs the scenarios in bench/scenarios through vitest (Node 20 cannot run
// TypeScript by itself), then merges their fragments into one results file,
// prints every table and the targets, and exits non-zero when the run failed
// or this library showed a stale component (mismatches ≠ 0).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = join(benchDir, '..');
const require = createRequire(import.meta.url);

const SCENARIOS = [
  'latency',
  'churn',
  'scroll',
  'grow',
  'storm',
  'flood',
  'memory',
  'tabs',
  'servers',
  'browser',
];
const srcPath = `${join(root, 'src')}/`;

function parseArgs(argv) {
  const args = { quick: false, profile: false, only: SCENARIOS, out: undefined };
  for (const arg of argv) {
    if (arg === '--quick') args.quick = true;
    else if (arg === '--profile') args.profile = true;
    else if (arg.startsWith('--only=')) args.only = arg.slice(7).split(',').filter(Boolean);
    else if (arg.startsWith('--out=')) args.out = arg.slice(6);
    else if (arg === '--help' || arg === '-h') {
      console.log(
        'usage: npm run bench -- [--quick] [--only=latency,churn,scroll,grow,storm,flood,memory,tabs,servers,browser] [--profile] [--out=FILE]',
      );
      process.exit(0);
    } else {
      console.error(`unknown argument: ${arg}`);
      process.exit(2);
    }
  }
  const unknown = args.only.filter((name) => !SCENARIOS.includes(name));
  if (unknown.length > 0) {
    console.error(`unknown scenario(s): ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
    process.exit(2);
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
const outDir = join(benchDir, '.out');
const profileDir = join(outDir, 'prof');
const resultsFile = args.out ?? join(benchDir, args.quick ? 'results.quick.json' : 'results.json');

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });

function versionOf(name) {
  try {
    return JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version;
  } catch {
    return undefined;
  }
}

function git(...gitArgs) {
  try {
    return execFileSync('git', gitArgs, { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

function machine() {
  const cpus = os.cpus();
  return {
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model,
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    loadavg: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

function runVitest() {
  const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
  const only = args.only.length === 1 ? args.only[0] : `{${args.only.join(',')}}`;
  const env = {
    ...process.env,
    BENCH_QUICK: args.quick ? '1' : '0',
    BENCH_OUT_DIR: outDir,
    BENCH_ONLY: only,
    ...(args.profile && { BENCH_PROFILE_DIR: profileDir }),
  };
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [vitest, 'run', '--config', join(benchDir, 'vitest.config.ts')],
      { cwd: root, env, stdio: 'inherit' },
    );
    child.on('exit', (code, signal) => resolve(signal ? 1 : (code ?? 1)));
  });
}

function cellText(value) {
  if (value === null || value === undefined) return '–';
  return String(value);
}

function printTable({ title, head, rows, notes }) {
  const cells = [head, ...rows].map((row) => row.map(cellText));
  const widths = head.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  const isNumeric = (text) => /^[-+]?[\d.,]+(×| ms)?$/.test(text) || text === '–';
  const line = (row) =>
    row
      .map((text, i) =>
        i > 0 && isNumeric(text) ? text.padStart(widths[i]) : text.padEnd(widths[i]),
      )
      .join('  ')
      .trimEnd();
  console.log(`\n${title}`);
  console.log(line(cells[0]));
  console.log(widths.map((w) => '─'.repeat(w)).join('  '));
  for (const row of cells.slice(1)) console.log(line(row));
  for (const note of notes ?? []) console.log(`  note: ${note}`);
}

/**
 * Where the CPU went, per layer, from the V8 profile of each scenario process:
 * self time (the function on top of the stack), so the layers add up.
 */
function summarizeProfiles() {
  if (!existsSync(profileDir)) return undefined;
  const layers = [
    ['this library (src/)', (url) => url.includes(srcPath)],
    ['MCP SDK client', (url) => url.includes('@modelcontextprotocol/client')],
    [
      'MCP servers (SDK + test/servers)',
      (url) => /@modelcontextprotocol\/(server|node|sdk)|\/test\/servers\/|@hono/.test(url),
    ],
    ['zod', (url) => url.includes('/zod/')],
    ['TanStack Query', (url) => url.includes('@tanstack/')],
    ['React', (url) => /\/react-dom\/|\/react\/|\/scheduler\//.test(url)],
    ['jsdom', (url) => /\/jsdom\/|\/cssstyle\/|\/nwsapi\//.test(url)],
    [
      'undici, node streams, http',
      (url) => /undici|node:internal\/(webstreams|streams|http)|node:_http|node:net/.test(url),
    ],
    ['garbage collector', (_url, name) => name === '(garbage collector)'],
  ];
  const summaries = [];
  for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8'));
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    const self = new Map(layers.map(([name]) => [name, 0]));
    let busy = 0;
    for (const [i, id] of profile.samples.entries()) {
      const { url, functionName } = nodes.get(id).callFrame;
      if (functionName === '(idle)' || functionName === '(program)') continue;
      const time = profile.timeDeltas[i] ?? 0;
      busy += time;
      const layer = layers.find(([, match]) => match(url, functionName));
      if (layer) self.set(layer[0], self.get(layer[0]) + time);
    }
    const ms = (time) => Math.round(time / 1000);
    const attributed = [...self.values()].reduce((a, b) => a + b, 0);
    summaries.push({
      file,
      busyMs: ms(busy),
      selfMs: {
        ...Object.fromEntries([...self].map(([name, t]) => [name, ms(t)])),
        other: ms(busy - attributed),
      },
    });
  }
  return summaries;
}

/** results.json is committed: write it the way `npm run lint` (biome) wants it. */
function formatLikeTheRepo(file) {
  try {
    const biome = require.resolve('@biomejs/biome/bin/biome');
    execFileSync(process.execPath, [biome, 'format', '--write', file], {
      cwd: root,
      stdio: 'ignore',
    });
  } catch {
    // No biome (or a file outside the repo): plain JSON.stringify output is fine.
  }
}

const started = Date.now();
const machineAtStart = machine();
console.log(
  `mcp-react-query bench (${args.quick ? 'quick' : 'full'}): ${args.only.join(', ')} on ${machineAtStart.cpus} × ${machineAtStart.cpuModel}, node ${machineAtStart.node}, load ${machineAtStart.loadavg.join(' ')}`,
);
const vitestCode = await runVitest();

const fragments = {};
const missing = [];
for (const name of args.only) {
  const file = join(outDir, `${name}.json`);
  if (existsSync(file)) fragments[name] = JSON.parse(readFileSync(file, 'utf8'));
  else missing.push(name);
}
const targets = Object.values(fragments).flatMap((f) => f.targets);
const ourMismatches = Object.values(fragments).reduce((sum, f) => sum + f.ourMismatches, 0);
const profile = args.profile ? summarizeProfiles() : undefined;
const results = {
  date: new Date().toISOString(),
  mode: args.quick ? 'quick' : 'full',
  durationMs: Date.now() - started,
  machine: { ...machineAtStart, loadavgAtEnd: machine().loadavg },
  git: {
    commit: git('rev-parse', 'HEAD'),
    dirty: (git('status', '--porcelain', 'src') ?? '') !== '',
  },
  versions: Object.fromEntries(
    [
      '@modelcontextprotocol/client',
      '@modelcontextprotocol/server',
      '@tanstack/react-query',
      'react',
      'react-dom',
      'jsdom',
      'vitest',
    ].map((name) => [name, versionOf(name)]),
  ),
  seed: Object.values(fragments)[0]?.seed,
  // Anything that changes what was measured, so a results file says how it was made.
  knobs: Object.fromEntries(
    [
      'BENCH_SEED',
      'BENCH_KINDS',
      'BENCH_SIZES',
      'BENCH_CHURN_EXTRA',
      'BENCH_TANSTACK_SCHEDULER',
    ].flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])),
  ),
  ourMismatches,
  targets,
  scenarios: fragments,
  ...(profile && { profile }),
};
writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
formatLikeTheRepo(resultsFile);

for (const name of args.only) for (const table of fragments[name]?.tables ?? []) printTable(table);
if (profile) {
  printTable({
    title:
      'CPU profile · self ms per layer (the function on top of the stack, so the layers add up)',
    head: ['process', 'busy ms', ...Object.keys(profile[0]?.selfMs ?? {})],
    rows: profile.map((p) => [p.file, p.busyMs, ...Object.values(p.selfMs)]),
  });
}
printTable({
  title: 'targets',
  head: ['scenario', 'era', 'what', 'target', 'actual', ''],
  rows: targets.map((t) => [
    t.scenario,
    t.kind,
    t.name,
    t.target,
    t.actual,
    t.pass ? 'met' : 'MISSED',
  ]),
});
const missed = targets.filter((t) => !t.pass);
if (missed.length > 0) {
  console.log(`\nmissed (${missed.length} of ${targets.length}):`);
  for (const t of missed) {
    console.log(`  ${t.scenario} ${t.kind}: ${t.name}: ${t.actual} against ${t.target}`);
    if (t.missedBy) console.log(`    by ${t.missedBy}`);
    console.log(`    why: ${t.why ?? 'no explanation recorded by the scenario'}`);
  }
} else {
  console.log(`\nevery target met (${targets.length})`);
}
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(`\nresults: ${resultsFile}  (${seconds} s)`);

if (missing.length > 0) console.error(`scenario(s) without results: ${missing.join(', ')}`);
if (ourMismatches > 0) console.error(`mcp-react-query left ${ourMismatches} stale component(s)`);
process.exit(vitestCode !== 0 || missing.length > 0 || ourMismatches > 0 ? 1 : 0);
