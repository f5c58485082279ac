import type { LoggingLevel } from '@modelcontextprotocol/client';
import { clip } from './errors';
import type { McpEvent } from './events';
import { extendEverySync, internalsOf, type SyncInternals } from './internals';
import { onEnd } from './lifetime';
import { mostVerbose, severity } from './logLevels';
import { defineNotification } from './requests';
import { Store } from './store';

/** One `notifications/message` of the server, as received. */
export interface ServerLogEntry {
  /** Increasing per server: a stable React key. */
  id: number;
  at: number;
  level: LoggingLevel;
  logger?: string;
  data: unknown;
}

/** A server's log inbox: newest first, at most its cap, and how many fell off the end. */
export interface ServerLogSnapshot {
  entries: readonly ServerLogEntry[];
  dropped: number;
}

/** How many entries an inbox keeps unless a `useServerLog({ max })` asks for more. */
export const DEFAULT_LOG_MAX = 200;

/** The most entries an inbox keeps whatever a reader asks (`Infinity` too): a flood stays bounded. */
export const MAX_LOG_KEPT = 10_000;

/** `max` as a number of entries (rule 8): whole, from 0 (NaN, less) to `MAX_LOG_KEPT` (more). */
export const logMax = (max: number): number =>
  max > 0 ? Math.min(Math.floor(max), MAX_LOG_KEPT) : 0;

/**
 * The server's log messages of one McpCacheSync (one server), folded from its events from the
 * moment it is made (in an app that imports this at all), and the levels asked for: the most
 * verbose one is what the server is told.
 */
export class ServerLog {
  readonly store = new Store<ServerLogSnapshot>({ entries: [], dropped: 0 });
  readonly #upstream: SyncInternals['upstream'];
  readonly #levels = new Map<object, LoggingLevel | undefined>();
  /** Each hold's `max` and the least severity it shows. */
  readonly #holds = new Map<object, { max: number; floor: number }>();
  #max = DEFAULT_LOG_MAX;
  #shrinking = false;
  #nextId = 0;

  constructor(upstream: SyncInternals['upstream']) {
    this.#upstream = upstream;
  }

  apply = (event: McpEvent): void => {
    if (event.type !== 'log') return;
    this.#nextId += 1;
    const { at, level, logger, data } = event;
    const entry: ServerLogEntry = { id: this.#nextId, at, level, data };
    if (logger !== undefined) entry.logger = logger;
    this.#keep([entry, ...this.store.get().entries]);
  };

  /**
   * Keep at least `max` entries until the returned function is called: the inbox keeps the
   * largest any reader asks for (at least the default), and shrinks back, dropping the oldest,
   * once that reader lets go. `level`: the reader shows only entries from it up.
   */
  keep(max: number, level?: LoggingLevel): () => void {
    const holder = {};
    const kept = logMax(max);
    this.#holds.set(holder, { max: kept, floor: level === undefined ? 0 : severity(level) });
    // A hold only grows the inbox. Shrinking waits for a release's microtask: React runs every
    // cleanup of a commit before any of its effects, so a hook whose `max` changed holds the new
    // one by then, whichever other hold came first, and nothing it still shows is dropped.
    this.#max = Math.max(this.#max, kept);
    return () => {
      if (!this.#holds.delete(holder) || this.#shrinking) return;
      // One shrink for every release of a tick (a list of hooks unmounting together).
      this.#shrinking = true;
      queueMicrotask(() => this.#shrink());
    };
  }

  /**
   * Back to the largest `max` held, but never under an entry a hold shows: a reader with a level
   * shows its `max` newest entries from that level, which may lie further back.
   */
  #shrink(): void {
    this.#shrinking = false;
    const { entries } = this.store.get();
    let max = DEFAULT_LOG_MAX;
    for (const hold of this.#holds.values()) {
      max = Math.max(max, hold.max);
      let shown = 0;
      for (let i = 0; i < entries.length && shown < hold.max; i += 1) {
        if (severity((entries[i] as ServerLogEntry).level) < hold.floor) continue;
        shown += 1;
        max = Math.max(max, i + 1);
      }
    }
    this.#max = max;
    this.#keep([...entries]);
  }

  /**
   * Ask for the server's messages from `level` up until the returned function is called. With
   * several askers, the most verbose level is asked for; undefined asks for nothing.
   */
  ask(level: LoggingLevel | undefined): () => void {
    const holder = {};
    this.#levels.set(holder, level);
    this.#tell();
    return () => {
      if (!this.#levels.delete(holder)) return;
      this.#tell();
    };
  }

  clear(): void {
    this.store.set({ entries: [], dropped: 0 });
  }

  #keep(entries: ServerLogEntry[]): void {
    const over = Math.max(0, entries.length - this.#max);
    if (over === 0 && entries.length === this.store.get().entries.length) return;
    this.store.set({
      entries: over > 0 ? entries.slice(0, this.#max) : entries,
      dropped: this.store.get().dropped + over,
    });
  }

  #tell(): void {
    this.#upstream.setLogLevel(mostVerbose(this.#levels.values()));
  }
}

/** The most characters of a log message's data kept (as JSON). */
const MAX_LOG_DATA = 8000;

/**
 * A `notifications/message` as a `log` event: a known level, the logger cut at 200 characters,
 * data past 8,000 characters of JSON cut (a hostile server's megabyte is not kept whole).
 */
export function defineServerLog(): void {
  defineNotification('notifications/message', ({ level, logger, data }) => {
    if (severity(level) < 0) {
      return level === undefined ? 'no level' : `level is ${clip(JSON.stringify(level), 40)}`;
    }
    const json = JSON.stringify(data) ?? '';
    return {
      type: 'log',
      level: level as LoggingLevel,
      ...(typeof logger === 'string' && { logger: clip(logger, 200) }),
      data: json.length > MAX_LOG_DATA ? clip(json, MAX_LOG_DATA) : data,
    };
  });
}

defineServerLog();

const attached = new WeakMap<object, ServerLog>();

function attach(owner: object, internals: SyncInternals): ServerLog {
  const existing = attached.get(owner);
  if (existing) return existing;
  const log = new ServerLog(internals.upstream);
  onEnd(internals.signal, internals.events.bus.subscribe(log.apply));
  attached.set(owner, log);
  return log;
}

// An app that shows server logs anywhere wants every message from the start of the connection.
extendEverySync(attach);

/** The log inbox of an McpCacheSync (`useServerLog` reads it). */
export function serverLog(sync: object): ServerLog {
  return attach(sync, internalsOf(sync));
}
