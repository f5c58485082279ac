import type { StreamStatus } from './channel';
import type { ConnectionState } from './connection';
import type { NotifiedList } from './lists';

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

export interface ResourceDiagnostics {
  uri: string;
  /** Components holding this URI now (0 while lingering). */
  refs: number;
  /** We want notifications for it (held or lingering). */
  subscribed: boolean;
  /** The server is covering it right now (acknowledged / subscribed with a live stream). */
  acknowledged: boolean;
  /** Why the server is not covering it, if it declined. */
  declined: string | undefined;
  notifications: number;
  lastNotificationAt: number | undefined;
  reads: number;
  lastReadAt: number | undefined;
  lastError: string | undefined;
  lastErrorAt: number | undefined;
  /**
   * Reads that found new content although the URI was covered throughout
   * and no notification had arrived: the server changed it without telling
   * us ("subscribed but silent").
   */
  silentChanges: number;
}

export interface UnmatchedNotification {
  uri: string;
  count: number;
  lastAt: number;
  /** A subscribed URI that differs from this one only in spelling, if any. */
  nearest: string | undefined;
}

export type CheckId = 'capabilities' | 'uri-match' | 'stream' | 'silent';

export interface DiagnosticCheck {
  id: CheckId;
  ok: boolean;
  title: string;
  detail: string;
}

export interface McpDiagnostics {
  status: ConnectionState['phase'];
  era: ConnectionState['era'];
  protocolVersion: string | undefined;
  capabilities: { subscribe: boolean; listChanged: boolean } | undefined;
  /** The 2025 path (resources/subscribe) is in use: do not retry listen against this endpoint. */
  legacy: boolean;
  stream: StreamStatus;
  /** The resource list's `list_changed` notifications are being delivered. */
  listAcknowledged: boolean;
  /** Per list: its `list_changed` notifications are being delivered. */
  lists: Record<NotifiedList, boolean>;
  resources: ResourceDiagnostics[];
  unmatched: UnmatchedNotification[];
  counters: {
    updated: number;
    listChanged: number;
    toolsListChanged: number;
    promptsListChanged: number;
    unmatched: number;
    malformed: number;
    reads: number;
    readErrors: number;
  };
  lastMalformed: { method: string; reason: string; at: number } | undefined;
  checks: DiagnosticCheck[];
}

interface ResourceRecord {
  uri: string;
  notifications: number;
  lastNotificationAt: number | undefined;
  reads: number;
  lastReadAt: number | undefined;
  lastError: string | undefined;
  lastErrorAt: number | undefined;
  silentChanges: number;
  /** Bumped each time coverage of this URI starts. */
  coverageEpoch: number;
  covered: boolean;
  notificationsAtReadStart: number;
  epochAtReadStart: number | undefined;
}

/** What the diagnostics are computed from, read at snapshot time. */
export interface DiagnosticsSource {
  connection(): ConnectionState;
  stream(): StreamStatus;
  refs(uri: string): number;
  subscribed(): readonly string[];
  covered(): ReadonlySet<string>;
  listsCovered(): ReadonlySet<NotifiedList>;
  declined(): ReadonlyMap<string, string>;
}

/** Live answers to the four field questions, cheap to update on every event. */
export class Diagnostics {
  readonly #source: DiagnosticsSource;
  readonly #records = new Map<string, ResourceRecord>();
  readonly #unmatched = new Map<string, UnmatchedNotification>();
  readonly #listeners = new Set<() => void>();
  readonly #now: () => number;
  readonly #emitEveryMs: number;
  readonly #pendingSilent = new Map<string, ReturnType<typeof setTimeout>>();
  #counters = {
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
  #snapshot: McpDiagnostics | undefined;
  #emitTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(source: DiagnosticsSource, options?: { emitEveryMs?: number; now?: () => number }) {
    this.#source = source;
    this.#emitEveryMs = options?.emitEveryMs ?? 100;
    this.#now = options?.now ?? Date.now;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  };

  getSnapshot = (): McpDiagnostics => {
    this.#snapshot ??= this.#build();
    return this.#snapshot;
  };

