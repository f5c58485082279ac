type Listener = () => void;

/**
 * A minimal external store for `useSyncExternalStore`: an immutable snapshot
 * replaced on every change, so React can compare by identity.
 */
export class Store<T> {
  #snapshot: T;
  readonly #listeners = new Set<Listener>();

  constructor(initial: T) {
    this.#snapshot = initial;
  }

  get = (): T => this.#snapshot;

  set(next: T): void {
    if (Object.is(next, this.#snapshot)) return;
    this.#snapshot = next;
    for (const listener of [...this.#listeners]) listener();
  }

  update(patch: Partial<T>): void {
    this.set({ ...this.#snapshot, ...patch });
  }

  subscribe = (listener: Listener): (() => void) => {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  };
}
