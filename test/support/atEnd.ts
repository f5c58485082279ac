/** What a test started, closed after it (newest first): call `closeAll()` from `afterEach`. */
const cleanups: Array<() => unknown> = [];

/** Close what the tests started, newest first. */
export async function closeAll(): Promise<void> {
  for (const close of cleanups.splice(0).reverse()) await close();
}

/** Run `close` at the end of the test (before what was started earlier). */
export function atEnd(close: () => unknown): void {
  cleanups.push(close);
}
