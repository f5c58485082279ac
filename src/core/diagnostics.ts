import { initialStatus } from './channel';
import {
  checks,
  looseForm,
  type McpDiagnostics,
  type ResourceDiagnostics,
  resourceCapabilities,
  type UnmatchedNotification,
} from './checks';
import { type Clock, systemClock } from './clock';
import { newRecord, type ResourceRecord as Record } from './diagnosticRecord';
import type { ConnectionSnapshot, McpEvent, McpEventOf, StreamStatus } from './events';
import type { NotifiedList } from './lists';
import { deriveStatus, INITIAL_CONNECTION } from './state';

/** The longest URI kept for display; a hostile 1 MB URI is cut, never stored whole. */
const MAX_URI_SHOWN = 512;
/** Distinct unmatched URIs remembered (the oldest is forgotten first). */
const MAX_UNMATCHED = 50;
/**
 * How long a change found by a read may still be announced before it counts
 * as silent: a notification can be slower than a read (a busy bus, events
 * queued during a Redis blip).
 */
const SILENCE_GRACE_MS = 2000;

type Unmatched = Omit<UnmatchedNotification, 'nearest'> & { loose: string };

const shown = (uri: string) =>
  uri.length > MAX_URI_SHOWN ? `${uri.slice(0, MAX_URI_SHOWN)}…` : uri;

/**
 * The four field questions, answered live: a fold over the event stream
 * (`apply`), plus the pure `checks` over the snapshot it builds. It keeps
 * something only for URIs that are wanted now — a released URI leaves no
 * trace, whatever the cache keeps — and a bounded list of unmatched ones.
 */
