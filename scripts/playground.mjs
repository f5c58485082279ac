#!/usr/bin/env node
/**
 * `npm run playground [-- options]`: the playground's dev server.
 *
 *   npm run playground                                   one process, one port (as always)
 *   npm run playground -- --instances 3                  /mcp = round-robin over 3 instances, Redis bus
 *   npm run playground -- --instances 3 --bus memory     the same with an in-memory bus per instance
 *   npm run playground -- --production                   a production build, served by `vite preview`
 *   npm run playground -- --port 3000 --host             any other option goes to Vite
 *
 * Scaled mode settings reach the Vite plugin as MCP_PLAYGROUND_* environment variables (see
 * playground/server/scaleEnv.ts). With `--bus redis` the Redis is REDIS_URL if set, else one
 * answering on 127.0.0.1:6379, else a private `redis-server` this script starts on a free port
 * (no persistence) and stops on exit. Every run uses its own stream key, so a shared Redis is
 * safe to use. Plain JavaScript on purpose: nothing to compile before Vite can start.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VITE_BIN = join(
  dirname(createRequire(import.meta.url).resolve('vite/package.json')),
  'bin',
  'vite.js',
);
const HOST = '127.0.0.1';
const DEFAULT_INSTANCES = 3;
const MAX_INSTANCES = 16;
const BUSES = ['redis', 'memory'];
const REDIS_START_TIMEOUT_MS = 5000;

const USAGE = `Usage: npm run playground -- [--instances N] [--bus redis|memory] [vite options]

  --instances N   scale-out mode: /mcp is a round-robin proxy over N demo server
                  instances (1-${MAX_INSTANCES}); without it, one process as usual
  --bus KIND      how the instances share change events: redis (default) or memory
                  (one in-memory bus per instance: the failure mode, on purpose);
                  implies --instances ${DEFAULT_INSTANCES} if not given
  --production    build the page for production and serve it with \`vite preview\` (the demo
                  server is the same); what the browser tests run: one script per page
                  instead of a module per file
  REDIS_URL       (env) the Redis to use with --bus redis; otherwise one answering on
                  ${HOST}:6379, otherwise a private redis-server started on a free port

Anything else is passed to Vite (e.g. --port 3000 --host --open).`;

class UsageError extends Error {}

/** Splits our options from Vite's. Accepts `--flag value` and `--flag=value`. */
function parseArgs(argv) {
  const vite = [];
  let instances;
  let bus;
  let help = false;
  let production = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const [name, inline] = arg.startsWith('--') ? splitOnce(arg, '=') : [arg, undefined];
    if (name === '--instances' || name === '--bus') {
      const value = inline ?? argv[i + 1];
      if (inline === undefined) i += 1;
      if (value === undefined || value.startsWith('--'))
        throw new UsageError(`${name} needs a value`);
      if (name === '--bus') {
        if (!BUSES.includes(value))
          throw new UsageError(`--bus must be redis or memory, not "${value}"`);
        bus = value;
      } else {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 1 || n > MAX_INSTANCES) {
          throw new UsageError(
            `--instances must be an integer from 1 to ${MAX_INSTANCES}, not "${value}"`,
          );
        }
        instances = n;
      }
    } else if (arg === '--production') {
      production = true;
    } else {
      if (arg === '--help' || arg === '-h') help = true;
      vite.push(arg);
    }
  }
  const scaled = instances !== undefined || bus !== undefined;
  return {
    help,
    production,
    vite,
    scale: scaled ? { instances: instances ?? DEFAULT_INSTANCES, bus: bus ?? 'redis' } : undefined,
  };
}

function splitOnce(text, separator) {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

function findOnPath(command) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** PING over a raw socket; true only for +PONG (a Redis wanting AUTH does not count). */
function ping(host, port, timeoutMs = 300) {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    socket.connect(port, host, () => socket.write('PING\r\n'));
  });
}

/** One command over a raw socket (RESP), best effort: used to remove this run's stream key. */
function command(url, args, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = () => {
      socket.destroy();
      resolve();
    };
    socket.setTimeout(timeoutMs, done);
    socket.once('error', done);
    socket.once('data', done);
    const frame = `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
    socket.connect(Number(url.port || 6379), url.hostname, () => socket.write(frame));
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A private redis-server on a free loopback port, no persistence. */
async function startRedis(binary) {
  const port = await freePort();
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no'],
    // Its own process group: a Ctrl-C in the terminal must not stop it before Vite has closed
    // the instances' buses; this script stops it once Vite is gone.
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let output = '';
  let failed;
  child.once('error', (error) => {
    failed = error;
  });
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const deadline = Date.now() + REDIS_START_TIMEOUT_MS;
  while (!(await ping(HOST, port))) {
    if (failed) throw new Error(`cannot run ${binary}: ${failed.message}`);
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not start on ${HOST}:${port}:\n${output.slice(-2000)}`);
    }
    await sleep(20);
  }
  // Nobody reads its logs from here on; don't let a full pipe block it.
  child.stdout.resume();
  child.stderr.resume();
  return { port, child };
}

