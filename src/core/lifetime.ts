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
    forget();
    fn();
  }, ms);
  const cancel = () => clearTimeout(timer);
  const forget = onEnd(signal, cancel);
  return () => {
    cancel();
    forget();
  };
}

/**
 * What runs when each signal aborts. One listener per signal, however many
 * timers, reads and members a lifetime has (hundreds are normal: Node warns
 * past ten listeners on one signal).
 */
const endings = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * `fn` once `signal` aborts (at once, if it already has). Returns what
 * forgets it, for work that ends before its lifetime does.
 */
export function onEnd(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return () => {};
  }
  let fns = endings.get(signal);
  if (!fns) {
    const registered = new Set<() => void>();
    endings.set(signal, registered);
    signal.addEventListener(
      'abort',
      () => {
        endings.delete(signal);
        for (const end of registered) {
          // Each ending on its own, as separate listeners were: one that throws is reported
          // and the rest still run.
          try {
            end();
          } catch (error) {
            queueMicrotask(() => {
              throw error;
            });
          }
        }
      },
      { once: true },
    );
    fns = registered;
  }
  const entry = () => fn();
  fns.add(entry);
  return () => fns.delete(entry);
}

/** A lifetime inside `parent`: it ends when the parent does, or by itself. */
export function within(parent: AbortSignal): AbortController {
  const child = new AbortController();
  const forget = onEnd(parent, () => child.abort(parent.reason));
  child.signal.addEventListener('abort', forget, { once: true });
  return child;
}
