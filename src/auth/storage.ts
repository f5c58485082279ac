/** The part of the Web Storage API the provider uses (localStorage fits). */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** A storage that lives as long as the page (or the process). */
export function memoryStorage(): KeyValueStorage {
  const values = new Map<string, string>();
  return {
    getItem: (key) => values.get(key) ?? null,
    setItem: (key, value) => {
      values.set(key, value);
    },
    removeItem: (key) => {
      values.delete(key);
    },
  };
}

/**
 * One JSON value under one key. Another tab writing the key (a sign-in
 * there, a refresh) reaches `onExternalChange`, so every tab sees the same
 * tokens.
 */
export class StoredJson<T> {
  readonly #storage: KeyValueStorage;
  readonly #key: string;
  readonly #initial: T;
  #cached: T | undefined;

  constructor(storage: KeyValueStorage, key: string, initial: T, onExternalChange: () => void) {
    this.#storage = storage;
    this.#key = key;
    this.#initial = initial;
    const target = globalThis as {
      addEventListener?: (type: 'storage', fn: (event: { key: string | null }) => void) => void;
    };
    target.addEventListener?.('storage', (event) => {
      if (event.key !== key && event.key !== null) return;
      this.#cached = undefined;
      onExternalChange();
    });
  }

  get(): T {
    if (this.#cached === undefined) {
      const text = this.#storage.getItem(this.#key);
      try {
        this.#cached = text === null ? this.#initial : (JSON.parse(text) as T);
      } catch {
        this.#cached = this.#initial;
      }
    }
    return this.#cached;
  }

  update(change: (value: T) => T): void {
    const next = change(this.get());
    this.#cached = next;
    this.#storage.setItem(this.#key, JSON.stringify(next));
  }
}
