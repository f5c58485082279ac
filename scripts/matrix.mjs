#!/usr/bin/env node
/**
 * `npm run check:matrix [-- --row lowest|newest] [-- --with pkg@version ...] [-- --keep]`:
 * the peer ranges in package.json, tested at both ends.
 *
 * Per row, in a temporary copy of the repository (its files plus a copy of node_modules, which
 * `npm ci` just made): `npm install` of the row's versions into the copy, then
 *  - the consumer app's `tsc` (skipLibCheck false, with the package's type tests) against the
 *    packed package's .d.ts and the row's @types, and
 *  - the React integration tests (test/integration/react + features, real servers built on the
 *    row's @modelcontextprotocol/server, both eras), OAuth through the row's SDK client (sign-in,
 *    refresh, identity), the Redis event bus tests (the optional
 *    `redis` peer; needs redis-server) and the scale-out tests (`mcp-react-query/server` inside
 *    the row's `createMcpHandler`).
 *
 * `lowest` pins what the peer ranges claim as their floor; `newest` takes the newest release
 * of the newest major the ranges allow, and `newest-of-older-majors` the newest React 18 and
 * redis 5 (the ranges that span two majors), so every range is tested at both ends and a new
 * release that breaks the package fails CI before a user meets it. The versions that actually ran are printed from the installed packages.
 * `--with` adds or overrides packages of the selected rows (e.g. to probe a lower floor).
 */
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { packPackage } from './lib/pack.mjs';
import { CheckFailed, main, must, ROOT, run, seconds } from './lib/run.mjs';

export const ROWS = {
  lowest: {
    react: '18.3.0',
    'react-dom': '18.3.0',
    '@types/react': '18.3.32',
    '@types/react-dom': '18.3.7',
    // 5.66.0 added QueryFunctionContext.client, which the query function routes by.
    '@tanstack/react-query': '5.66.0',
    '@tanstack/query-core': '5.66.0',
    '@modelcontextprotocol/client': '2.0.0',
    '@modelcontextprotocol/server': '2.4.0',
    // 5.0.0 lacks RESP_TYPES, which the bus tests use to check a Buffer-mapping client.
    redis: '5.1.0',
  },
  newest: {
    react: '^19',
    'react-dom': '^19',
    '@types/react': '^19',
    '@types/react-dom': '^19',
    '@tanstack/react-query': '^5',
    '@tanstack/query-core': '^5',
    '@modelcontextprotocol/client': '^2',
    '@modelcontextprotocol/server': '^2',
    redis: '^6',
  },
  // The ranges that span two majors end twice: React 18 and redis 5 at their newest.
  'newest-of-older-majors': {
    react: '^18',
    'react-dom': '^18',
    '@types/react': '^18',
    '@types/react-dom': '^18',
    '@tanstack/react-query': '^5',
    '@tanstack/query-core': '^5',
    '@modelcontextprotocol/client': '^2',
    '@modelcontextprotocol/server': '^2',
    redis: '^5',
  },
};

// Colour codes in the test runner's output, in case it thinks it has a terminal.
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/**
 * Dev dependencies a row does not run, which a row's copy drops before installing: their own
 * ranges would not hold on a row. The persist client (playground only) wants a newer TanStack
 * Query; the third-party MCP servers the playground and other suites host (the MCP App
 * examples, server-everything) bring their own React 19 and SDK server package, so a row would
 * hold two of each.
 */
const PLAYGROUND_ONLY = [
  '@tanstack/react-query-persist-client',
  '@modelcontextprotocol/server-basic-react',
  '@modelcontextprotocol/server-basic-vanillajs',
  '@modelcontextprotocol/server-everything',
];

const TESTS = [
  'test/integration/react.test.tsx',
  'test/integration/features.test.tsx',
  // OAuth through the row's SDK client: its refresh path differs by version (2.4.0 names the
  // tokens it refreshes, scopeForRefresh; earlier ones do not), and a refresh must work on all.
  'test/integration/auth.test.tsx',
  'test/integration/authBoundaries.test.tsx',
  'test/scale/redisEventBus.test.ts',
  // mcp-react-query/server inside @modelcontextprotocol/server's createMcpHandler: scale-out,
  // events lost to trimming (a gap ends the attached streams), and shutdown in either order.
  'test/scale/scaleOut.test.ts',
  'test/scale/gap.test.ts',
  'test/scale/shutdown.test.ts',
];

function parseArgs(argv) {
  const rows = [];
  const extra = {};
  let keep = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--keep') keep = true;
    else if (arg === '--row') rows.push(argv[++i]);
    else if (arg === '--with') {
      const spec = argv[++i] ?? '';
      const at = spec.lastIndexOf('@');
      if (at <= 0) throw new CheckFailed(`--with wants pkg@version, not "${spec}"`);
      extra[spec.slice(0, at)] = spec.slice(at + 1);
    } else throw new CheckFailed(`unknown option ${arg}`);
  }
  for (const row of rows) if (!ROWS[row]) throw new CheckFailed(`no row "${row}"`);
  return { rows: rows.length ? rows : Object.keys(ROWS), extra, keep };
}

/** The repository's files as git sees them (tracked, plus new files not ignored). */
async function copyRepository(to) {
  const list = await must('git', ['ls-files', '-co', '--exclude-standard', '-z'], { echo: false });
  for (const file of list.split('\0').filter(Boolean)) {
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(join(ROOT, file), join(to, file));
  }
  // cp -a keeps .bin's relative links; several times faster than another `npm ci`.
  await must('cp', ['-a', join(ROOT, 'node_modules'), join(to, 'node_modules')], { echo: false });
}

