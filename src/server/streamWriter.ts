import { type BackoffOptions, backoffDelay } from '../core/backoff';
import type { RedisEventBusClient } from './client';
import type { Reporter } from './errors';
import { Outbox } from './outbox';

export interface StreamWriterOptions {
  key: string;
  /** Approximate `MAXLEN` kept on every write. */
  retain: number;
  maxQueued: number;
  backoff: BackoffOptions;
  /**
   * A write unanswered this long means Redis cannot take events (a frozen connection: without
   * a socket timeout node-redis waits for its answer for good). Later events then wait in the
   * outbox, and `close()` waits no longer than this for answers.
   */
  stallMs: number;
}

export interface WriterCounts {
  sent: number;
  failedPublishes: number;
  deferred: number;
  coalesced: number;
  dropped: number;
}

/** Redis' answer to `XADD … *` once the stream's last id is the largest there is. */
const EXHAUSTED = /exhausted the last possible ID/i;

/**
 * What a refused write means, where Redis' own words say too little. A stream whose last id is
 * `18446744073709551615-18446744073709551615` (an entry added with that id, even one trimmed or
 * deleted since) refuses every `XADD … *` for good: retrying cannot help, the key must go.
 */
function writeFailure(error: unknown, key: string): string {
  if (!EXHAUSTED.test(String(error))) return '';
  return `: the stream "${key}" has reached the largest possible id (an entry was added with it), so Redis refuses every write to it until the key is deleted`;
}

/**
 * Appends events to the stream with the caller's client. While that client is not ready, or
 * Redis refuses writes, events wait in a bounded outbox and go out on the client's next
 * 'ready' (or a backoff retry). Nothing is handed to node-redis' own offline queue, which is
 * unbounded and silent.
 */
export class StreamWriter {
  readonly #redis: RedisEventBusClient;
  readonly #options: StreamWriterOptions;
  readonly #reporter: Reporter;
  readonly #outbox: Outbox;
  /** Writes sent and not answered yet, oldest first, with when each was sent. */
  readonly #inFlight = new Map<Promise<void>, number>();
  readonly counts: WriterCounts = {
    sent: 0,
    failedPublishes: 0,
    deferred: 0,
    coalesced: 0,
    dropped: 0,
  };
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #retryAttempt = 0;
  #outage = false;
  #closed = false;
  /** The oldest write in flight has gone unanswered for `stallMs`. */
  #stalled = false;
  #watchdog: ReturnType<typeof setTimeout> | undefined;
  #onStall: (() => void) | undefined;
  /** `close()` has counted what was never written: later answers change nothing. */
  #done = false;
  /** A retry's one write is in flight: the rest waits for its answer. */
  #probing = false;

