import type { Clock } from './clock';
import { delay } from './lifetime';
import { unsubscribesAtOnce } from './subscribePacing';

export interface UnsubscribeLineOptions {
  /** The channel's lifetime: once aborted, the line's timer is gone. */
  signal: AbortSignal;
  clock: Clock;
  /** Subscribing has paused once none went out for a tenth of this. */
  releaseAfterMs: number;
}

/**
 * The 2025 channel's URIs that are subscribed but no longer wanted, oldest
 * first. Their unsubscribes wait while subscribes are being sent (a list
 * scrolling through new rows needs its requests for them) and go, a few at a
 * time, once subscribing pauses (`unsubscribesAtOnce`). Until it is sent a
 * URI stays subscribed, and covered.
 */
export class UnsubscribeLine {
  readonly #options: UnsubscribeLineOptions;
  readonly #send: (uri: string) => void;
  readonly #waiting = new Set<string>();
  #inFlight = 0;
  #lastSubscribeAt = Number.NEGATIVE_INFINITY;
  #stopTimer: (() => void) | undefined;

  /** `send` starts the unsubscribe; the channel calls `settled()` once it ended. */
  constructor(options: UnsubscribeLineOptions, send: (uri: string) => void) {
    this.#options = options;
    this.#send = send;
  }

  has(uri: string): boolean {
    return this.#waiting.has(uri);
  }

  /** Lets `uri` wait for its unsubscribe (it goes last). */
  add(uri: string): void {
    this.#waiting.add(uri);
  }

  /** Takes `uri` out of the line (wanted again: nothing to ask at all). */
  delete(uri: string): void {
    this.#waiting.delete(uri);
  }

  /** A subscribe went out now: the pause starts over. */
  subscribed(): void {
    this.#lastSubscribeAt = this.#options.clock.now();
  }

  /** An unsubscribe `send` started has ended (answered or not). */
  settled(): void {
    this.#inFlight -= 1;
  }

  /** Sends what waited, as many as the pace allows now; looks again when the pause begins. */
  drain(): void {
    const { clock, releaseAfterMs, signal } = this.#options;
    const resumeIn = this.#lastSubscribeAt + releaseAfterMs / 10 - clock.now();
    const limit = unsubscribesAtOnce(this.#waiting.size, resumeIn);
    for (const uri of this.#waiting) {
      if (this.#inFlight >= limit) break;
      this.#waiting.delete(uri);
      this.#inFlight += 1;
      this.#send(uri);
    }
    // One timer at a time: when it fires it looks again (subscribes sent since push the pause on).
    if (this.#waiting.size > 0 && resumeIn > 0 && !this.#stopTimer) {
      this.#stopTimer = delay(signal, resumeIn, () => {
        this.#stopTimer = undefined;
        this.drain();
      });
    }
  }
}
