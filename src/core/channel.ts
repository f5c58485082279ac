import type { NotifiedList } from './lists';

/** What the provider wants to hear about, recomputed whenever it changes. */
export interface ChannelDesire {
  /** Subscribed URIs, sorted. */
  uris: readonly string[];
  /** Lists whose `list_changed` is wanted (resources always; tools/prompts while shown). */
  lists: ReadonlySet<NotifiedList>;
}

/**
 * What the server has agreed to tell us right now. A URI is covered only
 * while a live stream (or legacy subscription plus its SSE stream) carries
 * its notifications; everything else falls back to TTL freshness.
 */
export interface Coverage {
  uris: ReadonlySet<string>;
  lists: ReadonlySet<NotifiedList>;
}

export const noCoverage: Coverage = { uris: new Set(), lists: new Set() };

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

export interface ChannelEvents {
  /** The complete covered set, replacing the previous one. */
  coverage(next: Coverage): void;
  /** URIs the server would not cover, with the reason (complete map). */
  declined(next: ReadonlyMap<string, string>): void;
  status(next: StreamStatus): void;
}

/** One era's way of turning a desired URI set into server-side subscriptions. */
export interface ChangeChannel {
  update(desire: ChannelDesire): void;
  /** Whether a request that would cover `uri` is in flight now. */
  isEstablishing(uri: string): boolean;
  /** Whether a request that would deliver this list's `list_changed` is in flight now. */
  isEstablishingList(list: NotifiedList): boolean;
  dispose(): Promise<void>;
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
