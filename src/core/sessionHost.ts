import type { LoggingLevel } from '@modelcontextprotocol/client';
import type { BackoffOptions } from './backoff';
import type { CoverageChange } from './channel';
import type { Clock } from './clock';
import type { Emit, StreamStatus } from './events';
import type { Desire } from './interest';
import type { NotifiedList } from './lists';
import type { Retention } from './retention';

/* What a session needs from the engine that opens it, and what it tells it. */

/** What is wanted (the interest registry). */
export interface Wanted {
  desire(): Desire;
  /** Whether `uri` is held or lingering. */
  wants(uri: string): boolean;
  wantsList(list: NotifiedList): boolean;
}

/** Where a session's changes go (the cache bridge). */
export interface ChangeTarget {
  /** A matched `updated` notification: re-read `uri`. */
  changed(uri: string): void;
  listChanged(list: NotifiedList): void;
  /** Newly covered data may be stale (rule 4); uncovered data follows its TTL. */
  coverageChanged(change: CoverageChange): void;
}

/** What a session tells its connection (only while it lives). */
export interface SessionControl {
  /** This session can no longer deliver (2025: stream ended, session forgotten). */
  lost(reason: string, endSession: boolean): void;
  /** A request on it failed: if for want of credentials, the connection waits for them. */
  failed(error: unknown): void;
}

/** What the engine gives every session. */
export interface SessionHost extends SessionControl {
  emit: Emit;
  wanted: Wanted;
  changes: ChangeTarget;
  /** The log level asked for now (`useServerLog`), if any. */
  logLevel?(): LoggingLevel | undefined;
}

export interface SessionOptions {
  backoff: BackoffOptions;
  ackTimeoutMs: number;
  requestTimeoutMs: number;
  retention: Retention;
  /** Released URIs still subscribed go once nothing has changed for this long. */
  releaseAfterMs: number;
  /** Reopen count and last close reason of the sessions before this one. */
  history: Pick<StreamStatus, 'reopenCount' | 'lastCloseReason'>;
  clock: Clock;
}