async function resolveRedis() {
  const given = process.env.REDIS_URL?.trim();
  if (given) {
    const url = new URL(given);
    // Only a plain, password-less Redis can be checked with a bare PING; the others are left
    // to the instances' clients, which report their own errors.
    const checkable = url.protocol === 'redis:' && !url.password;
    if (checkable && !(await ping(url.hostname, Number(url.port || 6379), 1000))) {
      throw new Error(`REDIS_URL=${given} does not answer PING`);
    }
    return { url: given, origin: 'REDIS_URL' };
  }
  if (await ping(HOST, 6379)) {
    return { url: `redis://${HOST}:6379`, origin: `found running on ${HOST}:6379` };
  }
  const binary = process.env.REDIS_SERVER ?? findOnPath('redis-server');
  if (!binary) {
    throw new Error(
      '--bus redis needs Redis: install redis-server (apt-get install redis-server), set REDIS_URL, or use --bus memory',
    );
  }
  const { port, child } = await startRedis(binary);
  return {
    url: `redis://${HOST}:${port}`,
    origin: `redis-server started by the playground on port ${port}`,
    child,
  };
}

function stopChild(child, timeoutMs = 3000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`playground: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) console.log(`${USAGE}\n\nVite's own options follow.\n`);

  const env = { ...process.env };
  // The flags alone decide the mode: a stray variable in the shell must not scale a plain run.
  for (const key of Object.keys(env)) if (key.startsWith('MCP_PLAYGROUND_')) delete env[key];
  let redisChild;
  let cleanup = async () => {};
  if (args.scale) {
    env.MCP_PLAYGROUND_INSTANCES = String(args.scale.instances);
    env.MCP_PLAYGROUND_BUS = args.scale.bus;
    if (args.scale.bus === 'redis') {
      let redis;
      try {
        redis = await resolveRedis();
      } catch (error) {
        console.error(`playground: ${error.message}`);
        return 1;
      }
      redisChild = redis.child;
      env.MCP_PLAYGROUND_REDIS_URL = redis.url;
      env.MCP_PLAYGROUND_REDIS_ORIGIN = redis.origin;
      env.MCP_PLAYGROUND_REDIS_CHANNEL = `mcp-playground:${process.pid}:${Date.now().toString(36)}`;
      // A Redis this script did not start keeps running: leave no stream key behind in it.
      if (!redis.child) {
        const url = new URL(redis.url);
        const key = env.MCP_PLAYGROUND_REDIS_CHANNEL;
        if (url.protocol === 'redis:' && !url.password) cleanup = () => command(url, ['DEL', key]);
      }
    }
  }
  // Whatever happens to this script, a redis-server it started does not outlive it.
  process.on('exit', () => {
    if (redisChild && redisChild.exitCode === null) redisChild.kill('SIGKILL');
  });

  const viteArgs = ['playground', ...args.vite];
  // The default loader warns at length about extensionless imports in the config's graph.
  if (!args.vite.some((arg) => arg === '--configLoader' || arg.startsWith('--configLoader='))) {
    viteArgs.push('--configLoader', 'runner');
  }
  let outDir;
  if (args.production) {
    // Built with the same environment (scaled mode is compiled into the page), into a
    // directory of this run's own, removed when it ends.
    outDir = mkdtempSync(join(tmpdir(), 'mcp-playground-'));
    process.on('exit', () => rmSync(outDir, { recursive: true, force: true }));
    const build = spawn(
      process.execPath,
      [
        VITE_BIN,
        'build',
        'playground',
        '--outDir',
        outDir,
        '--emptyOutDir',
        '--configLoader',
        'runner',
        '--logLevel',
        'warn',
      ],
      { cwd: ROOT, env, stdio: 'inherit' },
    );
    const built = await new Promise((resolve) =>
      build.once('exit', (exitCode) => resolve(exitCode)),
    );
    if (built !== 0) {
      await cleanup();
      await stopChild(redisChild);
      return built ?? 1;
    }
  }
  const vite = spawn(
    process.execPath,
    [VITE_BIN, ...(outDir ? ['preview', ...viteArgs, '--outDir', outDir] : viteArgs)],
    { cwd: ROOT, env, stdio: 'inherit' },
  );
  // A terminal's Ctrl-C reaches Vite by itself (same process group); a signal sent to this
  // process alone (a test harness, a process manager) is passed on. Either way this script
  // waits for Vite to exit, then stops Redis.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      if (vite.exitCode === null && vite.signalCode === null) vite.kill(signal);
    });
  }
  const [code, signal] = await new Promise((resolve) => {
    vite.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
  });
  await cleanup();
  await stopChild(redisChild);
  if (code !== null) return code;
  return signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