  /** Something changed: rebuild lazily, tell listeners at most every `emitEveryMs`. */
  changed(): void {
    this.#snapshot = undefined;
    if (this.#emitTimer !== undefined || this.#listeners.size === 0) return;
    this.#emitTimer = setTimeout(() => {
      this.#emitTimer = undefined;
      for (const listener of [...this.#listeners]) listener();
    }, this.#emitEveryMs);
  }

  dispose(): void {
    clearTimeout(this.#emitTimer);
    for (const timer of this.#pendingSilent.values()) clearTimeout(timer);
    this.#pendingSilent.clear();
    this.#listeners.clear();
  }

  notified(uri: string): void {
    const record = this.#record(uri);
    record.notifications += 1;
    record.lastNotificationAt = this.#now();
    this.#counters.updated += 1;
    this.changed();
  }

  unmatched(uri: string): void {
    this.#counters.unmatched += 1;
    const shown = uri.length > MAX_URI_SHOWN ? `${uri.slice(0, MAX_URI_SHOWN)}…` : uri;
    const entry = this.#unmatched.get(shown);
    if (entry) {
      this.#unmatched.delete(shown);
      this.#unmatched.set(shown, { ...entry, count: entry.count + 1, lastAt: this.#now() });
    } else {
      if (this.#unmatched.size >= MAX_UNMATCHED) {
        const oldest = this.#unmatched.keys().next().value;
        if (oldest !== undefined) this.#unmatched.delete(oldest);
      }
      this.#unmatched.set(shown, { uri: shown, count: 1, lastAt: this.#now(), nearest: undefined });
    }
    this.changed();
  }

  listChanged(list: NotifiedList): void {
    if (list === 'resources') this.#counters.listChanged += 1;
    else if (list === 'tools') this.#counters.toolsListChanged += 1;
    else this.#counters.promptsListChanged += 1;
    this.changed();
  }

  malformed(method: string, reason: string): void {
    this.#counters.malformed += 1;
    this.#lastMalformed = { method: method.slice(0, MAX_URI_SHOWN), reason, at: this.#now() };
    this.changed();
  }

  coverageChanged(covered: ReadonlySet<string>, lost: Iterable<string>): void {
    for (const uri of covered) {
      const record = this.#record(uri);
      if (!record.covered) {
        record.covered = true;
        record.coverageEpoch += 1;
      }
    }
    for (const uri of lost) {
      const record = this.#records.get(uri);
      if (record) record.covered = false;
    }
    this.changed();
  }

  readStarted(uri: string): void {
    const record = this.#record(uri);
    record.notificationsAtReadStart = record.notifications;
    record.epochAtReadStart = record.covered ? record.coverageEpoch : undefined;
  }

  /**
   * A read settled with content. `changed` is asked only when a change would
   * count as silent — covered throughout since the previous read, and no
   * notification since — so the comparison of contents costs nothing on the
   * common path (reads that follow a notification).
   */
  readSucceeded(
    uri: string,
    changed: () => boolean,
    start: { notifications: number; epoch: number | undefined },
  ): void {
    const record = this.#record(uri);
    record.reads += 1;
    record.lastReadAt = this.#now();
    record.lastError = undefined;
    this.#counters.reads += 1;
    if (
      start.epoch !== undefined &&
      start.epoch === record.coverageEpoch &&
      record.covered &&
      start.notifications === record.notifications &&
      !this.#pendingSilent.has(uri) &&
      changed()
    ) {
      const announced = record.notifications;
      const timer = setTimeout(() => {
        this.#pendingSilent.delete(uri);
        if (record.notifications !== announced) return; // announced late, not silent
        record.silentChanges += 1;
        this.changed();
      }, SILENCE_GRACE_MS);
      (timer as { unref?: () => void }).unref?.();
      this.#pendingSilent.set(uri, timer);
    }
    this.changed();
  }

  readFailed(uri: string, message: string): void {
    const record = this.#record(uri);
    record.reads += 1;
    record.lastError = message;
    record.lastErrorAt = this.#now();
    this.#counters.reads += 1;
    this.#counters.readErrors += 1;
    this.changed();
  }

  /**
   * The markers a read needs to judge, when it ends, whether a change came
   * unannounced: what the URI's previous read saw when it started.
   */
  previousReadMarkers(uri: string): { notifications: number; epoch: number | undefined } {
    const record = this.#record(uri);
    return { notifications: record.notificationsAtReadStart, epoch: record.epochAtReadStart };
  }

  /** When this URI last had a notification or a read, whichever is later. */
  lastActivity(uri: string): number | undefined {
    const record = this.#records.get(uri);
    if (!record) return undefined;
    return Math.max(record.lastNotificationAt ?? 0, record.lastReadAt ?? 0) || undefined;
  }

  forget(uri: string): void {
    this.#records.delete(uri);
    this.changed();
  }

  #record(uri: string): ResourceRecord {
    let record = this.#records.get(uri);
    if (!record) {
      record = {
        uri,
        notifications: 0,
        lastNotificationAt: undefined,
        reads: 0,
        lastReadAt: undefined,
        lastError: undefined,
        lastErrorAt: undefined,
        silentChanges: 0,
        coverageEpoch: 0,
        covered: false,
        notificationsAtReadStart: 0,
        epochAtReadStart: undefined,
      };
      this.#records.set(uri, record);
    }
    return record;
  }

  #build(): McpDiagnostics {
    const source = this.#source;
    const connection = source.connection();
    const stream = source.stream();
    const covered = source.covered();
    const declined = source.declined();
    const subscribed = new Set(source.subscribed());
    const uris = new Set([...subscribed, ...covered, ...declined.keys(), ...this.#records.keys()]);
    const resources: ResourceDiagnostics[] = [...uris].sort().map((uri) => {
      const record = this.#records.get(uri);
      return {
        uri,
        refs: source.refs(uri),
        subscribed: subscribed.has(uri),
        acknowledged: covered.has(uri),
        declined: declined.get(uri),
        notifications: record?.notifications ?? 0,
        lastNotificationAt: record?.lastNotificationAt,
        reads: record?.reads ?? 0,
        lastReadAt: record?.lastReadAt,
        lastError: record?.lastError,
        lastErrorAt: record?.lastErrorAt,
        silentChanges: record?.silentChanges ?? 0,
      };
    });
    const unmatched = [...this.#unmatched.values()]
      .reverse()
      .map((entry) => ({ ...entry, nearest: nearestSpelling(entry.uri, subscribed) }));
    const capabilities = connection.capabilities
      ? {
          subscribe: connection.capabilities.resources?.subscribe === true,
          listChanged: connection.capabilities.resources?.listChanged === true,
        }
      : undefined;
    return {
      status: connection.phase,
      era: connection.era,
      protocolVersion: connection.protocolVersion,
      capabilities,
      legacy: connection.era === 'legacy',
      stream,
      listAcknowledged: source.listsCovered().has('resources'),
      lists: {
        resources: source.listsCovered().has('resources'),
        tools: source.listsCovered().has('tools'),
        prompts: source.listsCovered().has('prompts'),
      },
      resources,
      unmatched,
      counters: { ...this.#counters },
      lastMalformed: this.#lastMalformed,
      checks: checks(connection, capabilities, stream, resources, unmatched),
    };
  }
}

function checks(
  connection: ConnectionState,
  capabilities: McpDiagnostics['capabilities'],
  stream: StreamStatus,
  resources: ResourceDiagnostics[],
  unmatched: UnmatchedNotification[],
): DiagnosticCheck[] {
  const missing = capabilities
    ? [
        !capabilities.subscribe && 'resources.subscribe',
        !capabilities.listChanged && 'resources.listChanged',
      ].filter(Boolean)
    : [];
  const capabilityCheck: DiagnosticCheck = {
    id: 'capabilities',
    ok: capabilities !== undefined && missing.length === 0,
    title: 'Server declares resource notifications',
    detail: !capabilities
      ? 'not connected yet'
      : missing.length === 0
        ? `resources.subscribe and resources.listChanged declared (${eraName(connection)})`
        : `not declared: ${missing.join(', ')} — those changes are never pushed; data follows its TTL`,
  };
  const uriCheck: DiagnosticCheck = {
    id: 'uri-match',
    ok: unmatched.length === 0,
    title: 'Notifications name exactly the subscribed URIs',
    detail:
      unmatched.length === 0
        ? 'every update matched a subscribed URI'
        : unmatched
            .slice(0, 3)
            .map((entry) =>
              entry.nearest
                ? `server sent "${entry.uri}", you subscribed "${entry.nearest}" (URIs must match exactly)`
                : `server sent "${entry.uri}" ×${entry.count}, which nobody subscribed`,
            )
            .join('; '),
  };
  const streamCheck: DiagnosticCheck = {
    id: 'stream',
    ok: stream.state === 'open' || stream.state === 'idle',
    title: 'The change stream is alive',
    detail: streamDetail(stream),
  };
  const silent = resources.filter((resource) => resource.silentChanges > 0);
  const silentCheck: DiagnosticCheck = {
    id: 'silent',
    ok: silent.length === 0,
    title: 'Subscribed resources are not silent',
    detail:
      silent.length === 0
        ? 'no acknowledged resource changed without a notification'
        : silent
            .slice(0, 3)
            .map(
              (resource) =>
                `${resource.uri} changed ${resource.silentChanges}× with no notification (last notification: ${
                  resource.lastNotificationAt
                    ? new Date(resource.lastNotificationAt).toISOString()
                    : 'never'
                }) — is the server publishing on another process or instance?`,
            )
            .join('; '),
  };
  return [capabilityCheck, uriCheck, streamCheck, silentCheck];
}

function eraName(connection: ConnectionState): string {
  return connection.era === 'legacy'
    ? `2025 era: resources/subscribe, protocol ${connection.protocolVersion ?? '?'}`
    : `2026-07-28 era: subscriptions/listen`;
}

function streamDetail(stream: StreamStatus): string {
  const since = new Date(stream.since).toISOString();
  const parts = [`${stream.kind} stream ${stream.state} since ${since}`];
  if (stream.reopenCount > 0) parts.push(`reopened ${stream.reopenCount}×`);
  if (stream.lastCloseReason) parts.push(`last close: ${stream.lastCloseReason}`);
  if (stream.nextRetryAt) parts.push(`next attempt ${new Date(stream.nextRetryAt).toISOString()}`);
  if (stream.lastError) parts.push(`last error: ${stream.lastError}`);
  if (stream.note) parts.push(stream.note);
  return parts.join(', ');
}

/**
 * A subscribed URI equal to `uri` after forgiving the usual mistakes
 * (case, trailing slash, percent-encoding): the hint a developer needs when
 * the server notifies a different spelling than the one subscribed.
 */
function nearestSpelling(uri: string, subscribed: ReadonlySet<string>): string | undefined {
  const loose = (value: string) => {
    let decoded = value;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      // keep the raw spelling
    }
    return decoded.toLowerCase().replace(/\/+$/, '');
  };
  const target = loose(uri);
  for (const candidate of subscribed) {
    if (candidate !== uri && loose(candidate) === target) return candidate;
  }
  return undefined;
}
