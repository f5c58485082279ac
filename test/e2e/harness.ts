/**
 * Starts what a developer starts: `npm run playground`'s script (scripts/playground.mjs) as its
 * own process, and a real Chromium. A child process rather than `createServer()` in this one: the
 * demo plugin stays off under Vitest (its timers must not run in unit tests), and this is the
 * exact command of the npm script, scaled-mode flags included. By default with `--production`
 * (a built page under `vite preview`): a dev page is some 220 modules, each a request and a
 * transform, 3-4 s per page on two cores, and the tab tests open dozens of pages. The playground
 * suite runs the dev server itself, the README's command as it is.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('../../scripts/playground.mjs', import.meta.url));
const HOST = '127.0.0.1';
// A `--production` start builds the page first (a few seconds; more on a loaded machine).
const START_TIMEOUT_MS = 60_000;

/** What the shared notes list for Chromium on this machine (no sandbox, no GPU, no updates). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  // No HTTP/3 probing: every test talks plain HTTP/1.1 to loopback.
  '--disable-quic',
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
}

export interface Playground {
  /** e.g. http://127.0.0.1:41234/ */
  url: string;
  /** Everything the dev server printed so far. */
  output(): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** The environment of a developer's shell, not of a test worker. */
function devEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith('VITEST') || key === 'TEST') delete env[key];
  }
  if (env.NODE_ENV === 'test') delete env.NODE_ENV;
  return env;
}

// ANSI colour codes, in case the dev server thinks it has a terminal.
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function startOnce(port: number, flags: string[]): Promise<Playground> {
  const child = spawn(
    process.execPath,
    [
      SCRIPT,
      // The script's own options (scaled mode); everything else goes to Vite.
      ...flags,
      ...['--port', String(port), '--strictPort', '--host', HOST],
      // No HMR: someone editing src/ meanwhile must not swap the library under a running test.
      ...['--mode', 'frozen'],
    ],
    { cwd: ROOT, env: devEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString('utf8').replace(ANSI, '');
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const done = exited(child);
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await done;
    clearTimeout(timer);
  };
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new Error('the dev server did not print its URL')),
      START_TIMEOUT_MS,
    );
    const check = () => {
      const match = /Local:\s+(http:\/\/\S+)/.exec(output);
      if (match?.[1]) finish(undefined, match[1]);
    };
    const onExit = () => finish(new Error(`the dev server exited (${child.exitCode})`));
    function finish(error: Error | undefined, value?: string) {
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.off('exit', onExit);
      if (value) resolve(value);
      else reject(new Error(`${error?.message}:\n${output}`));
    }
    child.stdout?.on('data', check);
    child.once('exit', onExit);
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url, output: () => output, stop };
}

/**
 * `flags`: the script's options, e.g. `['--instances', '3', '--bus', 'redis']`; `--production`
 * unless `dev`.
 */
export async function startPlayground(
  flags: string[] = [],
  { dev = false }: { dev?: boolean } = {},
): Promise<Playground> {
  if (!dev) flags = ['--production', ...flags];
  try {
    return await startOnce(await freePort(), flags);
  } catch (error) {
    // Another process may have taken the port between probing and listening: try once more.
    if (!String(error).includes('already in use')) throw error;
    return startOnce(await freePort(), flags);
  }
}

export interface Started {
  playground: Playground;
  browser: Browser;
}

/** For one test file: the playground and Chromium start before its tests and stop after them. */
export function startedForFile(flags: string[] = [], options?: { dev?: boolean }): () => Started {
  let started: Partial<Started> = {};
  beforeAll(async () => {
    const [playground, browser] = await Promise.all([
      startPlayground(flags, options),
      launchBrowser(),
    ]);
    started = { playground, browser };
  });
  afterAll(async () => {
    await started.browser?.close();
    await started.playground?.stop();
  });
  return () => {
    const { playground, browser } = started;
    if (!playground || !browser) throw new Error('the playground or the browser did not start');
    return { playground, browser };
  };
}
