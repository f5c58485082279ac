/**
 * Who owns the bytes of a production bundle: a Vite plugin that reads each output chunk's
 * source map, attributes every mapped byte of the minified code to the file it came from, and
 * groups files by the package under node_modules that holds them.
 *
 * Figures are gzip (level 9) of each group's bytes concatenated in bundle order. Compressed
 * alone, a group loses the context the rest of the bundle gave it, so the groups add up to a
 * little more than the total; each figure is what that code costs on its own.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]));

/** Source map `mappings` → per line, segments `[column, sourceIndex | undefined]`. */
function decodeMappings(mappings) {
  const lines = [];
  // Only the source index matters here; the other fields are deltas nothing below reads.
  let source = 0;
  for (const line of mappings.split(';')) {
    const segments = [];
    let column = 0;
    for (const segment of line.split(',')) {
      if (segment === '') continue;
      const fields = [];
      let value = 0;
      let shift = 0;
      for (const char of segment) {
        const digit = DIGIT.get(char);
        if (digit === undefined) throw new Error(`bad base64 in source map: ${char}`);
        value += (digit & 31) << shift;
        if (digit & 32) shift += 5;
        else {
          fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      column += fields[0];
      if (fields.length >= 4) {
        source += fields[1];
        segments.push([column, source]);
      } else segments.push([column, undefined]);
    }
    lines.push(segments);
  }
  return lines;
}

/** `.../node_modules/@scope/name/...` → `@scope/name`; undefined for the app's own files. */
export function packageOf(path) {
  const at = path.lastIndexOf('node_modules/');
  if (at === -1) return undefined;
  const parts = path.slice(at + 'node_modules/'.length).split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** A package and every package it depends on, as installed in `appRoot`. */
export function dependencyClosure(appRoot, roots) {
  const seen = new Set();
  const visit = (name) => {
    if (seen.has(name)) return;
    seen.add(name);
    const manifest = join(appRoot, 'node_modules', name, 'package.json');
    if (!existsSync(manifest)) return;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) visit(dep);
  };
  for (const root of roots) visit(root);
  return seen;
}

const gzip = (buffer) => gzipSync(buffer, { level: 9 }).length;

/**
 * The plugin. `classify(packageName | undefined)` names the group of a file; `onReport` gets
 * `{ total, groups: { [group]: { raw, gzip } }, packages: { [name]: raw }, modules: [id],
 * sources: { [group]: [[sourcePath | undefined, minifiedBytes]] } }` (a group's bytes in bundle
 * order, each piece with the source file the map gives for it).
 */
export function bundleSizePlugin({ classify, onReport }) {
  return {
    name: 'mcp-react-query:bundle-size',
    apply: 'build',
    generateBundle(options, bundle) {
      const pieces = new Map();
      const packages = {};
      const modules = [];
      let totalRaw = 0;
      let totalGzip = 0;
      for (const chunk of Object.values(bundle)) {
        if (chunk.type !== 'chunk') continue;
        if (!chunk.map) throw new Error('bundle-size: build.sourcemap must be on');
        modules.push(...Object.keys(chunk.modules));
        const code = chunk.code;
        totalRaw += Buffer.byteLength(code);
        totalGzip += gzip(Buffer.from(code));
        const dir = resolve(options.dir ?? '.', dirname(chunk.fileName));
        const sources = chunk.map.sources.map((source) => resolve(dir, source ?? ''));
        const lines = decodeMappings(chunk.map.mappings);
        const text = code.split('\n');
        const add = (group, key, bytes, path) => {
          if (!pieces.has(group)) pieces.set(group, []);
          pieces.get(group).push([path, bytes]);
          packages[key] = (packages[key] ?? 0) + Buffer.byteLength(bytes);
        };
        lines.forEach((segments, lineIndex) => {
          const line = text[lineIndex] ?? '';
          const first = segments[0]?.[0] ?? line.length;
          if (first > 0) add('unmapped', '(unmapped)', line.slice(0, first));
          segments.forEach(([column, source], index) => {
            const end = segments[index + 1]?.[0] ?? line.length;
            const path = source === undefined ? undefined : sources[source];
            const pkg = path === undefined ? undefined : packageOf(path);
            const group = path === undefined ? 'unmapped' : classify(pkg);
            add(
              group,
              pkg ?? (path === undefined ? '(unmapped)' : '(app)'),
              line.slice(column, end),
              path,
            );
          });
        });
      }
      const groups = {};
      const sources = {};
      for (const [group, parts] of pieces) {
        const buffer = Buffer.from(parts.map(([, bytes]) => bytes).join(''));
        groups[group] = { raw: buffer.length, gzip: gzip(buffer) };
        sources[group] = parts;
      }
      onReport({ total: { raw: totalRaw, gzip: totalGzip }, groups, packages, modules, sources });
    },
  };
}

/**
 * What each part of a group costs in context: gzip of the whole group minus gzip of the group
 * without that part's source files. Compressed together, code shares context, so a part's
 * share is smaller than its size compressed alone; removing the part's modules leaves its call
 * sites behind, so a share is a lower bound on what dropping that behaviour would save.
 * `parts` maps a name to a predicate on source paths; returns `[[name, bytes]]`, largest first.
 */
export function sharesOf(pieces, parts) {
  const whole = gzip(Buffer.from(pieces.map(([, bytes]) => bytes).join('')));
  return Object.entries(parts)
    .map(([name, owns]) => {
      const rest = pieces.filter(([path]) => path === undefined || !owns(path));
      return [name, whole - gzip(Buffer.from(rest.map(([, bytes]) => bytes).join('')))];
    })
    .sort(([, a], [, b]) => b - a);
}
