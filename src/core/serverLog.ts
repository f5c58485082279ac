import type { LoggingLevel } from '@modelcontextprotocol/client';
import { clip } from './errors';
import type { McpEvent } from './events';
import { extendEverySync, internalsOf, type SyncInternals } from './internals';
import { onEnd } from './lifetime';
import { mostVerbose, severity } from './logLevels';
import { defineNotification } from './requests';

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
  /** `dropped` by level: a reader showing some levels counts only theirs. */
  droppedByLevel: Readonly<Partial<Record<LoggingLevel, number>>>;
}

const empty = (): ServerLogSnapshot => ({ entries: [], dropped: 0, droppedByLevel: {} });

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
  /**
   * What `useServerLog` reads. A message is in the snapshot as soon as anyone reads it, and
   * listeners hear of a tick's messages once, a microtask later: a flood costs one fold of the
   * inbox per tick, not a copy of it per message.
   */
  readonly store = {
    get: (): ServerLogSnapshot => {
      if (this.#pending.length > 0) this.#fold();
      return this.#snapshot;
    },
    subscribe: (listener: () => void): (() => void) => {
      this.#listeners.add(listener);
      return () => {
        this.#listeners.delete(listener);
      };
    },
  };
  readonly #upstream: SyncInternals['upstream'];
  readonly #levels = new Map<object, LoggingLevel | undefined>();
  /** Each hold's `max` and the least severity it shows. */
  readonly #holds = new Map<object, { max: number; floor: number }>();
  readonly #listeners = new Set<() => void>();
  #snapshot = empty();
  /** The snapshot listeners last heard of. */
  #told = this.#snapshot;
  /** Messages not folded into the snapshot yet, oldest first. */
  #pending: ServerLogEntry[] = [];
  #announcing = false;
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
    this.#pending.push(entry);
    this.#announce();
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

  /** Back to the largest `max` held (the entries filtered holds show stay, see `#keep`). */
  #shrink(): void {
    this.#shrinking = false;
    this.#max = DEFAULT_LOG_MAX;
    for (const hold of this.#holds.values()) this.#max = Math.max(this.#max, hold.max);
    this.#keep([...this.store.get().entries]);
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
    this.#pending = [];
    this.#set(empty());
  }

  /** The pending messages, newest first, in front of the snapshot's. */
  #fold(): void {
    const entries = this.#pending.reverse();
    this.#pending = [];
    for (const entry of this.#snapshot.entries) entries.push(entry);
    this.#keep(entries);
  }

  #set(next: ServerLogSnapshot): void {
    this.#snapshot = next;
    this.#announce();
  }

  /** Listeners hear once, a microtask later, of whatever changed meanwhile. */
  #announce(): void {
    if (this.#announcing) return;
    this.#announcing = true;
    queueMicrotask(() => {
      this.#announcing = false;
      if (this.store.get() === this.#told) return;
      this.#told = this.#snapshot;
      for (const listener of [...this.#listeners]) listener();
    });
  }

  /**
   * The `#max` newest entries, and beyond them what a hold with a level shows: its `max` newest
   * entries from that level, however many of other levels came after.
   */
  #keep(entries: ServerLogEntry[]): void {
    const previous = this.#snapshot;
    if (entries.length <= this.#max) {
      if (entries.length !== previous.entries.length) this.#set({ ...previous, entries });
      return;
    }
    const filtered = [...this.#holds.values()].filter((hold) => hold.floor > 0);
    const { kept, gone } = keepShown(entries, this.#max, filtered);
    const droppedByLevel = { ...previous.droppedByLevel };
    for (const { level } of gone) droppedByLevel[level] = (droppedByLevel[level] ?? 0) + 1;
    const dropped = previous.dropped + entries.length - kept.length;
    this.#set({ entries: kept, dropped, droppedByLevel });
  }

  #tell(): void {
    this.#upstream.setLogLevel(mostVerbose(this.#levels.values()));
  }
}

/**
 * The `max` newest `entries`, and beyond them the `max` newest from its level of each `filtered`
 * hold; never more than MAX_LOG_KEPT in all. `gone`: the others.
 */
function keepShown(
  entries: readonly ServerLogEntry[],
  max: number,
  filtered: readonly { max: number; floor: number }[],
): { kept: ServerLogEntry[]; gone: ServerLogEntry[] } {
  if (filtered.length === 0) return { kept: entries.slice(0, max), gone: entries.slice(max) };
  const seen = filtered.map(() => 0);
  const kept: ServerLogEntry[] = [];
  const gone: ServerLogEntry[] = [];
  for (let i = 0; i < entries.length; i += 1) {
    const entry = entries[i] as ServerLogEntry;
    const level = severity(entry.level);
    let shown = i < max;
    for (let k = 0; k < filtered.length; k += 1) {
      const hold = filtered[k] as { max: number; floor: number };
      if (level >= hold.floor && (seen[k] as number)++ < hold.max) shown = true;
    }
    (shown && kept.length < MAX_LOG_KEPT ? kept : gone).push(entry);
  }
  return { kept, gone };
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
