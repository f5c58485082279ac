import { onEnd } from './lifetime';

/**
 * At most `limit` at once; the others wait their turn in order, each until
 * its signal aborts. Requests wait here rather than in the HTTP client's
 * queue, where the SDK's timeout would be running, and a server is not sent
 * thousands of requests at once because a list brought thousands of rows.
 */
export class Turns {
  #free: number;
  readonly #line = new Set<() => void>();

  constructor(limit: number) {
    this.#free = limit;
  }

  /**
   * Takes a turn: undefined when one is free (no await, no microtask), else a
   * promise that resolves once it is this caller's turn, or rejects with the
   * signal's reason. `giveBack` ends the turn (once per take).
   */
  take(signal: AbortSignal): Promise<void> | undefined {
    if (this.#free > 0) {
      this.#free -= 1;
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const forget = onEnd(signal, () => {
        this.#line.delete(go);
        reject(signal.reason);
      });
      const go = () => {
        forget();
        resolve();
      };
      this.#line.add(go);
    });
  }

  giveBack(): void {
    const [next] = this.#line;
    if (!next) this.#free += 1;
    else {
      this.#line.delete(next);
      next();
    }
  }
}
