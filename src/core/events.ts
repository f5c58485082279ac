import type { LoggingLevel, ServerCapabilities } from '@modelcontextprotocol/client';
import { type Clock, systemClock } from './clock';
import type { ListKind, NotifiedList } from './lists';

export type Era = 'modern' | 'legacy';

export type ConnectionPhase =
  | 'connecting'
  | 'ready'
  | 'reconnecting'
  | 'unauthorized'
  | 'error'
  | 'closed';

/** The connection as a plain, cloneable value (no client object in it). */
export interface ConnectionSnapshot {
  phase: ConnectionPhase;
  era: Era | undefined;
  protocolVersion: string | undefined;
  capabilities: ServerCapabilities | undefined;
  error: Error | undefined;
  /** Consecutive failed attempts in the current outage. */
  attempt: number;
  nextRetryAt: number | undefined;
  /** Connections re-established after a loss. */
  reconnects: number;
  lastLoss: string | undefined;
}

export type StreamState =
  | 'idle' // nothing to listen to
  | 'opening' // first stream / subscriptions being established
  | 'open'
  | 'reopening' // lost; re-establishing with backoff
  | 'unsupported' // the server offers nothing we can listen to
  | 'closed';

export type CloseReason = 'local' | 'graceful' | 'remote' | 'error';

export interface StreamStatus {
  kind: 'listen' | 'legacy' | 'none';
  state: StreamState;
  since: number;
  reopenCount: number;
  lastCloseReason: CloseReason | undefined;
  attempt: number;
  nextRetryAt: number | undefined;
  lastError: string | undefined;
  /** Why the stream is unsupported or idle, for humans. */
  note: string | undefined;
}

/**
 * Everything that happens between the server and the cache, as it happens.
 * The diagnostics, `useMcp()` state and the devtools are all folds over this
 * one stream; every event is a plain value (structured-cloneable).
 */
export type McpEvent = { at: number } & (
  | { type: 'connection'; state: ConnectionSnapshot }
  /** The status `useMcp()` shows changed (connection phase, or `reconnecting` while the stream is re-established). */
  | { type: 'status'; status: ConnectionPhase }
  | { type: 'stream'; status: StreamStatus }
  /** A URI became wanted (held or lingering), its holder count changed, or it was released. */
  | { type: 'interest'; uri: string; refs: number; wanted: boolean }
  | { type: 'coverage'; acknowledged: string[]; lost: string[]; lists: NotifiedList[] }
  /** URIs the server would not cover (reason), or covers again (null). */
  | { type: 'declined'; changes: [uri: string, reason: string | null][] }
  | { type: 'updated'; uri: string; matched: boolean }
  | { type: 'list_changed'; list: NotifiedList }
  /** Tab sharing: whether this tab holds the connection, how many tabs share it, leader changes. */
  | { type: 'tabs'; leader: boolean; tabs: number; handovers: number }
  | { type: 'malformed'; method: string; reason: string }
  /**
   * A server's `notifications/message`: `data` as sent (a JSON value; past 8,000 characters of
   * JSON, that JSON cut, as a string), `logger` cut at 200.
   */
  | { type: 'log'; level: LoggingLevel; logger?: string; data: unknown }
  /** A task's status, as the server announced it (`notifications/tasks/status`). */
  | { type: 'task'; taskId: string; status: string }
  /** A keep-alive ping (`keepAlive`): its round trip, or why it failed (then the connection reconnects). */
  | { type: 'ping'; rttMs?: number; error?: string }
  /** `digest`: a fingerprint of the contents read (equal contents, equal digest), while diagnostics are in use. */
  | {
      type: 'read';
      phase: 'start' | 'success' | 'error';
      uri: string;
      error?: string;
      digest?: string;
    }
  | {
      type: 'list';
      list: ListKind;
      phase: 'start' | 'success' | 'error';
      count?: number;
      error?: string;
    }
);

/** One member of the union, by its `type`. */
export type McpEventOf<T extends McpEvent['type']> = Extract<McpEvent, { type: T }>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type McpEventInput = DistributiveOmit<McpEvent, 'at'>;

export type Emit = (event: McpEventInput) => void;

type Listener = (event: McpEvent) => void;

/**
 * Synchronous, ordered fan-out. An event emitted while listeners are still
 * handling another is queued, so every listener sees every event in the same
 * order. A throwing listener never breaks delivery to the others.
 */
export class EventBus {
  readonly #listeners = new Set<Listener>();
  readonly #queue: McpEvent[] = [];
  /** Where every event's time comes from (folds that need the time read it here too). */
  readonly clock: Clock;
  #draining = false;

  constructor(clock: Clock = systemClock) {
    this.clock = clock;
  }

  subscribe = (listener: Listener): (() => void) => {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  };

  emit: Emit = (input) => {
    this.dispatch({ ...input, at: this.clock.now() } as McpEvent);
  };

  /** Deliver an event that already has its time (e.g. one relayed from another tab). */
  dispatch(event: McpEvent): void {
    this.#queue.push(event);
    if (this.#draining) return;
    this.#draining = true;
    try {
      for (let next = this.#queue.shift(); next; next = this.#queue.shift()) {
        for (const listener of this.#listeners) {
          try {
            listener(next);
          } catch {
            // A broken listener must not break delivery to the cache.
          }
        }
      }
    } finally {
      this.#draining = false;
    }
  }
}
