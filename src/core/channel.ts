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
  /**
   * Which of the URIs and lists it names are covered now (gained) or not
   * (lost); the session ignores what it knew already. A 2025 channel learns
   * coverage one URI at a time, and names that URI alone: a session holding
   * thousands of subscriptions does not pay for them on every answer.
   */
  coverage(change: CoverageDiff): void;
  /**
   * URIs the server would not cover now, with the reason, or null for one no
   * longer declined; only what changed (a 2025 refusal names its URI alone).
   */
  declined(changes: DeclinedChanges): void;
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
  /** Whether `uri`'s request waits its turn here or is in flight: its own outcome is near. */
  asking?(uri: string): boolean;
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

/** Coverage that moved: what was gained and lost, and which gains reads were waiting for. */
export interface CoverageChange {
  gained: readonly string[];
  lost: readonly string[];
  listsGained: readonly NotifiedList[];
  listsLost: readonly NotifiedList[];
  /** Gained URIs and lists that reads were waiting for: those reads go out covered now (rule 4). */
  awaited: { uris: ReadonlySet<string>; lists: ReadonlySet<NotifiedList> };
}

export interface CoverageDiff {
  gained: readonly string[];
  lost: readonly string[];
  listsGained: readonly NotifiedList[];
  listsLost: readonly NotifiedList[];
}

/** What changed between two coverages, or undefined when nothing did. */
export function coverageDiff(previous: Coverage, next: Coverage): CoverageDiff | undefined {
  const gained = [...next.uris].filter((uri) => !previous.uris.has(uri));
  const lost = [...previous.uris].filter((uri) => !next.uris.has(uri));
  const listsGained = [...next.lists].filter((list) => !previous.lists.has(list));
  const listsLost = [...previous.lists].filter((list) => !next.lists.has(list));
  if (gained.length + lost.length + listsGained.length + listsLost.length === 0) return undefined;
  return { gained, lost, listsGained, listsLost };
}

/** Declined URIs with their reason, or null when no longer declined (as a `declined` event says). */
export type DeclinedChanges = [uri: string, reason: string | null][];

/** What changed between two declined maps. */
export function declinedChanges(
  previous: ReadonlyMap<string, string>,
  next: ReadonlyMap<string, string>,
): [string, string | null][] {
  const changes: [string, string | null][] = [];
  for (const [uri, reason] of next) if (previous.get(uri) !== reason) changes.push([uri, reason]);
  for (const uri of previous.keys()) if (!next.has(uri)) changes.push([uri, null]);
  return changes;
}

/** Whether a stream status differs from the previous one in anything an app is shown. */
export function statusChanged(previous: StreamStatus, next: StreamStatus): boolean {
  return (
    next.state !== previous.state ||
    next.kind !== previous.kind ||
    next.attempt !== previous.attempt ||
    next.note !== previous.note ||
    next.lastError !== previous.lastError
  );
}

export type { CloseReason };
