import type { KeyValueStorage } from '../auth/storage';
import type { ChannelLike } from '../tabs/protocol';
import { checkServer, MAX_SERVERS, type McpServerConfig } from './config';

export interface ConfigStoreOptions {
  /** Where the list is kept; `null`: in this page's memory only. Default `localStorage`. */
  storage?: KeyValueStorage | null;
  key: string;
  /** Tells the other tabs of a change. Default: a BroadcastChannel; `null`: none. */
  channel?: ((name: string) => ChannelLike) | null;
}

interface Stored {
  rev: number;
  servers: McpServerConfig[];
}

const CHANGED = 'mcp-react-query:servers-changed';

const localStorageOf = (): KeyValueStorage | undefined => {
  try {
    return (globalThis as { localStorage?: KeyValueStorage }).localStorage;
  } catch {
    // A sandboxed frame or blocked cookies: the list lives in memory.
    return undefined;
  }
};

/**
 * Every entry of a stored list that passes `checkServer` (in order, each
 * unique against those before it), at most MAX_SERVERS. Whatever else is
 * there (another version's format, a hand edit, a hostile script on the
 * origin) is dropped, never connected to.
 */
export function readServers(text: string | null): Stored {
  let parsed: unknown;
  try {
    parsed = text === null ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const raw = parsed as { rev?: unknown; servers?: unknown } | undefined;
  const rev = typeof raw?.rev === 'number' && Number.isSafeInteger(raw.rev) ? raw.rev : 0;
  const servers: McpServerConfig[] = [];
  for (const entry of Array.isArray(raw?.servers) ? raw.servers : []) {
    if (servers.length >= MAX_SERVERS) break;
    const checked = checkServer(entry, servers, false);
    if (checked.ok) servers.push(checked.server);
  }
  return { rev, servers };
}

/**
 * The servers' configuration, kept in a storage and shared with the other
 * tabs: a change is written, then announced on a channel; a tab that hears
 * it reads the storage again. Nothing else crosses: the announcement holds
 * no data, and what is read is checked entry by entry (`readServers`).
 * Writes re-read first, so two tabs' changes a moment apart both land.
 */
export class ConfigStore {
  readonly #storage: KeyValueStorage | undefined;
  readonly #key: string;
  readonly #open: ((name: string) => ChannelLike) | undefined;
  #channel: ChannelLike | undefined;
  #state: Stored;
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
    this.#state = this.#read() ?? { rev: 0, servers: [] };
  }

  get servers(): readonly McpServerConfig[] {
    return this.#state.servers;
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
    if (this.#channel || !this.#open) return;
    this.#channel = this.#open(`${CHANGED}|${this.#key}`);
    this.#channel.addEventListener('message', (event) => {
      const data = event.data as { type?: unknown } | null;
      if (data?.type === CHANGED) this.reload();
    });
  }

  stop(): void {
    this.#channel?.close();
    this.#channel = undefined;
  }

  /** Read the storage again; listeners hear of it when the list differs. */
  reload(): void {
    const next = this.#read();
    if (!next || JSON.stringify(next.servers) === JSON.stringify(this.#state.servers)) return;
    this.#state = next;
    for (const listener of [...this.#listeners]) listener();
  }

  /**
   * Apply `edit` to the latest list (another tab's change included), keep
   * and announce the result. `edit` returns undefined to change nothing.
   */
  change(edit: (servers: readonly McpServerConfig[]) => McpServerConfig[] | undefined): void {
    const latest = this.#read();
    if (latest && latest.rev !== this.#state.rev) this.reload();
    const servers = edit(this.#state.servers);
    if (!servers) return;
    this.#state = { rev: Math.max(this.#state.rev, latest?.rev ?? 0) + 1, servers };
    try {
      this.#storage?.setItem(this.#key, JSON.stringify(this.#state));
    } catch {
      // Full or refused: this tab goes on with the list in memory.
    }
    this.#channel?.postMessage({ type: CHANGED });
  }

  #read(): Stored | undefined {
    if (!this.#storage) return undefined;
    try {
      return readServers(this.#storage.getItem(this.#key));
    } catch {
      return undefined;
    }
  }
}
