#!/usr/bin/env node
/**
 * `npm run check:package`: the tarball npm would publish, checked the way a consumer meets it.
 *
 *  - publint (strict): package.json fields, export map, files against what is in the tarball.
 *  - are-the-types-wrong, profile `esm-only`: the package is ESM only (no `require` condition,
 *    on purpose), so the CommonJS resolutions (node10, node16-from-CJS) are out of scope; the
 *    `node16` (from ESM) and `bundler` resolutions of every subpath must be clean.
 *  - The built entries: `'use client'` first in the React entries (`.`, `/apps`, `/devtools`) and
 *    absent from `/core`, `/auth`, `/tabs`, `/server` and `/apps/sandbox`, whose module graphs
 *    must not reach React; the `/devtools` no-op imports nothing.
 *  - Contents: only dist/, README, LICENSE, CHANGELOG; LICENSE is the license package.json
 *    names; CHANGELOG has a section for package.json's version.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { packPackage } from './lib/pack.mjs';
import { bin, CheckFailed, main, must, run, seconds } from './lib/run.mjs';

const CLIENT_ENTRIES = [
  './dist/index.js',
  './dist/servers.js',
  './dist/apps.js',
  './dist/devtools.js',
  './dist/devtools.noop.js',
];
const SERVER_SAFE_ENTRIES = [
  './dist/core.js',
  './dist/auth.js',
  './dist/tabs.js',
  './dist/server.js',
  // The sandbox proxy's page, answered by a server: nothing of React or of the browser.
  './dist/apps/sandbox.js',
];
const ALLOWED_FILES = /^(package\.json|README\.md|LICENSE|CHANGELOG\.md|dist\/.+)$/;

const failures = [];
const check = (ok, message) => {
  console.log(`${ok ? '✓' : '✗'} ${message}`);
  if (!ok) failures.push(message);
};

/** The relative imports of a built module (static and dynamic). */
function relativeImports(code) {
  const found = [];
  for (const m of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.[^"']+)["']/g)) {
    found.push(m[1]);
  }
  return found;
}

/** Bare module names a built module and everything it imports relatively reach. */
function reachedPackages(pkgDir, entry) {
  const seen = new Set();
  const packages = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(join(pkgDir, file), 'utf8');
    for (const m of code.matchAll(
      /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^."'][^"']*)["']/g,
    )) {
      packages.add(m[1]);
    }
    for (const spec of relativeImports(code)) visit(posix.join(posix.dirname(file), spec));
  };
  visit(posix.normalize(entry));
  return packages;
}

main(async () => {
  const started = performance.now();
  const packed = await packPackage();
  console.log(`tarball: ${packed.tarball}${packed.reused ? ' (unchanged, reused)' : ''}`);

  const publint = await run(bin('publint'), ['run', packed.tarball, '--strict']);
  check(publint.code === 0, 'publint --strict');

  const attw = await run(bin('attw'), [
    packed.tarball,
    '--profile',
    'esm-only',
    '--format',
    'table-flipped',
    '--no-color',
  ]);
  check(attw.code === 0, 'are-the-types-wrong --profile esm-only');

  const dir = mkdtempSync(join(tmpdir(), 'mcp-react-query-pkg-'));
  try {
    await must('tar', ['-xzf', packed.tarball, '-C', dir], { echo: false });
    const pkgDir = join(dir, 'package');
    const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));

    const stray = packed.files.filter((file) => !ALLOWED_FILES.test(file));
    check(
      stray.length === 0,
      `tarball holds only dist/ and the docs${stray.length ? `: ${stray.join(', ')}` : ''}`,
    );

    for (const entry of CLIENT_ENTRIES) {
      const first = readFileSync(join(pkgDir, entry), 'utf8').split('\n', 1)[0];
      check(/^["']use client["'];?$/.test(first), `${entry} starts with 'use client'`);
    }
    for (const entry of SERVER_SAFE_ENTRIES) {
      const code = readFileSync(join(pkgDir, entry), 'utf8');
      const react = [...reachedPackages(pkgDir, entry)].filter((p) =>
        /^react(\/|$)|^@tanstack\/react-query/.test(p),
      );
      check(!/["']use client["']/.test(code.split('\n', 1)[0]), `${entry} has no 'use client'`);
      check(
        react.length === 0,
        `${entry} never reaches React${react.length ? ` (imports ${react.join(', ')})` : ''}`,
      );
    }
    const noop = readFileSync(join(pkgDir, 'dist/devtools.noop.js'), 'utf8');
    check(
      relativeImports(noop).length === 0 &&
        reachedPackages(pkgDir, 'dist/devtools.noop.js').size === 0,
      'dist/devtools.noop.js imports nothing (a production bundle gets no panel code)',
    );
    const devtools = manifest.exports['./devtools'];
    check(
      Object.keys(devtools).join() === 'types,development,import' &&
        devtools.development !== devtools.import,
      './devtools: types, then development → panel, then import → no-op',
    );

    const license = readFileSync(join(pkgDir, 'LICENSE'), 'utf8');
    check(
      manifest.license === 'MIT' && license.startsWith('MIT License'),
      'LICENSE is the MIT text package.json names',
    );
    const changelog = readFileSync(join(pkgDir, 'CHANGELOG.md'), 'utf8');
    const heading = new RegExp(`^## \\[${manifest.version.replaceAll('.', '\\.')}\\]`, 'm');
    check(heading.test(changelog), `CHANGELOG.md has a section for ${manifest.version}`);
    check(packed.files.includes('README.md'), 'README.md is packed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  if (failures.length > 0) throw new CheckFailed(`${failures.length} package check(s) failed`);
  console.log(`\npackage checks passed (${seconds(started)})`);
});
