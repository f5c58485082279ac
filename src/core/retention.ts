/** Extras kept are counted against max(held, this), so a small app keeps a few. */
const HELD_FLOOR = 32;
/** At most this many extras per held URI (and the starting point). */
const MAX_RATIO = 2;
/** Evicted URIs remembered, to notice that evicting them was a mistake. */
const GHOSTS = 32;
/** A ghost wanted again raises the ratio by this much… */
const GHOST_RETURNED = 0.5;
/** …and one forgotten without ever coming back lowers it by this much. */
const GHOST_FORGOTTEN = 0.125;

/**
 * Which URIs that nobody holds any more stay subscribed (2026-07-28: stay in
 * the listen filter; 2025: are not unsubscribed). Dropping one is free while
 * the subscription changes anyway, but costs a new stream (or a subscribe)
 * if it is wanted again; keeping one costs a few bytes per listen request
 * and a notification now and then. How many to keep depends on the app —
 * tabs that come back keep coming back; a list scrolling through new rows
 * never returns to the old ones — so it is learnt, counted in subscription
 * changes, never in time: the same sequence of mounts costs the same number
 * of streams on a quiet or a loaded machine.
 *
 * Extras are kept up to `ratio × max(held, HELD_FLOOR)`, the most recently
 * released first, and all go once the held set has been quiet for a while
 * (`settle`, driven by the channel's idle timer — never during churn). The ratio starts at MAX_RATIO. Evicted URIs are
 * remembered for a while (ghosts): one wanted again proves the ratio too
 * small, one forgotten without coming back proves it too large. Extras are
 * only evicted when the subscription changes anyway (something is added),
 * or when there are more than MAX_RATIO allows.
 */
export class Retention {
  /** Subscribed but not held, oldest release first. */
  readonly #released = new Set<string>();
  readonly #ghosts = new Set<string>();
  #ratio = MAX_RATIO;

  get ratio(): number {
    return this.#ratio;
  }

  /**
   * What to subscribe, given what is held and what is subscribed now
   * (`active`): every held URI plus the extras kept. Call it whenever the
   * held set may have changed; it learns from what it is shown.
   */
  plan(held: ReadonlySet<string>, active: ReadonlySet<string>): Set<string> {
    for (const uri of this.#released) if (!active.has(uri)) this.#released.delete(uri);
    let additions = false;
    for (const uri of held) {
      this.#released.delete(uri);
      if (active.has(uri)) continue;
      additions = true;
      if (this.#ghosts.delete(uri)) this.#ratio = Math.min(MAX_RATIO, this.#ratio + GHOST_RETURNED);
    }
    for (const uri of active) if (!held.has(uri)) this.#released.add(uri);
    const base = Math.max(held.size, HELD_FLOOR);
    const allowed = Math.floor((additions ? this.#ratio : MAX_RATIO) * base);
    const keep = new Set(held);
    let evict = this.#released.size - allowed;
    for (const uri of this.#released) {
      if (evict > 0) {
        evict -= 1;
        this.#released.delete(uri);
        this.#ghost(uri);
      } else {
        keep.add(uri);
      }
    }
    return keep;
  }

  /**
   * Quiet for long enough: what is not held goes. Not evidence against
   * keeping extras, so no ghosts are made.
   */
  settle(held: ReadonlySet<string>): Set<string> {
    this.#released.clear();
    return new Set(held);
  }

  #ghost(uri: string): void {
    this.#ghosts.add(uri);
    if (this.#ghosts.size <= GHOSTS) return;
    const oldest = this.#ghosts.values().next().value as string;
    this.#ghosts.delete(oldest);
    this.#ratio = Math.max(0, this.#ratio - GHOST_FORGOTTEN);
  }
}
