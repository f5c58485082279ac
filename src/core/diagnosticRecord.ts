import type { ResourceDiagnostics } from './checks';

/** Where a read started: how many times coverage began and the notifications seen by then. */
export interface Marker {
  coverages: number;
  notifications: number;
}

/** What the diagnostics keep of one wanted URI. */
export type ResourceRecord = Omit<
  ResourceDiagnostics,
  'uri' | 'subscribed' | 'acknowledged' | 'declined'
> & {
  loose: string;
  /** Bumped each time coverage of this URI begins. */
  coverages: number;
  /** Where the read under way started. */
  readStart: Marker | undefined;
  /** The digest of the latest contents read, and where the read that got them started. */
  digest: string | undefined;
  digestFrom: Marker | undefined;
  /** A change found by a read, waiting for a late notification before it counts as silent. */
  silenceTimer: ReturnType<typeof setTimeout> | undefined;
};

/** A URI that just became wanted: nothing seen yet. */
export function newRecord(loose: string, refs: number): ResourceRecord {
  return {
    loose,
    refs,
    notifications: 0,
    lastNotificationAt: undefined,
    reads: 0,
    lastReadAt: undefined,
    lastError: undefined,
    lastErrorAt: undefined,
    silentChanges: 0,
    coverages: 0,
    readStart: undefined,
    digest: undefined,
    digestFrom: undefined,
    silenceTimer: undefined,
  };
}
