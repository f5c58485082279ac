/** Polls `check` until it stops throwing (or returns truthy), like testing-library's waitFor. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  { timeout = 5000, interval = 10 }: { timeout?: number; interval?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeout;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== false) return value;
      lastError = new Error('condition stayed false');
    } catch (error) {
      lastError = error;
    }
    await sleep(interval);
  }
  throw lastError;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves after nothing has changed `probe()` for `quietMs`. */
export async function settled(probe: () => unknown, quietMs = 150, timeout = 5000): Promise<void> {
  const deadline = Date.now() + timeout;
  let last = JSON.stringify(probe());
  let since = Date.now();
  while (Date.now() < deadline) {
    await sleep(10);
    const now = JSON.stringify(probe());
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) {
      return;
    }
  }
}
