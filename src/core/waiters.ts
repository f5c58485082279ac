import { systemClock } from './clock';

interface Waiter {
  ready(): boolean;
  settle(): void;
}

/**
 * Promises that settle once a condition holds, re-checked whenever the
 * owner says something changed, and bounded by a timeout and a signal. All
 * of them settle (never reject) when the owner releases them: a waiter only
 * ever delays, it never fails what waited.
 *
 * A wait with `maxMs` counts its timeout from the latest `progress()` (the
 * owner saw its kind of work advance, if not this waiter's), up to `maxMs`
 * in all, by `now` (the system clock unless given). While `held()`, the
 * cap does not run: the owner is still asking for what the waiter waits for
 * (in its own line or in flight), and that request's outcome will end the
 * wait; progress alone bounds it meanwhile.
 */
export class Waiters {
  readonly #waiting = new Set<Waiter>();
  readonly #now: () => number;
  #progressAt = Number.NEGATIVE_INFINITY;

  constructor({ now = systemClock.now }: { now?: () => number } = {}) {
    this.#now = now;
  }

  wait(
    ready: () => boolean,
    {
      timeoutMs,
      maxMs,
      signal,
      held,
    }: { timeoutMs: number; maxMs?: number; signal?: AbortSignal; held?: () => boolean },
  ): Promise<void> {
    return new Promise<void>((resolve) => {
      const startedAt = this.#now();
      let timer: ReturnType<typeof setTimeout>;
      const waiter: Waiter = {
        ready,
        settle: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', waiter.settle);
          this.#waiting.delete(waiter);
          resolve();
        },
      };
      // Re-armed lazily: progress costs nothing per waiter until its timer fires.
      const due = () => {
        if (maxMs === undefined) return waiter.settle();
        const now = this.#now();
        const until = Math.min(
          Math.max(startedAt, this.#progressAt) + timeoutMs,
          (held?.() ? now : startedAt) + maxMs,
        );
        if (until <= now) waiter.settle();
        else timer = setTimeout(due, until - now);
      };
      timer = setTimeout(due, Math.min(timeoutMs, maxMs ?? timeoutMs));
      signal?.addEventListener('abort', waiter.settle);
      this.#waiting.add(waiter);
      if (signal?.aborted) waiter.settle();
    });
  }

  /** What the waiters wait for advanced: waits with a cap start their timeout again. */
  progress(): void {
    this.#progressAt = this.#now();
  }

  recheck(): void {
    for (const waiter of [...this.#waiting]) if (waiter.ready()) waiter.settle();
  }

  releaseAll(): void {
    for (const waiter of [...this.#waiting]) waiter.settle();
  }
}

/**
 * Waits for `work`, but no longer than `graceMs`: past that `cutOff` runs
 * (to make the work end) and the wait goes on until it has.
 */
export async function settleWithin(
  work: Promise<void>,
  graceMs: number,
  cutOff: () => void,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      cutOff();
      resolve();
    }, graceMs);
  });
  await Promise.race([work, late]);
  clearTimeout(timer);
  await work;
}
