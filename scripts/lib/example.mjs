/**
 * The consumer app (examples/vite-react) as a new user has it: a copy outside the repository
 * (so nothing resolves through the repository's node_modules), its own locked dependencies,
 * and mcp-react-query installed from the packed tarball with `npm install <tarball>`.
 *
 * The copy lives in the temp directory under a name derived from this checkout's path, and is
 * reused: `npm ci` only when the example's package.json or lock changed, `npm install` of the
 * tarball only when the tarball changed.
 */
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundleSizePlugin, dependencyClosure } from './bundleSize.mjs';
import { CheckFailed, must, ROOT, run } from './run.mjs';

export const EXAMPLE_SRC = join(ROOT, 'examples/vite-react');
const TYPE_TESTS = join(ROOT, 'test/types');
const sha = (data) => createHash('sha256').update(data).digest('hex');

export const APP_DIR =
  process.env.MCP_EXAMPLE_DIR ??
  join(tmpdir(), `mcp-react-query-example-${sha(ROOT).slice(0, 10)}`);
const STAMP = join(APP_DIR, '.install-stamp.json');

/** Strings only the devtools panel contains (its aria-label and its toggle button's text). */
export const DEVTOOLS_MARKERS = ['MCP devtools', 'MCP · '];

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

/** Copies the example's sources (not its node_modules or builds) and the type tests in. */
function syncSources() {
  mkdirSync(APP_DIR, { recursive: true });
  for (const name of readdirSync(APP_DIR)) {
    if (name !== 'node_modules' && name !== '.install-stamp.json') {
      rmSync(join(APP_DIR, name), { recursive: true, force: true });
    }
  }
  for (const name of readdirSync(EXAMPLE_SRC)) {
    if (name === 'node_modules' || name.startsWith('dist')) continue;
    cpSync(join(EXAMPLE_SRC, name), join(APP_DIR, name), { recursive: true });
  }
  // The package's type tests, against the installed .d.ts (the app's tsconfig includes src/).
  const target = join(APP_DIR, 'src/type-tests');
  mkdirSync(target, { recursive: true });
  for (const name of readdirSync(TYPE_TESTS)) {
    if (/\.test-d\.tsx?$/.test(name)) cpSync(join(TYPE_TESTS, name), join(target, name));
  }
}

