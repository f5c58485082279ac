export interface RegistryOptions {
  /** How long a URI stays subscribed after its last holder released it. */
  lingerMs: number;
}

interface Entry {
  refs: number;
  lingerTimer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * URI → reference count, shared by every component of one provider. N holders
 * of a URI make one subscription; the last release keeps it for `lingerMs`
 * so a remount (StrictMode's mount → unmount → mount, a route change that
 * shows the same resource) does not tear a subscription down and build it
 * again. Every change within one tick is reported once, as the whole set.
 */
export class SubscriptionRegistry {
  readonly #entries = new Map<string, Entry>();
  readonly #options: RegistryOptions;
  readonly #onChange: (uris: readonly string[]) => void;
  #flushScheduled = false;
  #disposed = false;

  constructor(options: RegistryOptions, onChange: (uris: readonly string[]) => void) {
    this.#options = options;
    this.#onChange = onChange;
  }

  /** Hold `uri`; the returned function releases this hold (idempotent). */
  acquire(uri: string): () => void {
    const entry = this.#entries.get(uri);
    if (entry) {
      entry.refs += 1;
      if (entry.lingerTimer !== undefined) {
        clearTimeout(entry.lingerTimer);
        entry.lingerTimer = undefined;
      }
    } else {
      this.#entries.set(uri, { refs: 1, lingerTimer: undefined });
      this.#scheduleFlush();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release(uri);
    };
  }

  /** Whether `uri` is held or lingering: its notifications are wanted. */
  has(uri: string): boolean {
    return this.#entries.has(uri);
  }

  refs(uri: string): number {
    return this.#entries.get(uri)?.refs ?? 0;
  }

  /** The held set, sorted so equal sets compare equal. */
  keys(): string[] {
    return [...this.#entries.keys()].sort();
  }

  /** Whether a change is waiting to be reported at the end of this tick. */
  get flushPending(): boolean {
    return this.#flushScheduled;
  }

  dispose(): void {
    this.#disposed = true;
    for (const entry of this.#entries.values()) {
      if (entry.lingerTimer !== undefined) clearTimeout(entry.lingerTimer);
    }
    this.#entries.clear();
  }

  #release(uri: string): void {
    const entry = this.#entries.get(uri);
    if (!entry) return;
    entry.refs -= 1;
    if (entry.refs > 0) return;
    entry.lingerTimer = setTimeout(() => {
      if (entry.refs > 0) return;
      this.#entries.delete(uri);
      this.#scheduleFlush();
    }, this.#options.lingerMs);
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled || this.#disposed) return;
    this.#flushScheduled = true;
    queueMicrotask(() => {
      this.#flushScheduled = false;
      if (!this.#disposed) this.#onChange(this.keys());
    });
  }
}
