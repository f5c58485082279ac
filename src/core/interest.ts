import type { Emit, McpEventInput } from './events';
import { whileAlive } from './lifetime';
import type { NotifiedList } from './lists';

/** What the provider wants to hear about: the input of the session's channel. */
export interface Desire {
  /** Wanted URIs (held or lingering), sorted. */
  uris: readonly string[];
  /** The wanted URIs that have a holder now (the rest are lingering). */
  held: ReadonlySet<string>;
  /** Lists whose `list_changed` is wanted (resources always; tools/prompts while shown). */
  lists: ReadonlySet<NotifiedList>;
}

interface Entry<K> {
  refs: number;
  /** The linger this entry waits in, while it has no holder. */
  linger: Linger<K> | undefined;
}

/** Keys let go in one tick: their lingers end together, in one timer and one flush. */
interface Linger<K> {
  keys: Set<K>;
  timer: ReturnType<typeof setTimeout>;
}

/** Reference counts with a linger before a key with no holder is let go. */
class RefCounts<K> {
  readonly entries = new Map<K, Entry<K>>();
  readonly #lingerMs: number;
  readonly #changed: (key: K, refs: number, wanted: boolean) => void;
  readonly #setChanged: () => void;
  /** The linger keys released in this tick join (closed at the end of the tick). */
  #open: Linger<K> | undefined;

  constructor(
    lingerMs: number,
    changed: (key: K, refs: number, wanted: boolean) => void,
    setChanged: () => void,
  ) {
    this.#lingerMs = lingerMs;
    this.#changed = changed;
    this.#setChanged = setChanged;
  }

  hold(key: K): () => void {
    let entry = this.entries.get(key);
    if (entry) {
      entry.refs += 1;
      this.#leaveLinger(key, entry);
    } else {
      entry = { refs: 1, linger: undefined };
      this.entries.set(key, entry);
    }
    // Held by someone again: new, or held again while it lingered (a connection that started
    // meanwhile took it as an extra).
    if (entry.refs === 1) this.#setChanged();
    this.#changed(key, entry.refs, true);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release(key);
    };
  }

  clear(): void {
    for (const entry of this.entries.values()) if (entry.linger) clearTimeout(entry.linger.timer);
    this.entries.clear();
    this.#open = undefined;
  }

  #release(key: K): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    entry.refs -= 1;
    this.#changed(key, entry.refs, true);
    if (entry.refs > 0) return;
    // A screenful of rows unmounts in one commit: one linger for all of them,
    // so their end is one flush (one new filter), not one per URI.
    let linger = this.#open;
    if (!linger) {
      const started: Linger<K> = {
        keys: new Set(),
        timer: setTimeout(() => this.#expire(started), this.#lingerMs),
      };
      linger = started;
      this.#open = started;
      queueMicrotask(() => {
        if (this.#open === started) this.#open = undefined;
      });
    }
    linger.keys.add(key);
    entry.linger = linger;
  }

  #leaveLinger(key: K, entry: Entry<K>): void {
    const linger = entry.linger;
    if (!linger) return;
    entry.linger = undefined;
    linger.keys.delete(key);
    if (linger.keys.size === 0 && linger !== this.#open) clearTimeout(linger.timer);
  }

  #expire(linger: Linger<K>): void {
    for (const key of linger.keys) {
      this.entries.delete(key);
      this.#changed(key, 0, false);
    }
    if (linger.keys.size > 0) this.#setChanged();
  }
}

/**
 * What is wanted, for URIs and lists alike: a reference count per target,
 * shared by every observer of one provider. N holders make one server-side
 * subscription; the last release keeps it for `lingerMs`, so a remount
 * (StrictMode's mount → unmount → mount, a route change showing the same
 * resource) does not tear a subscription down and build it again. Every
 * change of the wanted set within one tick reaches `onFlush` once, as the
 * whole desire: one new stream, not one per change.
 */
export class InterestRegistry {
  readonly #uris: RefCounts<string>;
  readonly #lists: RefCounts<NotifiedList>;
  readonly #onFlush: (desire: Desire) => void;
  readonly #signal: AbortSignal;
  #flushScheduled = false;

  /** `signal`: the owner's lifetime; after it, nothing is held and nothing flushes. */
  constructor(options: {
    lingerMs: number;
    emit: Emit;
    onFlush: (desire: Desire) => void;
    signal: AbortSignal;
  }) {
    const { lingerMs, emit, signal } = options;
    this.#signal = signal;
    signal.addEventListener(
      'abort',
      () => {
        this.#uris.clear();
        this.#lists.clear();
      },
      { once: true },
    );
    const setChanged = () => this.#scheduleFlush();
    this.#uris = new RefCounts<string>(
      lingerMs,
      (uri, refs, wanted) => emit({ type: 'interest', uri, refs, wanted }),
      setChanged,
    );
    this.#lists = new RefCounts<NotifiedList>(lingerMs, () => {}, setChanged);
    this.#onFlush = options.onFlush;
  }

  /** Hold `uri` until the returned function is called (idempotent). */
  holdUri(uri: string): () => void {
    return this.#hold(this.#uris, uri);
  }

  /** Want this list's `list_changed` until the returned function is called. */
  holdList(list: NotifiedList): () => void {
    return this.#hold(this.#lists, list);
  }

  /** Whether `uri` is held or lingering: its notifications are wanted. */
  wants(uri: string): boolean {
    return this.#uris.entries.has(uri);
  }

  /** Whether this list's `list_changed` is wanted (the resources list always is). */
  wantsList(list: NotifiedList): boolean {
    return list === 'resources' || this.#lists.entries.has(list);
  }

  desire(): Desire {
    const lists = new Set<NotifiedList>(['resources']);
    for (const list of this.#lists.entries.keys()) lists.add(list);
    const held = new Set<string>();
    for (const [uri, entry] of this.#uris.entries) if (entry.refs > 0) held.add(uri);
    return { uris: [...this.#uris.entries.keys()].sort(), held, lists };
  }

  /** Every wanted URI and its holders, as events (for a fold that starts late). */
  facts(): McpEventInput[] {
    return [...this.#uris.entries].map(([uri, entry]) => ({
      type: 'interest' as const,
      uri,
      refs: entry.refs,
      wanted: true,
    }));
  }

  /** Holds taken after the owner's end hold nothing. */
  #hold<K>(counts: RefCounts<K>, key: K): () => void {
    return this.#signal.aborted ? () => {} : counts.hold(key);
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    queueMicrotask(
      whileAlive(this.#signal, () => {
        this.#flushScheduled = false;
        this.#onFlush(this.desire());
      }),
    );
  }
}
