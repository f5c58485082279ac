import type { ServerEvent } from '@modelcontextprotocol/server';

export type Listener = (event: ServerEvent) => void;

/**
 * This process's listeners (one per open `subscriptions/listen` stream), called synchronously.
 *
 * The SDK's bus contract: an event published from inside a listener is not delivered back to
 * that listener. Delivery is synchronous, so the listener running at publish time is the
 * publisher; it is skipped for that one event.
 */
export class Fanout {
  readonly #listeners = new Set<Listener>();
  #running: Listener | undefined;

  get size(): number {
    return this.#listeners.size;
  }

  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    let live = true;
    return () => {
      if (!live) return;
      live = false;
      this.#listeners.delete(listener);
    };
  }

  /** A throwing listener is reported and the others still get the event. */
  deliver(event: ServerEvent, onThrow: (error: unknown) => void): void {
    const publisher = this.#running;
    for (const listener of [...this.#listeners]) {
      // Unsubscribed by an earlier listener during this very delivery.
      if (listener === publisher || !this.#listeners.has(listener)) continue;
      this.#running = listener;
      try {
        listener(event);
      } catch (error) {
        onThrow(error);
      } finally {
        this.#running = publisher;
      }
    }
  }

  clear(): void {
    this.#listeners.clear();
  }
}
