import { McpQueryError } from './errors';
import { delay, onEnd } from './lifetime';

/**
 * At most `limit` at once; the others wait their turn in order, each until
 * its signal aborts or it has waited `timeoutMs`. Requests wait here rather
 * than in the HTTP client's queue, where the SDK's timeout would be running,
 * and a server is not sent thousands of requests at once because a list
 * brought thousands of rows. A server that answers none of them fails the
 * ones waiting in line as its own timeout fails those in flight, not one
 * `limit` after another.
 */
export class Turns {
  readonly #limit: number;
  #free: number;
  readonly #line = new Set<() => void>();

  constructor(limit: number) {
    this.#limit = limit;
    this.#free = limit;
  }

  /**
   * Takes a turn: undefined when one is free (no await, no microtask), else a
   * promise that resolves once it is this caller's turn, or rejects with the
   * signal's reason, or with `TIMEOUT` after `timeoutMs` in line. `giveBack`
   * ends the turn (once per take that got one).
   */
  take(signal: AbortSignal, timeoutMs: number): Promise<void> | undefined {
    if (this.#free > 0) {
      this.#free -= 1;
      return undefined;
    }
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const leave = (error: unknown) => {
        this.#line.delete(go);
        forget();
        stopTimer();
        reject(error);
      };
      const forget = onEnd(signal, () => leave(signal.reason));
      const stopTimer = delay(signal, timeoutMs, () =>
        leave(
          new McpQueryError(
            'TIMEOUT',
            `not sent: ${this.#limit} requests were in flight for ${timeoutMs} ms`,
          ),
        ),
      );
      const go = () => {
        forget();
        stopTimer();
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
