export type OutboxResult = 'queued' | 'coalesced' | 'overflow';

/**
 * Events waiting for Redis, oldest first, bounded.
 *
 * Events are invalidation signals: two identical ones waiting together say no more than one,
 * so a repeat is merged into the waiting copy. That keeps a long outage's queue at the number of
 * distinct things that changed rather than the number of changes. When full, the oldest is
 * dropped to make room: every waiting event is equally worth delivering, and dropping at the
 * head keeps the queue a plain FIFO.
 */
export class Outbox {
  readonly #limit: number;
  readonly #payloads = new Set<string>();

  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  get size(): number {
    return this.#payloads.size;
  }

  add(payload: string): OutboxResult {
    if (this.#payloads.has(payload)) return 'coalesced';
    let result: OutboxResult = 'queued';
    if (this.#payloads.size >= this.#limit) {
      const oldest = this.#payloads.values().next().value;
      if (oldest !== undefined) this.#payloads.delete(oldest);
      result = 'overflow';
    }
    this.#payloads.add(payload);
    return result;
  }

  /** The oldest waiting event, taken out. */
  shift(): string | undefined {
    const oldest = this.#payloads.values().next().value;
    if (oldest !== undefined) this.#payloads.delete(oldest);
    return oldest;
  }

  /**
   * An event taken out with `shift()` back in front. A copy published meanwhile stands for it;
   * with the outbox full it is the oldest, so it is the one dropped.
   */
  unshift(payload: string): OutboxResult {
    if (this.#payloads.has(payload)) return 'coalesced';
    if (this.#payloads.size >= this.#limit) return 'overflow';
    const rest = [...this.#payloads];
    this.#payloads.clear();
    for (const one of [payload, ...rest]) this.#payloads.add(one);
    return 'queued';
  }

  /** Everything waiting, in order; the outbox is empty afterwards. */
  drain(): string[] {
    const all = [...this.#payloads];
    this.#payloads.clear();
    return all;
  }
}
