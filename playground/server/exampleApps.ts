/**
 * The official MCP App example servers from npm (`@modelcontextprotocol/server-basic-react` and
 * `-basic-vanillajs`), run as published: their own CLI, Streamable HTTP over express with
 * `cors()`, stateless 2025 era. The CLI's only option is the `PORT` environment variable (it
 * listens on every interface, with no host option), so each gets a free port and the page
 * connects to it on 127.0.0.1, from another origin, as it would to any third-party server.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { EXAMPLE_APPS, type ExampleAppId } from '../shared/demo';

const PACKAGES: Record<ExampleAppId, string> = {
  'basic-react': '@modelcontextprotocol/server-basic-react',
  'basic-vanillajs': '@modelcontextprotocol/server-basic-vanillajs',
};
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 3000;

export interface ExampleServer {
  id: ExampleAppId;
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** The package's CLI (`bin`): its main export's directory holds `index.js`. */
function cliOf(id: ExampleAppId): string {
  return join(dirname(createRequire(import.meta.url).resolve(PACKAGES[id])), 'index.js');
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function startOnce(id: ExampleAppId): Promise<ExampleServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [cliOf(id)], {
    env: { ...process.env, PORT: String(port), NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Whatever ends this process, the example servers end with it.
  const orphanGuard = () => child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  let output = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString('utf8');
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const stop = async () => {
    process.off('exit', orphanGuard);
    await stopChild(child);
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('did not start in time')), START_TIMEOUT_MS);
      const check = () => {
        if (!output.includes('listening')) return;
        clearTimeout(timer);
        child.stdout?.off('data', check);
        resolve();
      };
      child.stdout?.on('data', check);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`exited (${code}): ${output.slice(-500)}`));
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  // Nobody reads its log from here on; a full pipe must not block it.
  child.stdout?.resume();
  child.stderr?.resume();
  return { id, url: `http://127.0.0.1:${port}/mcp`, stop };
}

/** Starts one example server; a port taken between probing and listening is tried once more. */
export async function startExampleServer(id: ExampleAppId): Promise<ExampleServer> {
  try {
    return await startOnce(id);
  } catch {
    return startOnce(id);
  }
}

export const EXAMPLE_IDS: ExampleAppId[] = EXAMPLE_APPS.map((app) => app.id);
