import type { McpEventOf } from '../core/events';

/**
 * The most unmatched updates the leader forwards at once: as many distinct URIs as the
 * diagnostics keep (MAX_UNMATCHED in src/core/diagnostics.ts), so a burst can still show a
 * follower every URI its diagnostics would list.
 */
export const UNMATCHED_BURST = 50;
/** The most unmatched updates the leader forwards a second, under a flood. */
export const UNMATCHED_PER_SECOND = 100;

type Updated = McpEventOf<'updated'>;

/**
 * What the leader forwards of the updates its server sends for URIs nobody in the group
 * subscribed (`matched: false`). They are what every tab's uri-match check answers from, but a
 * server may send very many (100,000 in the bench): copying them all to every tab would cost
 * each tab what it costs the leader. So they go through a token bucket: up to UNMATCHED_BURST
 * at once, then UNMATCHED_PER_SECOND, the rest stay in the leader. A tab that joins is told the
 * latest update of each of the last UNMATCHED_BURST distinct URIs.
 *
 * A follower's unmatched counts (per URI, and `counters.unmatched`) are therefore the updates it
 * was sent: every one of them while the server sends fewer than the rate, a sample under a
 * flood. Whether there were any (the check's verdict) is the same in every tab; the leader's
 * diagnostics have the true counts.
 */
export class UnmatchedSample {
  readonly #now: () => number;
  #tokens = UNMATCHED_BURST;
  #filledAt: number;
  /** The latest update of each of the last UNMATCHED_BURST distinct URIs, oldest first. */
  readonly #latest = new Map<string, Updated>();

  constructor(now: () => number) {
    this.#now = now;
    this.#filledAt = now();
  }

  /** Remember an unmatched update; whether it goes to the other tabs now (a token is left). */
  take(event: Updated, members: boolean): boolean {
    this.#latest.delete(event.uri);
    this.#latest.set(event.uri, event);
    if (this.#latest.size > UNMATCHED_BURST) {
      const oldest = this.#latest.keys().next().value;
      if (oldest !== undefined) this.#latest.delete(oldest);
    }
    if (!members) return false;
    const now = this.#now();
    // A clock set back refills nothing.
    const elapsed = Math.max(0, now - this.#filledAt);
    this.#tokens = Math.min(
      UNMATCHED_BURST,
      this.#tokens + (elapsed * UNMATCHED_PER_SECOND) / 1000,
    );
    this.#filledAt = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** What a tab that joins is told: the latest update of each URI remembered, oldest first. */
  latest(): Updated[] {
    return [...this.#latest.values()];
  }
}
