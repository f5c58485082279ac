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

/** A value hearing its key, held weakly where the platform can: nothing here keeps it alive. */
interface Peer {
  deref(): StoredJson<unknown> | undefined;
}

/** The values of one storage in this page, by key, and the one window listener for them all. */
interface Shared {
  byKey: Map<string, Set<Peer>>;
  stop: () => void;
}

const sharing = new WeakMap<KeyValueStorage, Shared>();
/** A value collected without `release()` leaves its key's set (its `leave`, run once). */
const collected =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<() => void>((leave) => leave())
    : undefined;

type Page = {
  addEventListener?: (type: 'storage', fn: (event: { key: string | null }) => void) => void;
  removeEventListener?: (type: 'storage', fn: (event: { key: string | null }) => void) => void;
};

function shared(storage: KeyValueStorage): Shared {
  const known = sharing.get(storage);
  if (known) return known;
  const byKey = new Map<string, Set<Peer>>();
  // Another tab wrote a key (or cleared them all: `key` null).
  const heard = (event: { key: string | null }) => {
    const keys = event.key === null ? [...byKey.keys()] : [event.key];
    for (const key of keys) for (const peer of [...(byKey.get(key) ?? [])]) peer.deref()?.heard();
  };
  const page = globalThis as Page;
  page.addEventListener?.('storage', heard);
  const made = { byKey, stop: () => page.removeEventListener?.('storage', heard) };
  sharing.set(storage, made);
  return made;
}

/** `value` hears `key` of `storage` until the returned function is called. */
function join(storage: KeyValueStorage, key: string, value: StoredJson<unknown>): () => void {
  const place = shared(storage);
  const peers = place.byKey.get(key) ?? new Set();
  place.byKey.set(key, peers);
  const peer: Peer = typeof WeakRef === 'function' ? new WeakRef(value) : { deref: () => value };
  peers.add(peer);
  const leave = () => {
    collected?.unregister(peer);
    if (!peers.delete(peer) || peers.size > 0) return;
    place.byKey.delete(key);
    if (place.byKey.size > 0) return;
    place.stop();
    if (sharing.get(storage) === place) sharing.delete(storage);
  };
  collected?.register(value, leave, peer);
  return leave;
}

/** The values each owner (an OAuth provider) hears the storage through. */
const owned = new WeakMap<object, { release(): void }[]>();

/** `owner` hears the storage through `values` until `letGo(owner)`. */
export function holdFor(owner: object, ...values: { release(): void }[]): void {
  owned.set(owner, [...(owned.get(owner) ?? []), ...values]);
}

/** The owner is gone (a server removed): none of its values hears the storage any more. */
export function letGo(owner: object): void {
  for (const value of owned.get(owner) ?? []) value.release();
  owned.delete(owner);
}

/** The key of each value of this page that hears `storage`, one per value (tests). */
export function listeningTo(storage: KeyValueStorage): string[] {
  const byKey = sharing.get(storage)?.byKey ?? new Map<string, Set<Peer>>();
  return [...byKey].flatMap(([key, peers]) => [...peers].filter((p) => p.deref()).map(() => key));
}

/**
 * One JSON value under one key. Another tab writing the key (a sign-in
 * there, a refresh), or another value of this page on the same storage and
 * key, reaches `onExternalChange`, so every tab sees the same tokens; until
 * `release()`, or until nothing else holds it (the page holds it weakly).
 */
export class StoredJson<T> {
  readonly #storage: KeyValueStorage;
  readonly #key: string;
  readonly #initial: T;
  readonly #onExternalChange: () => void;
  readonly #leave: () => void;
  #cached: T | undefined;

  constructor(storage: KeyValueStorage, key: string, initial: T, onExternalChange: () => void) {
    this.#storage = storage;
    this.#key = key;
    this.#initial = initial;
    this.#onExternalChange = onExternalChange;
    this.#leave = join(storage, key, this as StoredJson<unknown>);
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
    this.#tellPeers();
  }

  /** Remove the key altogether (nothing of it stays in the storage). */
  clear(): void {
    this.#cached = this.#initial;
    this.#storage.removeItem(this.#key);
    this.#tellPeers();
  }

  /**
   * Hear no more changes (its owner is gone): nothing of the page holds it
   * any more. It still reads and writes, and a write still reaches the rest.
   */
  release(): void {
    this.#leave();
  }

  /** The key changed elsewhere: read again when asked. */
  heard(): void {
    this.#cached = undefined;
    this.#onExternalChange();
  }

  /** Others on the same storage and key in this page: a write here is news to them. */
  #tellPeers(): void {
    const peers = sharing.get(this.#storage)?.byKey.get(this.#key) ?? [];
    for (const peer of [...peers]) {
      const value = peer.deref();
      if (value !== this) value?.heard();
    }
  }
}
