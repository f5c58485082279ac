import type { CloseReason, StreamStatus } from './events';
import type { Desire } from './interest';
import type { NotifiedList } from './lists';

/**
 * What the server has agreed to tell us right now. A URI is covered only
 * while a live stream (or a 2025 subscription plus its SSE stream) carries
 * its notifications; everything else falls back to TTL freshness.
 */
export interface Coverage {
  uris: ReadonlySet<string>;
  lists: ReadonlySet<NotifiedList>;
}

export const noCoverage: Coverage = { uris: new Set(), lists: new Set() };

/** How a channel reports to its session. */
export interface ChannelReport {
  /** The complete covered set, replacing the previous one. */
  coverage(next: Coverage): void;
  /** URIs the server would not cover, with the reason (the complete map). */
  declined(next: ReadonlyMap<string, string>): void;
  status(next: StreamStatus): void;
}

/** One era's way of turning what is wanted into server-side subscriptions. */
export interface ChangeChannel {
  update(desire: Desire): void;
  /**
   * Whether coverage of `uri` can still come without anything else changing
   * (false: the server cannot, or said no). A read waits for coverage only
   * while this holds.
   */
  mayCover(uri: string): boolean;
  mayCoverList(list: NotifiedList): boolean;
  /**
   * After the channel's lifetime (its session's signal) ended: close what is
   * still open on the server. Resolves once it is closed.
   */
  close(): Promise<void>;
}

export function initialStatus(kind: StreamStatus['kind'], now: number): StreamStatus {
  return {
    kind,
    state: 'idle',
    since: now,
    reopenCount: 0,
    lastCloseReason: undefined,
    attempt: 0,
    nextRetryAt: undefined,
    lastError: undefined,
    note: undefined,
  };
}

export type { CloseReason };
