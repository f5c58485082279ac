interface Waiter {
  ready(): boolean;
  settle(): void;
}

/**
 * Promises that settle once a condition holds, re-checked whenever the
 * owner says something changed, and bounded by a timeout and a signal. All
 * of them settle (never reject) when the owner releases them: a waiter only
 * ever delays, it never fails what waited.
 */
export class Waiters {
  readonly #waiting = new Set<Waiter>();

  wait(
    ready: () => boolean,
    { timeoutMs, signal }: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<void> {
    return new Promise<void>((resolve) => {
      const waiter: Waiter = {
        ready,
        settle: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', waiter.settle);
          this.#waiting.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.settle, timeoutMs);
      signal?.addEventListener('abort', waiter.settle);
      this.#waiting.add(waiter);
      if (signal?.aborted) waiter.settle();
    });
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
