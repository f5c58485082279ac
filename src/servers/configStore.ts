import type { KeyValueStorage } from '../auth/storage';
import { systemClock } from '../core/clock';
import type { ChannelLike } from '../tabs/protocol';
import { checkServer, MAX_SERVERS, type McpServerConfig } from './config';
import { mergeLists, type OwnChange, ownChanges, sameServers } from './listMerge';
import { checkRemoved, endedAdds, unionRemoved, withoutRemoved } from './tombstones';

export interface ConfigStoreOptions {
  /** Where the list is kept; `null`: in this page's memory only. Default `localStorage`. */
  storage?: KeyValueStorage | null;
  key: string;
  /** Tells the other tabs of a change. Default: a BroadcastChannel; `null`: none. */
  channel?: ((name: string) => ChannelLike) | null;
}

interface Stored {
  /** Grows with every change, so a tab tells a newer list from an older one. */
  rev: number;
  /** Which tab wrote it: two changes of the same `rev` are ordered by it, in every tab alike. */
  writer: string;
  servers: McpServerConfig[];
  /** The writers of the revs before it, newest first (at most CHAIN): which changes it holds. */
  chain: string[];
  /** The nonces of the adds removed or moved lately, newest first: no merge brings them back. */
  removed: string[];
}

const CHAIN = 16;

const CHANGED = 'mcp-react-query:servers-changed';

/** A window's `storage` event: another tab's write of `key` landed in `storageArea`. */
type StorageEventLike = { key: string | null; storageArea?: unknown };
type Page = {
  addEventListener?: (type: 'storage', fn: (event: StorageEventLike) => void) => void;
  removeEventListener?: (type: 'storage', fn: (event: StorageEventLike) => void) => void;
};

const localStorageOf = (): KeyValueStorage | undefined => {
  try {
    return (globalThis as { localStorage?: KeyValueStorage }).localStorage;
  } catch {
    // A sandboxed frame or blocked cookies: the list lives in memory.
    return undefined;
  }
};

/**
 * A stored list or another tab's message, as far as it can be used: every
 * entry that passes `checkServer` (in order, each unique against those
 * before it), at most MAX_SERVERS. Whatever else is there (another
 * version's format, a hand edit, a hostile script on the origin) is
 * dropped, never connected to.
 */
export function checkStored(value: unknown): Stored {
  const raw = value as
    | { rev?: unknown; writer?: unknown; servers?: unknown; chain?: unknown; removed?: unknown }
    | null
    | undefined;
  const rev = typeof raw?.rev === 'number' && Number.isSafeInteger(raw.rev) ? raw.rev : 0;
  const writer = typeof raw?.writer === 'string' ? raw.writer.slice(0, 64) : '';
  const chain: string[] = [];
  for (const one of Array.isArray(raw?.chain) ? raw.chain.slice(0, CHAIN) : []) {
    // A hole ends it: what lies past it is unknown.
    if (typeof one !== 'string') break;
    chain.push(one.slice(0, 64));
  }
  const servers: McpServerConfig[] = [];
  for (const entry of Array.isArray(raw?.servers) ? raw.servers : []) {
    if (servers.length >= MAX_SERVERS) break;
    const checked = checkServer(entry, servers, false);
    if (checked.ok) servers.push(checked.server);
  }
  return { rev, writer, servers, chain, removed: checkRemoved(raw?.removed) };
}

/** The stored text, checked (`checkStored`); anything unreadable is an empty list. */
export function readServers(text: string | null): Stored {
  try {
    return checkStored(text === null ? undefined : JSON.parse(text));
  } catch {
    return checkStored(undefined);
  }
}

/**
 * The servers' configuration, kept in a storage and shared with the other
 * tabs: a change is written, then sent on a channel with the list itself
 * (a storage shared between processes, like Chromium's localStorage, may
 * show another tab's write only later). Whatever arrives (storage or
 * message) is checked entry by entry and taken only when newer: a higher
 * `rev`, or the same one from a greater `writer`, so every tab settles on
 * the same list. Writes read the storage first, so changes in two tabs a
 * moment apart both land.
 */
export class ConfigStore {
  readonly #storage: KeyValueStorage | undefined;
  readonly #key: string;
  readonly #open: ((name: string) => ChannelLike) | undefined;
  readonly #writer = systemClock.random().toString(36).slice(2);
  #channel: ChannelLike | undefined;
  /** Stops hearing the window's `storage` events (while started). */
  #unlisten: (() => void) | undefined;
  #state: Stored;
  /**
   * This tab's changes (each the list it was made on and the one it made, and the revs of the
   * lists it wrote them in: the first, and each it put them again on), oldest first, while a
   * chain can still tell whether a list holds them (made in the last CHAIN + 1 revs): a list
   * another tab wrote without knowing of them gets them again (`#adopt`).
   */
  #changes: OwnChange[] = [];
  /** The stored text last read or written: the same text again is nothing new. */
  #text: string | null | undefined;
  readonly #listeners = new Set<() => void>();