export class Diagnostics {
  readonly #emitEveryMs: number;
  readonly #listeners = new Set<() => void>();
  #connection: ConnectionSnapshot = INITIAL_CONNECTION;
  readonly #clock: Clock;
  #stream: StreamStatus;
  readonly #covered = new Set<string>();
  #listsCovered: ReadonlySet<NotifiedList> = new Set();
  readonly #declined = new Map<string, string>();
  readonly #records = new Map<string, Record>();
  /** Loose form → the wanted URIs with it, for "did you mean" hints. */
  readonly #loose = new Map<string, Set<string>>();
  readonly #unmatched = new Map<string, Unmatched>();
  readonly #counters: McpDiagnostics['counters'] = {
    updated: 0,
    listChanged: 0,
    toolsListChanged: 0,
    promptsListChanged: 0,
    unmatched: 0,
    malformed: 0,
    reads: 0,
    readErrors: 0,
  };
  #lastMalformed: McpDiagnostics['lastMalformed'];
  #tabs: McpDiagnostics['tabs'];
  #health: McpDiagnostics['health'];
  #snapshot: McpDiagnostics | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options?: { emitEveryMs?: number | undefined; clock?: Clock }) {
    this.#emitEveryMs = options?.emitEveryMs ?? 100;
    this.#clock = options?.clock ?? systemClock;
    this.#stream = initialStatus('none', this.#clock.now());
  }

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
      // Nobody left to tear between: a reader from now on sees the latest.
      if (this.#listeners.size === 0 && this.#timer !== undefined) this.#snapshot = undefined;
    };
  };

  getSnapshot = (): McpDiagnostics => {
    this.#snapshot ??= this.#build();
    return this.#snapshot;
  };

  dispose(): void {
    clearTimeout(this.#timer);
    for (const record of this.#records.values()) clearTimeout(record.silenceTimer);
    this.#listeners.clear();
  }

  /** Wanted, covered URIs with no notification and no read (failed or not) for `quietMs`. */
  quiet(quietMs: number): string[] {
    const now = this.#clock.now();
    const quiet: string[] = [];
    for (const [uri, record] of this.#records) {
      const { lastNotificationAt = 0, lastReadAt = 0, lastErrorAt = 0 } = record;
      const last = Math.max(lastNotificationAt, lastReadAt, lastErrorAt);
      if (this.#covered.has(uri) && last > 0 && now - last >= quietMs) quiet.push(uri);
    }
    return quiet;
  }

  apply = (event: McpEvent): void => {
    switch (event.type) {
      case 'connection':
        this.#connection = event.state;
        break;
      case 'stream':
        this.#stream = event.status;
        break;
      case 'interest':
        this.#interest(event.uri, event.refs, event.wanted);
        break;
      case 'coverage':
        for (const uri of event.acknowledged) {
          this.#covered.add(uri);
          const record = this.#records.get(uri);
          if (record) record.coverages += 1;
        }
        for (const uri of event.lost) this.#covered.delete(uri);
        this.#listsCovered = new Set(event.lists);
        break;
      case 'declined':
        for (const [uri, reason] of event.changes) {
          if (reason === null) this.#declined.delete(uri);
          else this.#declined.set(uri, reason);
        }
        break;
      case 'updated':
        this.#updated(event.uri, event.matched, event.at);
        break;
      case 'list_changed':
        if (event.list === 'resources') this.#counters.listChanged += 1;
        else if (event.list === 'tools') this.#counters.toolsListChanged += 1;
        else this.#counters.promptsListChanged += 1;
        break;
      case 'malformed':
        this.#counters.malformed += 1;
        this.#lastMalformed = { method: event.method, reason: event.reason, at: event.at };
        break;
      case 'read':
        this.#read(event);
        break;
      case 'tabs':
        this.#tabs = { leader: event.leader, tabs: event.tabs, handovers: event.handovers };
        break;
      case 'ping': {
        const { rttMs, failures = 0 } = this.#health ?? {};
        this.#health = event.error
          ? { rttMs, lastPingAt: event.at, failures: failures + 1, lastError: event.error }
          : { rttMs: event.rttMs, lastPingAt: event.at, failures, lastError: undefined };
        break;
      }
      default:
        return;
    }
    this.#changed();
  };

  #interest(uri: string, refs: number, wanted: boolean): void {
    const record = this.#records.get(uri);
    if (!wanted) {
      const same = record && this.#loose.get(record.loose);
      same?.delete(uri);
      if (record && same?.size === 0) this.#loose.delete(record.loose);
      clearTimeout(record?.silenceTimer);
      this.#records.delete(uri);
      return;
    }
    if (record) {
      record.refs = refs;
      return;
    }
    const loose = looseForm(uri);
    const same = this.#loose.get(loose) ?? new Set<string>();
    same.add(uri);
    this.#loose.set(loose, same);
    this.#records.set(uri, newRecord(loose, refs));
  }

  /** Another tab leads, or this one: the old leader's coverage is gone (a crash says nothing). */
  #updated(uri: string, matched: boolean, at: number): void {
    if (matched) {
      this.#counters.updated += 1;
      const record = this.#records.get(uri);
      if (record) {
        record.notifications += 1;
        record.lastNotificationAt = at;
      }
      return;
    }
    this.#counters.unmatched += 1;
    const key = shown(uri);
    const entry = this.#unmatched.get(key);
    if (entry) {
      this.#unmatched.delete(key);
      this.#unmatched.set(key, { ...entry, count: entry.count + 1, lastAt: at });
      return;
    }
    if (this.#unmatched.size >= MAX_UNMATCHED) {
      const oldest = this.#unmatched.keys().next().value;
      if (oldest !== undefined) this.#unmatched.delete(oldest);
    }
    this.#unmatched.set(key, { uri: key, count: 1, lastAt: at, loose: looseForm(uri) });
  }

  #read(event: McpEventOf<'read'>): void {
    const record = this.#records.get(event.uri);
    if (event.phase === 'start') {
      if (record) {
        record.readStart = { coverages: record.coverages, notifications: record.notifications };
      }
      return;
    }
    this.#counters.reads += 1;
    if (event.phase === 'error') this.#counters.readErrors += 1;
    if (!record) return;
    record.reads += 1;
    const started = record.readStart;
    record.readStart = undefined;
    if (event.phase === 'error') {
      // The contents held are still those of the last read that succeeded, and so is its start.
      record.lastError = event.error;
      record.lastErrorAt = event.at;
      return;
    }
    record.lastReadAt = event.at;
    record.lastError = undefined;
    const before = record.digest;
    if (before !== undefined && event.digest !== before && this.#comparable(event.uri, record)) {
      this.#suspectSilence(event.uri, record);
    }
    record.digest = event.digest;
    record.digestFrom = started;
  }

  /**
   * Whether new content found by the read that just succeeded would be a
   * silent change: covered throughout since the read of the contents it
   * replaces started, and no notification since. Reads that follow a
   * notification never count, even when a read in between failed.
   */
  #comparable(uri: string, record: Record): boolean {
    const previous = record.digestFrom;
    return (
      previous !== undefined &&
      record.silenceTimer === undefined &&
      this.#covered.has(uri) &&
      previous.coverages === record.coverages &&
      previous.notifications === record.notifications
    );
  }

  /** New content no notification announced: silent, unless one follows within the grace. */
  #suspectSilence(uri: string, record: Record): void {
    const announced = record.notifications;
    record.silenceTimer = setTimeout(() => {
      record.silenceTimer = undefined;
      if (this.#records.get(uri) !== record || record.notifications !== announced) return;
      record.silentChanges += 1;
      this.#changed();
    }, SILENCE_GRACE_MS);
    (record.silenceTimer as { unref?: () => void }).unref?.();
  }

  /**
   * Rebuild lazily; tell listeners at most every `emitEveryMs`. While
   * someone listens the snapshot changes only when they are told: a
   * component that renders meanwhile for another reason would otherwise
   * show a newer state than the others (tearing).
   */
  #changed(): void {
    if (this.#listeners.size === 0) {
      this.#snapshot = undefined;
      return;
    }
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#snapshot = undefined;
      for (const listener of [...this.#listeners]) listener();
    }, this.#emitEveryMs);
  }

  #build(): McpDiagnostics {
    const connection = this.#connection;
    const resources: ResourceDiagnostics[] = [...this.#records.keys()].sort().map((uri) => {
      const record = this.#records.get(uri) as Record;
      return {
        uri,
        refs: record.refs,
        notifications: record.notifications,
        lastNotificationAt: record.lastNotificationAt,
        reads: record.reads,
        lastReadAt: record.lastReadAt,
        lastError: record.lastError,
        lastErrorAt: record.lastErrorAt,
        silentChanges: record.silentChanges,
        subscribed: true,
        acknowledged: this.#covered.has(uri),
        declined: this.#declined.get(uri),
      };
    });
    const unmatched = [...this.#unmatched.values()].reverse().map(({ loose, ...entry }) => {
      let nearest: string | undefined;
      for (const candidate of this.#loose.get(loose) ?? []) {
        if (candidate !== entry.uri) nearest ??= candidate;
      }
      return { ...entry, nearest };
    });
    const capabilities = resourceCapabilities(connection.capabilities);
    const lists = this.#listsCovered;
    let retained = 0;
    for (const uri of this.#covered) if (!this.#records.has(uri)) retained += 1;
    const snapshot = {
      status: deriveStatus(connection, this.#stream),
      era: connection.era,
      protocolVersion: connection.protocolVersion,
      capabilities,
      legacy: connection.era === 'legacy',
      stream: this.#stream,
      listAcknowledged: lists.has('resources'),
      lists: {
        resources: lists.has('resources'),
        tools: lists.has('tools'),
        prompts: lists.has('prompts'),
      },
      resources,
      retained,
      unmatched,
      counters: { ...this.#counters },
      lastMalformed: this.#lastMalformed,
      tabs: this.#tabs,
      health: this.#health,
    };
    return { ...snapshot, checks: checks(snapshot) };
  }
}