const installedVersion = (dir, pkg) =>
  JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8')).version;

/** Every version of `names` anywhere in the tree: a second copy would test the wrong one. */
async function duplicates(dir, names) {
  const out = await must('npm', ['ls', ...names, '--all', '--json'], { cwd: dir, echo: false });
  const seen = new Map();
  const walk = (deps) => {
    for (const [name, info] of Object.entries(deps ?? {})) {
      if (names.includes(name) && info.version) {
        if (!seen.has(name)) seen.set(name, new Set());
        seen.get(name).add(info.version);
      }
      walk(info.dependencies);
    }
  };
  walk(JSON.parse(out).dependencies);
  return [...seen]
    .filter(([, versions]) => versions.size > 1)
    .map(([n, v]) => `${n}: ${[...v].join(', ')}`);
}

async function runRow(name, specs, tarball, keep) {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), `mcp-react-query-matrix-${name}-`));
  const result = { row: name, versions: {}, typecheck: 'not run', tests: 'not run' };
  try {
    await copyRepository(dir);
    const manifestPath = join(dir, 'package.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    for (const pkg of PLAYGROUND_ONLY) delete manifest.devDependencies[pkg];
    writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    const install = Object.entries(specs).map(([pkg, version]) => `${pkg}@${version}`);
    console.log(`  npm install ${install.join(' ')}`);
    // Saved into the copy's package.json, so its tree is consistent (npm ls) and a range spec
    // takes the newest matching release rather than what the lock holds.
    await must('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...install], {
      cwd: dir,
      echo: false,
    });
    for (const pkg of Object.keys(specs)) result.versions[pkg] = installedVersion(dir, pkg);
    console.log(
      `  installed: ${Object.entries(result.versions)
        .map(([p, v]) => `${p} ${v}`)
        .join(', ')}`,
    );
    const doubled = await duplicates(dir, Object.keys(specs));
    if (doubled.length > 0)
      throw new CheckFailed(`more than one version installed: ${doubled.join('; ')}`);

    // The consumer app, resolving everything but the package from the row's node_modules.
    const app = join(dir, 'examples/vite-react');
    mkdirSync(join(app, 'node_modules'), { recursive: true });
    await must('tar', ['-xzf', tarball, '-C', join(app, 'node_modules')], { echo: false });
    cpSync(join(app, 'node_modules/package'), join(app, 'node_modules/mcp-react-query'), {
      recursive: true,
    });
    rmSync(join(app, 'node_modules/package'), { recursive: true });
    mkdirSync(join(app, 'src/type-tests'));
    for (const file of readdirSync(join(dir, 'test/types')).filter((f) =>
      /\.test-d\.tsx?$/.test(f),
    )) {
      cpSync(join(dir, 'test/types', file), join(app, 'src/type-tests', file));
    }
    const tsc = await run(
      join(dir, 'node_modules/.bin/tsc'),
      ['-p', join(app, 'tsconfig.json'), '--pretty', 'false'],
      {
        cwd: app,
        echo: false,
      },
    );
    result.typecheck = tsc.code === 0 ? 'pass' : 'FAIL';
    console.log(`  consumer app tsc (skipLibCheck false, type tests): ${result.typecheck}`);
    if (tsc.code !== 0) console.log(tsc.output);

    // Quiet unless it fails: the suites log expected errors (hooks outside a provider, …).
    const tests = await run(join(dir, 'node_modules/.bin/vitest'), ['run', ...TESTS], {
      cwd: dir,
      echo: false,
    });
    if (tests.code !== 0) console.log(tests.output);
    const plain = tests.output.replace(ANSI, '');
    const summary = [...plain.matchAll(/^\s*Tests\s+(\d.*)$/gm)].at(-1)?.[1] ?? '';
    result.tests = tests.code === 0 ? `pass (${summary.trim()})` : `FAIL (${summary.trim()})`;
    // A skipped Redis suite (no redis-server) would leave the redis range untested.
    if (/skipped/.test(summary)) result.tests = `FAIL (skipped tests: ${summary.trim()})`;
    console.log(`  ${TESTS.join(' ')}: ${result.tests}`);
  } finally {
    if (keep) console.log(`  kept: ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  result.time = seconds(started);
  return result;
}

main(async () => {
  const { rows, extra, keep } = parseArgs(process.argv.slice(2));
  const started = performance.now();
  // The tarball does not depend on the peers' versions: one for every row.
  const { tarball } = await packPackage();
  const results = [];
  for (const name of rows) {
    console.log(`\n▸ matrix row "${name}"`);
    results.push(await runRow(name, { ...ROWS[name], ...extra }, tarball, keep));
  }
  console.log('\nmatrix:');
  for (const r of results) {
    console.log(`  ${r.row} (${r.time}): typecheck ${r.typecheck}; tests ${r.tests}`);
    console.log(
      `    ${Object.entries(r.versions)
        .map(([p, v]) => `${p}@${v}`)
        .join(' ')}`,
    );
  }
  const failed = results.filter((r) => r.typecheck !== 'pass' || !r.tests.startsWith('pass'));
  if (failed.length > 0)
    throw new CheckFailed(`matrix rows failed: ${failed.map((r) => r.row).join(', ')}`);
  console.log(`\nmatrix passed (${seconds(started)})`);
});