  constructor(options: ConfigStoreOptions) {
    this.#storage = options.storage === null ? undefined : (options.storage ?? localStorageOf());
    this.#key = options.key;
    this.#open =
      options.channel === null
        ? undefined
        : (options.channel ??
          (typeof BroadcastChannel === 'function'
            ? (name) => new BroadcastChannel(name) as unknown as ChannelLike
            : undefined));
    this.#state = this.#read() ?? { rev: 0, writer: '', servers: [], chain: [], removed: [] };
  }

  get servers(): readonly McpServerConfig[] {
    return this.#state.servers;
  }

  /**
   * Whether the list is in a storage, which every manager of the page on this key reads: one in
   * memory (`storage: null`, or no localStorage) is this store's alone, and a manager made later
   * starts it empty, so it is no proof that a sign-in another manager (or tab) made is unused.
   */
  get stored(): boolean {
    return this.#storage !== undefined;
  }

  /** Told when the list changed in another tab (not for this tab's own `change`). */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Start hearing the other tabs. */
  start(): void {
    if (this.#channel || this.#unlisten) return;
    this.#channel = this.#open?.(`${CHANGED}|${this.#key}`);
    this.#channel?.addEventListener('message', (event) => {
      const data = event.data as { type?: unknown } | null;
      if (data?.type !== CHANGED) return;
      this.#adopt(checkStored(data));
      this.#repair();
    });
    // Another tab's write landed (a storage event comes after it did, in the order they did).
    // Heard without a channel too: the storage's events alone keep the tabs in step then.
    const heard = (event: StorageEventLike) => {
      const { key, storageArea } = event;
      if (key !== this.#key || (storageArea != null && storageArea !== this.#storage)) return;
      this.reload();
      this.#repair();
    };
    const page = globalThis as Page;
    if (!this.#storage) return;
    page.addEventListener?.('storage', heard);
    this.#unlisten = () => page.removeEventListener?.('storage', heard);
  }

  stop(): void {
    this.#channel?.close();
    this.#channel = undefined;
    this.#unlisten?.();
    this.#unlisten = undefined;
  }

  /** Read the storage again; listeners hear of it when it holds a newer, different list. */
  reload(): void {
    this.#adopt(this.#read());
  }

  /**
   * Apply `edit` to the latest list (another tab's change included), keep
   * and announce the result. `edit` returns undefined to change nothing.
   */
  change(edit: (servers: readonly McpServerConfig[]) => McpServerConfig[] | undefined): void {
    this.reload();
    const servers = edit(this.#state.servers);
    if (!servers) return;
    this.#write(servers, false);
  }

  /**
   * Keep and announce `servers` after the list this tab holds: its change, or (`again`) its
   * latest changes put again on that list, which holds them from then on as the first write did.
   * The adds it ended (removed, moved) join the list's tombstones.
   */
  #write(servers: McpServerConfig[], again: boolean): void {
    const { rev: last, writer, chain, servers: base } = this.#state;
    const removed = unionRemoved(endedAdds(base, servers), this.#state.removed);
    // A rev past the safe integers reads as 0 in every tab (checkStored), and the tabs holding the
    // last one would write theirs back over it, and it over theirs, for ever: there, the writer
    // decides which change is newer.
    const rev = Math.min(last + 1, Number.MAX_SAFE_INTEGER);
    this.#state = {
      rev,
      writer: this.#writer,
      servers,
      chain: [writer, ...chain].slice(0, CHAIN),
      removed,
    };
    const latest = this.#changes.at(-1);
    const changes =
      again && latest
        ? [...this.#changes.slice(0, -1), { ...latest, revs: [...latest.revs, rev] }]
        : [...this.#changes, { revs: [rev], base, servers }];
    this.#changes = changes
      .filter((change) => (change.revs[0] as number) >= rev - CHAIN)
      .slice(-(CHAIN + 1));
    this.#persist();
    this.#announce({ type: CHANGED, ...this.#state });
  }

  /** Write the list this tab holds to the storage. */
  #persist(): void {
    try {
      this.#text = JSON.stringify(this.#state);
      this.#storage?.setItem(this.#key, this.#text);
    } catch {
      // Full or refused: the tabs open now still hear of it, and this one goes on in memory.
    }
  }

  /**
   * Tell the other tabs. A stopped store (its manager let go: hidden in an `<Activity>`, whose
   * kept handlers may still change the list) hears nothing, but what it changes is news to the
   * tabs that are mounted: a server removed here must end there too. It opens a channel for the
   * occasion (a message posted is delivered even if its channel closes at once).
   */
  #announce(message: unknown): void {
    const channel = this.#channel ?? this.#open?.(`${CHANGED}|${this.#key}`);
    try {
      channel?.postMessage(message);
    } catch {
      // Nothing can be told (a closed or refused channel): the storage still has it.
    }
    if (channel !== this.#channel) channel?.close();
  }

  /**
   * Two tabs that changed the list before either saw the other's write both wrote it, and the
   * storage keeps the one written last, which may be the one every tab dropped (the same `rev`
   * from a lesser `writer`): a tab opened then would read it, and bring it back with its next
   * change. A tab that hears another's change, or sees another's write land (`storage` event),
   * writes the list it holds over an older one. Its view of the storage may lag (another
   * process's write shows later), so this write may land over a newer list it cannot see yet:
   * every open tab that holds that newer list then sees this write land, and writes it back.
   */
  #repair(): void {
    let stored: Stored | undefined;
    try {
      stored = readServers(this.#storage?.getItem(this.#key) ?? null);
    } catch {
      return;
    }
    if (newer(this.#state, stored)) this.#persist();
  }

  #adopt(next: Stored | undefined): void {
    const now = this.#state;
    if (!next || !newer(next, now)) return;
    // Both sides' tombstones: a server either knows was removed on purpose goes (a chain names
    // one parent of a merge, so a long crossing could put a removed server's add again).
    this.#state = { ...next, removed: unionRemoved(now.removed, next.removed) };
    // A list written without knowing of this tab's latest changes (tabs changed it at once, or a
    // list that held them lost to one that did not): they go again on it, before anything here
    // acts on a list without them. Only this tab's own, and only where its list still shows them:
    // a change another tab made knowing of one (a removal of the server just added) stands, and
    // no two tabs put one change back (one of them might be on a list that since undid it). Past
    // what a chain tells (another version's list, one far on), a list is taken to hold them:
    // nothing is put back that another tab may have removed on purpose. At the last safe rev a
    // chain tells nothing (the rev no longer grows), and a merge there would not be newer.
    // The list, merged or only filtered, is written once: it holds every tombstone it was
    // filtered by, so no tab filters it again.
    if (next.rev < Number.MAX_SAFE_INTEGER) {
      let merged = next.servers;
      const unheld = this.#notIn(next);
      if (unheld.length > 0) {
        const { base, ours } = ownChanges(unheld, now.servers);
        merged = mergeLists(base, ours, next.servers);
      }
      const kept = withoutRemoved(merged, this.#state.removed);
      if (!sameServers(kept, next.servers)) this.#write(kept, true);
    }
    if (sameServers(this.#state.servers, now.servers)) return;
    for (const listener of [...this.#listeners]) listener();
  }

  /**
   * This tab's changes `list` does not hold: those after the newest it holds in any list this tab
   * wrote it in (each change was made on a list holding the ones before it, or putting them
   * again). A list holding only the first write of a change does not hold what a later one put
   * again with it: those are not changes of their own.
   */
  #notIn(list: Stored): OwnChange[] {
    const changes = this.#changes;
    for (let i = changes.length - 1; i >= 0; i -= 1) {
      const { revs } = changes[i] as OwnChange;
      if (revs.some((rev) => holds(list, rev, this.#writer))) return changes.slice(i + 1);
    }
    return changes;
  }

  /** What the storage holds, when it is not what was last read or written here. */
  #read(): Stored | undefined {
    if (!this.#storage) return undefined;
    try {
      const text = this.#storage.getItem(this.#key);
      if (text === this.#text) return undefined;
      this.#text = text;
      return readServers(text);
    } catch {
      return undefined;
    }
  }
}

/**
 * Whether `list` was written knowing of the change `writer` made at `rev`: it is that change, or
 * one made after it. Past what its chain tells, it is taken to (nothing is put back that
 * another tab may have removed on purpose).
 */
function holds(list: Stored, rev: number, writer: string): boolean {
  if (list.rev <= rev) return list.rev === rev && list.writer === writer;
  const at = list.chain[list.rev - rev - 1];
  return at === undefined || at === writer;
}

/** Whether `a` is a later list than `b`: a higher `rev`, or the same from a greater `writer`. */
const newer = (a: Stored, b: Stored): boolean =>
  a.rev > b.rev || (a.rev === b.rev && a.writer > b.writer);
