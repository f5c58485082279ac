#!/usr/bin/env node
/**
 * `npm run check:node-floor`: the package's Node-side code (`mcp-react-query/core` against real
 * servers of both eras, `mcp-react-query/server`'s Redis event bus) on the lowest Node it claims,
 * 20.3.0 (`engines`), not on the toolchain's Node. `npm run build` first; redis-server on PATH.
 *
 * Node 20.3.0 comes from the `node` npm package, installed in test/node-floor/runtime/ (its own
 * package.json + lock, so its `node` binary does not shadow the system Node in npm scripts): this
 * runs `npm ci` there when the binary is missing, which needs the npm registry once.
 * NODE_FLOOR_BIN=/path/to/node overrides it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bin, CheckFailed, main, must, ROOT, seconds } from './lib/run.mjs';

const RUNTIME = join(ROOT, 'test', 'node-floor', 'runtime');
const FLOOR = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node.replace(
  /^>=\s*/,
  '',
);

function floorNode() {
  const override = process.env.NODE_FLOOR_BIN;
  const binary = override ?? join(RUNTIME, 'node_modules', '.bin', 'node');
  if (!override && !existsSync(binary)) {
    console.log(`node-floor: installing Node ${FLOOR} (npm ci in test/node-floor/runtime)…`);
    const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: RUNTIME,
      stdio: 'inherit',
    });
    if (install.status !== 0 || !existsSync(binary)) {
      throw new CheckFailed(
        `no Node binary at ${relative(ROOT, binary)} after npm ci: the \`node\` package installs it ` +
          'from an install script (allowScripts in its package.json); or set NODE_FLOOR_BIN.',
      );
    }
  }
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout?.trim();
  if (version !== `v${FLOOR}`) {
    throw new CheckFailed(`${binary} is ${version || 'not runnable'}, not the floor v${FLOOR}`);
  }
  return binary;
}

main(async () => {
  const started = performance.now();
  if (!existsSync(join(ROOT, 'dist', 'core.js')) || !existsSync(join(ROOT, 'dist', 'server.js'))) {
    throw new CheckFailed('no dist/: run `npm run build` first');
  }
  const binary = floorNode();
  await must(bin('vitest'), ['run', '--config', 'test/node-floor/vitest.config.ts'], {
    env: { ...process.env, NODE_FLOOR_BIN: binary },
  });
  console.log(`\nnode-floor: the Node-side entries pass on Node ${FLOOR} (${seconds(started)})`);
});