/** The installed package must be byte for byte the tarball (npm caches file: tarballs). */
async function verifyInstalled(tarball) {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-react-query-tgz-'));
  try {
    await must('tar', ['-xzf', tarball, '-C', dir], { echo: false });
    const packed = join(dir, 'package');
    const installed = join(APP_DIR, 'node_modules/mcp-react-query');
    for (const file of walk(packed)) {
      const other = join(installed, relative(packed, file));
      if (!existsSync(other) || !readFileSync(other).equals(readFileSync(file))) {
        throw new CheckFailed(
          `node_modules/mcp-react-query differs from the tarball at ${relative(packed, file)}`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function prepareApp({ tarball, sha256 }, { log = console.log } = {}) {
  syncSources();
  const lock = sha(
    ['package.json', 'package-lock.json'].map((f) => readFileSync(join(EXAMPLE_SRC, f))).join('\0'),
  );
  const stamp = existsSync(STAMP) ? JSON.parse(readFileSync(STAMP, 'utf8')) : {};
  const npm = (args) =>
    must('npm', [...args, '--no-audit', '--no-fund'], { cwd: APP_DIR, echo: false });
  if (stamp.lock !== lock || !existsSync(join(APP_DIR, 'node_modules'))) {
    log(`npm ci (the example's own lock) in ${APP_DIR}`);
    await npm(['ci']);
    stamp.lock = lock;
    stamp.tarball = undefined;
  }
  if (stamp.tarball !== sha256) {
    log(`npm install ${relative(ROOT, tarball)}`);
    // As `npm install mcp-react-query` would, but from the tarball; the peers are already there.
    await npm(['install', tarball]);
    stamp.tarball = sha256;
  }
  await verifyInstalled(tarball);
  writeFileSync(STAMP, JSON.stringify(stamp));
  return APP_DIR;
}

export const appBin = (name) => join(APP_DIR, 'node_modules/.bin', name);

/**
 * `tsc` over the app's two configs, as its `typecheck` script does (skipLibCheck false in both):
 * the browser code with the package's type tests and every .d.ts it reaches, then
 * vite.config.ts. Resolves with `[{ config, code, output }]`.
 */
export async function typecheckApp() {
  const results = [];
  for (const config of ['tsconfig.json', 'tsconfig.node.json']) {
    const result = await run(appBin('tsc'), ['-p', config, '--pretty', 'false'], {
      cwd: APP_DIR,
      echo: false,
    });
    results.push({ config, ...result });
  }
  return results;
}

/** Size groups: the package itself, and who else is in the bundle. */
function classifier() {
  const sdk = dependencyClosure(APP_DIR, ['@modelcontextprotocol/client']);
  return (pkg) => {
    if (pkg === undefined) return 'app';
    if (pkg === 'mcp-react-query') return 'mcp-react-query';
    if (pkg.startsWith('@tanstack/')) return 'TanStack Query';
    if (['react', 'react-dom', 'scheduler'].includes(pkg)) return 'React';
    if (sdk.has(pkg)) return 'MCP SDK (+ its deps)';
    return 'other';
  };
}

/**
 * The app with one `<McpApp>` import added to its entry (kept alive, so it is not shaken out):
 * what `mcp-react-query/apps` costs an app that already uses the main entry. Its peer
 * `@modelcontextprotocol/ext-apps` stays external (the example does not install it), so the
 * package's own code is all that is added.
 */
function withAppsEntry() {
  return {
    name: 'mcp-react-query:with-apps',
    enforce: 'pre',
    transform(code, id) {
      if (!id.endsWith('/src/main.tsx')) return undefined;
      const added = `\nimport { McpApp as __McpApp } from 'mcp-react-query/apps';\nglobalThis.__mcpApp = __McpApp;\n`;
      // Appended: nothing of the file moves, so its source map stays right (`map: null`).
      return { code: `${code}${added}`, map: null };
    },
  };
}

/**
 * The production build (`vite build`, the app's own config), in this process so the size plugin
 * can sit beside the app's plugins. Resolves with the size report. `withApps`: the same app with
 * `mcp-react-query/apps` imported too (into dist-apps/).
 */
export async function buildApp({ withApps = false } = {}) {
  const { build } = await import(
    pathToFileURL(join(APP_DIR, 'node_modules/vite/dist/node/index.js')).href
  );
  let report;
  await build({
    root: APP_DIR,
    logLevel: 'warn',
    // Hidden: the maps are for the measurement; the code is byte for byte the normal build's.
    build: {
      sourcemap: 'hidden',
      outDir: withApps ? 'dist-apps' : 'dist',
      emptyOutDir: true,
      // One page, one chunk, mostly SDK: Vite's "over 500 kB" hint is noise next to the report.
      chunkSizeWarningLimit: 2000,
      ...(withApps && {
        rolldownOptions: { external: [/^@modelcontextprotocol\/ext-apps(\/|$)/] },
      }),
    },
    plugins: [
      ...(withApps ? [withAppsEntry()] : []),
      bundleSizePlugin({ classify: classifier(), onReport: (r) => (report = r) }),
    ],
  });
  if (!report) throw new Error('the size plugin did not run');
  return report;
}

const SERVERS_PROBE = join(ROOT, 'scripts/lib/servers-probe');

/**
 * A production build of scripts/lib/servers-probe (a host using `mcp-react-query/servers`) in
 * the app's directory, against the same installed package. Resolves with the size report.
 */
export async function buildServersProbe() {
  const dir = join(APP_DIR, 'servers-probe');
  rmSync(dir, { recursive: true, force: true });
  cpSync(SERVERS_PROBE, dir, { recursive: true });
  const { build } = await import(
    pathToFileURL(join(APP_DIR, 'node_modules/vite/dist/node/index.js')).href
  );
  let report;
  await build({
    root: dir,
    configFile: join(APP_DIR, 'vite.config.ts'),
    logLevel: 'warn',
    build: {
      sourcemap: 'hidden',
      outDir: join(APP_DIR, 'dist-servers'),
      emptyOutDir: true,
      chunkSizeWarningLimit: 2000,
    },
    plugins: [bundleSizePlugin({ classify: classifier(), onReport: (r) => (report = r) })],
  });
  if (!report) throw new Error('the size plugin did not run');
  return report;
}

/** A development-condition build (NODE_ENV=development): the devtools must be in it. */
export function buildAppForDevelopment() {
  return must(
    appBin('vite'),
    ['build', '--outDir', 'dist-dev', '--emptyOutDir', '--logLevel', 'warn'],
    {
      cwd: APP_DIR,
      env: { ...process.env, NODE_ENV: 'development' },
      echo: false,
    },
  );
}

/** Which devtools markers the built JavaScript in `dir` contains. */
export function devtoolsMarkersIn(dir) {
  const code = [...walk(join(APP_DIR, dir))]
    .filter((file) => file.endsWith('.js'))
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
  return DEVTOOLS_MARKERS.filter((marker) => code.includes(marker));
}

const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;

/** The size table, largest group first. */
export function formatReport(report) {
  const rows = Object.entries(report.groups).sort(([, a], [, b]) => b.gzip - a.gzip);
  const width = Math.max(...rows.map(([name]) => name.length), 'total bundle'.length);
  const line = (name, raw, gzip) =>
    `  ${name.padEnd(width)}  ${kB(gzip).padStart(8)} gzip  ${kB(raw).padStart(9)} min`;
  return [
    line('total bundle', report.total.raw, report.total.gzip),
    ...rows.map(([name, size]) => line(name, size.raw, size.gzip)),
  ].join('\n');
}
