export type RedisEventBusErrorCode =
  /** An entry on the stream was not a valid event; it was dropped. */
  | 'malformed'
  /** `publish()` got an invalid or oversized event, or was called after `close()`. */
  | 'rejected'
  /** Redis cannot take events right now; they are queued until it can. Once per outage. */
  | 'unavailable'
  /** Writing an event failed; it was queued again and will be retried. */
  | 'publish-failed'
  /** The queue was full; the oldest waiting event was dropped. */
  | 'overflow'
  /** A local listener threw; the other listeners still got the event. */
  | 'listener'
  /** The reading connection was lost; it reconnects and resumes where it stopped. Once per outage. */
  | 'disconnected'
  /** A read failed while connected (e.g. the key holds something that is not a stream). */
  | 'reader'
  /** Events were trimmed from the stream before this instance could read them: they are lost. */
  | 'gap'
  /** `close()` found events that were never written to Redis, or written and never confirmed. */
  | 'unsent';

export class RedisEventBusError extends Error {
  readonly code: RedisEventBusErrorCode;

  constructor(code: RedisEventBusErrorCode, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'RedisEventBusError';
    this.code = code;
  }
}

/** Codes whose every occurrence is worth a report: each one is an episode, not a flood. */
const EPISODES: ReadonlySet<RedisEventBusErrorCode> = new Set([
  'unavailable',
  'disconnected',
  'gap',
  'unsent',
]);

/**
 * Calls `onerror`, but a flood of one kind (a hostile publisher writing garbage, a listener
 * that always throws) is reported at its 1st, 2nd, 4th, 8th… occurrence: enough to see it and
 * its scale in a log, never a log line per event.
 */
export class Reporter {
  readonly #onerror: ((error: RedisEventBusError) => void) | undefined;
  readonly #seen = new Map<RedisEventBusErrorCode, number>();

  constructor(onerror: ((error: RedisEventBusError) => void) | undefined) {
    this.#onerror = onerror;
  }

  report(code: RedisEventBusErrorCode, message: string, cause?: unknown): void {
    const seen = (this.#seen.get(code) ?? 0) + 1;
    this.#seen.set(code, seen);
    if (!EPISODES.has(code) && (seen & (seen - 1)) !== 0) return;
    const suffix = EPISODES.has(code) || seen === 1 ? '' : ` (${seen} so far)`;
    try {
      this.#onerror?.(new RedisEventBusError(code, `${message}${suffix}`, cause));
    } catch {
      // A broken error hook must not break delivery.
    }
  }
}
