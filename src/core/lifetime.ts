/**
 * Lifetimes are AbortSignals. Whatever a session, a stream, a connection
 * attempt or a tab membership hands out (callbacks, timers, reads) is bound
 * to its signal here, so stale work is recognised in one place instead of
 * by a `disposed` flag checked at every call site.
 */

/** `fn`, while `signal` is not aborted; afterwards calls do nothing. */
export function whileAlive<A extends unknown[]>(
  signal: AbortSignal,
  fn: (...args: A) => void,
): (...args: A) => void {
  return (...args) => {
    if (!signal.aborted) fn(...args);
  };
}

/** `fn` after `ms`, unless `signal` aborts first. Returns what cancels it. */
export function delay(signal: AbortSignal, ms: number, fn: () => void): () => void {
  const timer = setTimeout(() => {
    signal.removeEventListener('abort', cancel);
    fn();
  }, ms);
  const cancel = () => clearTimeout(timer);
  onEnd(signal, cancel);
  return () => {
    cancel();
    signal.removeEventListener('abort', cancel);
  };
}

/** `fn` once `signal` aborts (at once, if it already has). */
export function onEnd(signal: AbortSignal, fn: () => void): void {
  if (signal.aborted) fn();
  else signal.addEventListener('abort', fn, { once: true });
}

/** A lifetime inside `parent`: it ends when the parent does, or by itself. */
export function within(parent: AbortSignal): AbortController {
  const child = new AbortController();
  const follow = () => child.abort(parent.reason);
  onEnd(parent, follow);
  child.signal.addEventListener('abort', () => parent.removeEventListener('abort', follow), {
    once: true,
  });
  return child;
}