  constructor(redis: RedisEventBusClient, options: StreamWriterOptions, reporter: Reporter) {
    this.#redis = redis;
    this.#options = options;
    this.#reporter = reporter;
    this.#outbox = new Outbox(options.maxQueued);
    redis.on('ready', this.#onReady);
  }

  /** Events not confirmed written yet: waiting, or sent (a retry too) and not answered. */
  get queued(): number {
    return this.#outbox.size + this.#inFlight.size;
  }

  write(payload: string): void {
    if (!this.#redis.isReady || this.#outbox.size > 0 || this.#stalled) {
      this.counts.deferred += 1;
      this.#enterOutage('Redis cannot take events now; they are queued until it can');
    }
    this.#enqueue(payload);
    this.#flush();
  }

  /**
   * One last attempt, then waits for every write's answer, or until the oldest has gone
   * unanswered for `stallMs`. Resolves with the events never written (or never confirmed).
   */
  async close(): Promise<number> {
    this.#closed = true;
    this.#redis.off('ready', this.#onReady);
    this.#cancelRetry();
    this.#probing = false;
    this.#flush();
    if (!this.#stalled && this.#inFlight.size > 0) {
      await new Promise<void>((resolve) => {
        this.#onStall = resolve;
        void Promise.allSettled([...this.#inFlight.keys()]).then(() => resolve());
      });
    }
    this.#done = true;
    clearTimeout(this.#watchdog);
    this.#watchdog = undefined;
    return this.#outbox.drain().length + this.#inFlight.size;
  }

  readonly #onReady = (): void => {
    this.#retryAttempt = 0;
    this.#cancelRetry();
    this.#flush();
  };

  #enqueue(payload: string, inFront = false): void {
    const result = inFront ? this.#outbox.unshift(payload) : this.#outbox.add(payload);
    if (result === 'coalesced') this.counts.coalesced += 1;
    if (result === 'overflow') {
      this.counts.dropped += 1;
      this.#reporter.report('overflow', 'event queue full: the oldest waiting event was dropped');
    }
  }

  #enterOutage(message: string, cause?: unknown): void {
    if (this.#outage) return;
    this.#outage = true;
    this.#reporter.report('unavailable', message, cause);
  }

  /**
   * Sends everything waiting, if Redis can take it. While a retry is pending, new events only
   * join the queue: resending the whole queue on every publish would hammer a server that is
   * refusing writes.
   */
  #flush(): void {
    if (this.#retryTimer !== undefined || this.#stalled || this.#probing) return;
    if (this.#outbox.size === 0 || !this.#redis.isReady) return;
    for (const payload of this.#outbox.drain()) this.#send(payload);
  }

  /**
   * A retry while Redis refuses writes: the oldest waiting event alone. Once it is written the
   * rest follows; refused, it waits in front again. A Redis out of memory, say, is asked one
   * write per retry, not the whole queue.
   */
  #retry(): void {
    if (this.#stalled || this.#probing || !this.#redis.isReady) return;
    const payload = this.#outbox.shift();
    if (payload === undefined) return;
    this.#probing = true;
    this.#send(payload, true);
  }

  #send(payload: string, probe = false): void {
    const { key, retain } = this.#options;
    const write = this.#redis
      .sendCommand(['XADD', key, 'MAXLEN', '~', String(retain), '*', 'm', payload])
      .then(
        () => {
          this.#inFlight.delete(write);
          this.counts.sent += 1;
          this.#retryAttempt = 0;
          if (this.#outbox.size === 0) this.#outage = false;
          if (!probe || !this.#probing) return;
          this.#probing = false;
          this.#flush();
        },
        (error: unknown) => {
          // Out of flight before it waits again: counted once in `queued`, never twice.
          this.#inFlight.delete(write);
          if (probe) this.#probing = false;
          if (this.#done) return;
          // Possibly written anyway (only the reply was lost): a duplicate invalidation is
          // harmless, a lost one is not.
          this.counts.failedPublishes += 1;
          const why = writeFailure(error, key);
          this.#reporter.report('publish-failed', `writing an event to Redis failed${why}`, error);
          this.#enterOutage(
            `Redis refused or lost a write${why}; events are queued and retried`,
            error,
          );
          this.#enqueue(payload, probe);
          if (!this.#closed) this.#scheduleRetry();
        },
      );
    this.#inFlight.set(write, performance.now());
    this.#armWatchdog();
    void write.finally(() => {
      this.#inFlight.delete(write);
      if (this.#inFlight.size === 0) {
        clearTimeout(this.#watchdog);
        this.#watchdog = undefined;
      }
      if (!this.#stalled || this.#done) return;
      // Redis answers again: what waited behind the stall goes out.
      this.#stalled = false;
      this.#armWatchdog();
      this.#flush();
    });
  }

  /** Watches the oldest write in flight; one timer, only while something is in flight. */
  #armWatchdog(): void {
    if (this.#watchdog !== undefined || this.#stalled || this.#done) return;
    const oldest = this.#inFlight.values().next().value;
    if (oldest === undefined) return;
    const wait = Math.max(0, oldest + this.#options.stallMs - performance.now());
    this.#watchdog = setTimeout(() => {
      this.#watchdog = undefined;
      const first = this.#inFlight.values().next().value;
      if (first === undefined) return;
      if (performance.now() - first < this.#options.stallMs) {
        this.#armWatchdog();
        return;
      }
      this.#stalled = true;
      this.#enterOutage(
        `Redis has not answered a write for ${this.#options.stallMs} ms; events are queued until it does`,
      );
      this.#onStall?.();
    }, wait);
    (this.#watchdog as { unref?: () => void }).unref?.();
  }

  /** For writes refused while connected (OOM, a READONLY replica): no 'ready' event would retry them. */
  #scheduleRetry(): void {
    if (this.#retryTimer !== undefined) return;
    const delay = backoffDelay(this.#retryAttempt++, this.#options.backoff);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.#retry();
    }, delay);
    // A forgotten bus must not keep a process alive on its own account.
    (this.#retryTimer as { unref?: () => void }).unref?.();
  }

  #cancelRetry(): void {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }
}
