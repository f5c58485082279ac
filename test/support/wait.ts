/**
 * The one way the Node suites wait: for a condition, never for a time. (Where time itself is the
 * subject, a test fakes the timers; the browser suites use Playwright's own waits.)
 *
 * The timer and the clock are the real ones, taken when this module loads, so a test that fakes
 * timers can still wait for real I/O (a server's answer) between two `advanceTimersByTime`.
 */
const realSetTimeout = globalThis.setTimeout;
const now = performance.now.bind(performance);

type Wrapper = <T>(poll: () => Promise<T>) => Promise<T>;
let wrapper: Wrapper = (poll) => poll();

/**
 * Runs every `eventually` inside `wrap` (test/support/setup.ts: testing-library's async wrapper
 * under jsdom, so React renders what a server sends without act() warnings).
 */
export function wrapEventually(wrap: Wrapper): void {
  wrapper = wrap;
}

/**
 * Polls `check` until it stops throwing and returns something other than `false`; that value is
 * the result. After `timeout` ms it fails with the check's last error.
 */
export function eventually<T>(
  check: () => T | Promise<T>,
  { timeout = 5000, interval = 10 }: { timeout?: number; interval?: number } = {},
): Promise<Exclude<T, false>> {
  return wrapper(async () => {
    const deadline = now() + timeout;
    let lastError: unknown;
    for (;;) {
      try {
        const value = await check();
        if (value !== false) return value as Exclude<T, false>;
        lastError = new Error(`condition stayed false for ${timeout} ms`);
      } catch (error) {
        lastError = error;
      }
      if (now() >= deadline) throw lastError;
      await new Promise((resolve) => realSetTimeout(resolve, interval));
    }
  });
}

/** What `idle` needs of a QueryClient (query-core's and react-query's alike). */
interface Fetching {
  isFetching(): number;
}

/**
 * Resolves once no query of `queryClient` is fetching (a retry's delay counts as fetching).
 *
 * This is how a test says "and nothing more happens" without a quiet period. The library starts
 * a read synchronously from its cause (a notification handled, coverage gained), or in a
 * microtask for the one trailing read after a read settles; so once the client has seen every
 * cause (wait for the update counted, the acknowledgement, the text shown), a poll that finds it
 * idle finds it idle for good, and the server's counters are final.
 */
export function idle(queryClient: Fetching, options?: { timeout?: number }): Promise<void> {
  return eventually(() => {
    const fetching = queryClient.isFetching();
    if (fetching > 0) throw new Error(`${fetching} queries still fetching`);
  }, options);
}
