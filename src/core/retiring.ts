import type { McpSubscription } from '@modelcontextprotocol/client';
import { delay } from './lifetime';

/**
 * Listen streams let go (no longer needed, or just replaced), closed once
 * this turn's urgent work has gone out, or right behind the next listen
 * request, whichever comes first: closing one costs a request and a
 * torn-down response, which the reads an acknowledgement released, or the
 * next acknowledgement, would otherwise wait behind.
 */
export class Retiring {
  readonly #signal: AbortSignal;
  #streams: { subscription: McpSubscription }[] = [];

  constructor(signal: AbortSignal) {
    this.#signal = signal;
  }

  add(streams: readonly { subscription: McpSubscription }[]): void {
    if (streams.length === 0) return;
    if (this.#streams.length === 0) delay(this.#signal, 0, () => this.close());
    this.#streams.push(...streams);
  }

  /** Closes what was let go now; resolves once it is closed. */
  close(): Promise<unknown> {
    const streams = this.#streams;
    this.#streams = [];
    return Promise.all(streams.map((stream) => stream.subscription.close().catch(() => {})));
  }
}
