/**
 * Fails when the relative imports of `src/` (type-only ones included) form a cycle: a module
 * must be readable without first reading the one that imports it. Prints each cycle found.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)), 'src');
const IMPORT = /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/g;

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

function resolveImport(from, specifier) {
  const base = resolve(dirname(from), specifier.replace(/\.js$/, ''));
  for (const candidate of [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {}
  }
  return undefined;
}

const graph = new Map();
for (const file of files(ROOT)) {
  const targets = new Set();
  for (const [, specifier] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const target = resolveImport(file, specifier);
    if (target) targets.add(target);
  }
  graph.set(file, targets);
}

const cycles = [];
const state = new Map();
const stack = [];
function visit(file) {
  state.set(file, 'open');
  stack.push(file);
  for (const next of graph.get(file) ?? []) {
    if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
    else if (!state.has(next)) visit(next);
  }
  stack.pop();
  state.set(file, 'done');
}
for (const file of graph.keys()) if (!state.has(file)) visit(file);

if (cycles.length > 0) {
  for (const cycle of cycles)
    console.error(`cycle: ${cycle.map((f) => relative(ROOT, f)).join(' → ')}`);
  process.exit(1);
}
console.log(`no import cycles among ${graph.size} modules of src/`);
