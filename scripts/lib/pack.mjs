/**
 * The package as npm would publish it: `npm run build`, then `npm pack` into .pack/. The
 * tarball is reused while nothing it is built from changed (several checks need it in one CI
 * run; each build costs seconds and empties dist/).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { must, ROOT } from './run.mjs';

export const PACK_DIR = join(ROOT, '.pack');
const STAMP = join(PACK_DIR, 'stamp.json');

// Everything the tarball is made of or built from.
const INPUTS = [
  'src',
  'package.json',
  'vite.config.ts',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/dts-extensions.mjs',
  'README.md',
  'LICENSE',
  'CHANGELOG.md',
];

function* files(path) {
  if (!existsSync(path)) return;
  if (statSync(path).isDirectory()) {
    for (const name of readdirSync(path).sort()) yield* files(join(path, name));
  } else yield path;
}

function inputsHash() {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    for (const file of files(join(ROOT, input))) {
      hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
    }
  }
  return hash.digest('hex');
}

/** Resolves with `{ tarball, sha256, files, reused }`. */
export async function packPackage({ log = console.log } = {}) {
  const inputs = inputsHash();
  if (existsSync(STAMP)) {
    const stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
    if (stamp.inputs === inputs && existsSync(stamp.tarball)) return { ...stamp, reused: true };
  }
  log('packing: npm run build && npm pack');
  await must('npm', ['run', 'build', '--silent'], { echo: false });
  mkdirSync(PACK_DIR, { recursive: true });
  // --ignore-scripts: prepack would build a second time.
  const out = await must(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', PACK_DIR],
    { echo: false },
  );
  const [info] = JSON.parse(out.slice(out.indexOf('[')));
  const tarball = join(PACK_DIR, info.filename);
  const sha256 = createHash('sha256').update(readFileSync(tarball)).digest('hex');
  const stamp = { inputs, tarball, sha256, files: info.files.map((f) => f.path) };
  writeFileSync(STAMP, `${JSON.stringify(stamp, null, 2)}\n`);
  return { ...stamp, reused: false };
}
