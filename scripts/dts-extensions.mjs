#!/usr/bin/env node
/**
 * Post-build step of `npm run build`: gives every relative import in the emitted `.d.ts` files
 * an explicit `.js` path. The sources import without extensions (moduleResolution Bundler), and
 * tsc copies those specifiers verbatim; a consumer on `moduleResolution: node16 | nodenext` —
 * typical for the Node code that imports `/core` or `/server` — cannot resolve them, and every
 * type behind them silently becomes `any` (attw: "Internal resolution error").
 *
 * Usage: node scripts/dts-extensions.mjs [dir]   (default: dist)
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dir = resolve(ROOT, process.argv[2] ?? 'dist');

// `from './x'`, `import('./x')`, `import './x'`: every way a declaration file names a module.
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.\.?\/[^'"]*)\2/g;

function* declarationFiles(at) {
  for (const name of readdirSync(at)) {
    const path = join(at, name);
    if (statSync(path).isDirectory()) yield* declarationFiles(path);
    else if (name.endsWith('.d.ts')) yield path;
  }
}

function withExtension(file, specifier) {
  if (/\.(c|m)?js$|\.json$/.test(specifier)) return specifier;
  const base = resolve(dirname(file), specifier);
  if (existsSync(`${base}.d.ts`)) return `${specifier}.js`;
  if (existsSync(join(base, 'index.d.ts'))) return `${specifier.replace(/\/$/, '')}/index.js`;
  throw new Error(`${file}: cannot resolve "${specifier}" to a declaration file`);
}

let files = 0;
let rewritten = 0;
for (const file of declarationFiles(dir)) {
  const before = readFileSync(file, 'utf8');
  const after = before.replace(SPECIFIER, (_match, lead, quote, specifier) => {
    const next = withExtension(file, specifier);
    if (next !== specifier) rewritten += 1;
    return `${lead}${quote}${next}${quote}`;
  });
  files += 1;
  if (after !== before) writeFileSync(file, after);
}
console.log(
  `dts-extensions: ${rewritten} relative imports in ${files} declaration files now end in .js`,
);
