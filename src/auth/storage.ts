/** The part of the Web Storage API the provider uses (localStorage fits). */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * Where an OAuth provider keeps tokens (`storage`):
 * - `'session'`: the tab's `sessionStorage`, the default. It survives a
 *   reload and the redirect to the authorization server, and goes with the
 *   tab; other tabs sign in on their own.
 * - `'local'`: `localStorage`, shared by every tab of the origin and kept
 *   across browser restarts (so is a stolen refresh token).
 * - `'memory'`: this page only; a reload signs in again.
 * - a storage of your own (a native shell's secure store, say).
 * Where no web storage exists (Node, a sandboxed frame), memory.
 */
export type StorageChoice = 'session' | 'local' | 'memory' | KeyValueStorage;

function webStorage(name: 'sessionStorage' | 'localStorage'): KeyValueStorage | undefined {
  try {
    // Reading it throws where storage is disabled (sandboxed frames, some privacy modes).
    return (globalThis as unknown as Record<string, KeyValueStorage | undefined>)[name];
  } catch {
    return undefined;
  }
}

export function tokenStorage(choice: StorageChoice = 'session'): KeyValueStorage {
  if (typeof choice === 'object') return choice;
  const web = choice === 'memory' ? undefined : webStorage(`${choice}Storage`);
  return web ?? memoryStorage();
}

/**
 * Where the secrets of a sign-in in progress live: in the page for a popup
 * (the page that opened it finishes the sign-in); for a redirect, in the
 * tab's session storage, the least that survives leaving the page; in a
 * storage of the app's own when it gave one.
 */
export function signInStorage(choice: StorageChoice | undefined, popup: boolean): KeyValueStorage {
  if (typeof choice === 'object') return choice;
  return (popup ? undefined : webStorage('sessionStorage')) ?? memoryStorage();
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
const sharing = new WeakMap<KeyValueStorage, Map<string, Set<StoredJson<unknown>>>>();

export class StoredJson<T> {
  readonly #storage: KeyValueStorage;
  readonly #key: string;
  readonly #initial: T;
  readonly #onExternalChange: () => void;
  /** Others on the same storage and key in this page: a write here is news to them. */
  readonly #peers: Set<StoredJson<unknown>>;
  #cached: T | undefined;

  constructor(storage: KeyValueStorage, key: string, initial: T, onExternalChange: () => void) {
    this.#storage = storage;
    this.#key = key;
    this.#initial = initial;
    this.#onExternalChange = onExternalChange;
    let byKey = sharing.get(storage);
    if (!byKey) {
      byKey = new Map();
      sharing.set(storage, byKey);
    }
    this.#peers = byKey.get(key) ?? new Set();
    byKey.set(key, this.#peers);
    this.#peers.add(this as StoredJson<unknown>);
    const target = globalThis as {
      addEventListener?: (type: 'storage', fn: (event: { key: string | null }) => void) => void;
    };
    target.addEventListener?.('storage', (event) => {
      if (event.key !== key && event.key !== null) return;
      this.#changedElsewhere();
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
    for (const peer of this.#peers) if (peer !== this) peer.#changedElsewhere();
  }

  /** Remove the key altogether (nothing of it stays in the storage). */
  clear(): void {
    this.#cached = this.#initial;
    this.#storage.removeItem(this.#key);
    for (const peer of this.#peers) if (peer !== this) peer.#changedElsewhere();
  }

  #changedElsewhere(): void {
    this.#cached = undefined;
    this.#onExternalChange();
  }
}
