import { type ServerKind, startServer, type TestServer } from '../../test/servers';
import { eventually } from '../../test/support/wait';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One turn of the event loop, I/O included: lets sockets deliver what was written. */
export const ioTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export const uriOf = (index: number) => `bench://res/${index}`;

export async function startBenchServer(kind: ServerKind, uris: number): Promise<TestServer> {
  const server = await startServer(kind);
  for (let i = 0; i < uris; i++) {
    server.store.upsert({ uri: uriOf(i), name: `res-${i}`, mimeType: 'text/plain', text: 'v0' });
  }
  return server;
}

/** The text the server would answer for `uri` right now. */
export function serverText(server: TestServer, uri: string): string | undefined {
  return server.store.get(uri)?.text;
}

/**
 * Until `check()` is true (test/support/wait.ts's `eventually`, polling every `intervalMs`);
 * false if `timeoutMs` passed first: a benchmark records a timeout rather than failing on it.
 */
export async function until(
  check: () => boolean,
  timeoutMs: number,
  intervalMs = 5,
): Promise<boolean> {
  try {
    await eventually(check, { timeout: timeoutMs, interval: intervalMs });
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves once `probe()` has not changed for `quietMs` (or after `timeoutMs`): the benchmark's
 * one quiet period, where its protocol (bench/README.md) settles a phase before measuring it.
 */
export async function quiet(probe: () => unknown, quietMs = 100, timeoutMs = 30_000) {
  const deadline = performance.now() + timeoutMs;
  let last = JSON.stringify(probe());
  let since = performance.now();
  while (performance.now() < deadline) {
    await sleep(10);
    const now = JSON.stringify(probe());
    if (now !== last) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= quietMs) {
      return true;
    }
  }
  return false;
}

/** Full collections until the heap stops shrinking; needs node --expose-gc. */
export async function collectedHeap(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run node with --expose-gc (bench/vitest.config.ts sets execArgv)');
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    gc();
    // Finalizers, FinalizationRegistry callbacks and weak refs settle between passes.
    await sleep(20);
    const used = process.memoryUsage().heapUsed;
    const shrank = best - used > best * 0.002;
    best = Math.min(best, used);
    if (i >= 1 && !shrank) break;
  }
  return best;
}

export function elapsed(start: number): number {
  return Math.round(performance.now() - start);
}

/**
 * Undici's fetch sets the AbortSignal it is given to 1,500 listeners on every request, so a
 * contender with thousands of requests in flight on one signal (plain `useQuery` on the SDK's
 * transport, whose requests all carry the transport's signal) prints a
 * MaxListenersExceededWarning for every request past 1,500. Those are counted instead of
 * printed; every other warning prints as before. Returns the count so far.
 */
export function countAbortListenerWarnings(): () => number {
  let count = 0;
  const printers = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (
      warning.name === 'MaxListenersExceededWarning' &&
      warning.message.includes('[AbortSignal]')
    ) {
      count += 1;
      return;
    }
    for (const print of printers) print(warning);
  });
  return () => count;
}
