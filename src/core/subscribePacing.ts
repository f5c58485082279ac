import type { StreamStatus } from './events';
import type { LegacyStreamState } from './httpTransport';

/**
 * The 2025 channel's pure decisions: how many requests go at once, and what
 * its session's SSE stream shows as.
 */

/**
 * Subscribes in flight at once; the rest wait their turn in the channel, not
 * in the HTTP client's queue, where the SDK's timeout would be running (a
 * browser has six connections per host, and a list can bring thousands of rows).
 */
export const SUBSCRIBES_AT_ONCE = 32;
/**
 * Unsubscribes wait while subscribes are being sent (a list scrolling through
 * new rows needs its requests for them), up to this many; beyond it they go
 * one at a time…
 */
const MAX_WAITING_UNSUBSCRIBES = 256;
/** …and once subscribing has paused, this many at a time (a browser has few connections). */
const UNSUBSCRIBES_AT_ONCE = 4;

/**
 * How many unsubscribes may be in flight now, with `waiting` of them waiting
 * and subscribing paused for another `resumeInMs` (≤ 0: it has paused): none
 * while subscribes are being sent unless too many wait, then one; once
 * subscribing paused, a few.
 */
export function unsubscribesAtOnce(waiting: number, resumeInMs: number): number {
  if (resumeInMs <= 0) return UNSUBSCRIBES_AT_ONCE;
  return waiting > MAX_WAITING_UNSUBSCRIBES ? 1 : 0;
}

/**
 * Why nothing subscribed could be heard, if so: the server cannot subscribe,
 * or its session has no SSE stream. Every wanted URI is declined with it.
 */
export function unheard(canSubscribe: boolean, stream: LegacyStreamState): string | undefined {
  if (!canSubscribe) return 'the server did not declare resources.subscribe';
  return stream === 'unsupported' ? legacyStreamView(stream).note : undefined;
}

/** The stream status's counts once the SSE stream is in `state`: a resumption is a reopening. */
export function countedStatus(status: StreamStatus, state: LegacyStreamState): StreamStatus {
  if (state === 'resuming') {
    const { reopenCount, attempt } = status;
    return {
      ...status,
      reopenCount: reopenCount + 1,
      lastCloseReason: 'remote',
      attempt: attempt + 1,
    };
  }
  return state === 'open' ? { ...status, attempt: 0 } : status;
}

/** What a 2025 session's SSE stream state shows as in its stream status. */
export function legacyStreamView(stream: LegacyStreamState): Pick<StreamStatus, 'state' | 'note'> {
  if (stream === 'unsupported') {
    return {
      state: 'unsupported',
      note: 'the server has no standalone SSE stream (its GET answered 405, or not with an event stream): notifications cannot arrive',
    };
  }
  if (stream === 'unknown') {
    return {
      state: 'open',
      note: 'custom transport: the SSE stream cannot be observed and is assumed open',
    };
  }
  return {
    state: stream === 'open' ? 'open' : stream === 'resuming' ? 'reopening' : 'opening',
    note: undefined,
  };
}
