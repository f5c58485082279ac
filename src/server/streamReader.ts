import { type BackoffOptions, backoffDelay } from '../core/backoff';
import type { RedisEventBusConnection } from './client';
import { RedisClock, streamLength } from './optionalCommands';
import { type Position, reconcile } from './streamPosition';
import {
  compareIds,
  type StreamEntry,
  type StreamInfo,
  streamInfo,
  xreadEntries,
} from './streamReply';

/** Idle reads past the clock with an unchanged XLEN between two XINFO STREAM (`#checkRecreated`). */
const LOOK_EVERY = 10;

/**
 * Replies of the stream commands with every blob string as bytes (`RESP_TYPES.BLOB_STRING` is
 * `$`, 36): an entry's payload is then measured before it is decoded, and one longer than V8's
 * longest string (Redis takes 512 MB) does not make node-redis throw on every read of it, which
 * would drop the connection, re-read the entry and never get past it. `XINFO STREAM` returns
 * the first and last entries whole, so it is read this way too.
 */
const BYTES = { typeMapping: { 36: (globalThis as { Buffer?: unknown }).Buffer } };

export interface StreamReaderEvents {
  /** Positioned at the end of the stream: everything written from now on will be read. */
  positioned(): void;
  entries(entries: StreamEntry[]): void;
  /** The connection dropped (once per outage). */
  disconnected(error: unknown): void;
  /** The connection is back; reading resumes after the last entry read. */
  reconnected(): void;
  /**
   * `count` entries written after `lastId` were trimmed before they could be read; undefined:
   * Redis went back to an older copy of the stream (see `reconcile`), and what was written after
   * that copy and not read here is lost, how much is unknown.
   */
  gap(lastId: string, count: number | undefined): void;
  /** A command failed while connected; retried with backoff. */
  failed(error: unknown): void;
}

export interface StreamReaderOptions {
  key: string;
  blockMs: number;
  /**
   * Entries per read, at most what the writers retain: then entries trimmed unread leave at
   * least a full batch behind them, and only a full batch needs a look for a gap.
   */
  batch: number;
  /** Longest payload decoded, in bytes; longer ones are handed over as `oversized`. */
  maxPayloadBytes: number;
  backoff: BackoffOptions;
}

/**
 * Tails one Redis stream on a dedicated connection: `XREAD BLOCK` from the id of the last entry
 * read. Because the position is ours rather than the server's, a dropped connection loses
 * nothing: after reconnecting, the next read returns every entry written meanwhile, as far as
 * the stream still holds them; what it no longer holds is counted and reported.
 */
export class StreamReader {
  readonly #connection: RedisEventBusConnection;
  readonly #options: StreamReaderOptions;
  readonly #events: StreamReaderEvents;
  #run: Promise<void> | undefined;
  #stopped = false;
  #everReady = false;
  #down = false;
  #resumed = false;
  #positioned = false;
  /** Last entry read (the stream's end right after positioning). */
  #lastId = '0-0';
  /**
   * The stream's `entries-added` as of `#lastId`: with it a reconnect can tell how many entries
   * written since were trimmed unread. Undefined where Redis (< 7.0) does not say.
   */
  #accounted: number | undefined;
  #wake: (() => void) | undefined;
  /** A TCP connect is under way: from connect() or 'reconnecting' to 'connect' or 'error'. */
  #handshake = false;
  readonly #clock: RedisClock;
  /** Redis answers XLEN on this connection (see `#checkRecreated`). */
  #lengths = true;
  /** XLEN as of the last look for a recreated stream, while the position has not moved since. */
  #lookedAt: number | undefined;
  /** Idle reads since that look that did not look again. */
  #skipped = 0;

  constructor(
    connection: RedisEventBusConnection,
    options: StreamReaderOptions,
    events: StreamReaderEvents,
  ) {
    this.#connection = connection;
    this.#options = options;
    this.#events = events;
    this.#clock = new RedisClock(connection);
    connection.on('reconnecting', () => {
      this.#handshake = true;
    });
    connection.on('connect', () => this.#handshakeOver());
    connection.on('ready', () => this.#onReady());
    // Without an 'error' listener node-redis would throw from its emitter and take the
    // process down on the first dropped socket.
    connection.on('error', (error) => {
      this.#handshakeOver();
      this.#onError(error);
    });
  }

  get connected(): boolean {
    return this.#positioned && !this.#stopped && this.#connection.isReady;
  }

  start(): void {
    if (this.#run) return;
    this.#handshake = true;
    this.#run = this.#loop();
  }

  /**
   * Ends the connection. One whose TCP connect is under way is ended when that connect succeeds
   * or fails, and `stop()` does not wait for it (an unreachable host takes node-redis'
   * `connectTimeout`): node-redis (5 and 6) completes a connect that `destroy()` interrupted,
   * names the connection and reports it ready, and then it stays open on Redis for good.
   */
  async stop(): Promise<void> {
    if (this.#stopped) return this.#run;
    this.#stopped = true;
    this.#wakeUp();
    if (this.#handshake) return;
    // Rejects the blocked XREAD (or a connect attempt waiting to retry) at once.
    this.#destroy();
    await this.#run;
  }

  #handshakeOver(): void {
    this.#handshake = false;
    if (this.#stopped) this.#destroy();
  }

  #destroy(): void {
    try {
      this.#connection.destroy();
    } catch {
      // Already closed (node-redis 5 throws).
    }
  }

  #onReady(): void {
    if (this.#stopped) {
      // Only if a connect under way escaped #handshake: node-redis 6 can still end it now.
      this.#destroy();
      return;
    }
    if (this.#everReady) {
      this.#resumed = true;
      this.#events.reconnected();
    }
    this.#everReady = true;
    this.#down = false;
    this.#wakeUp();
  }

  #onError(error: unknown): void {
    if (this.#stopped || this.#down) return;
    this.#down = true;
    this.#events.disconnected(error);
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** Until the next 'ready' (or stop): a command sent meanwhile would only sit in node-redis' offline queue. */
  #untilReady(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        resolve();
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  async #loop(): Promise<void> {
    try {
      await this.#connection.connect();
    } catch (error) {
      if (!this.#stopped) this.#events.failed(error);
      return;
    }
    let failures = 0;
    while (!this.#stopped) {
      if (!this.#connection.isReady) {
        await this.#untilReady();
        continue;
      }
      try {
        if (!this.#positioned) {
          await this.#position();
          this.#positioned = true;
          this.#events.positioned();
        }
        if (this.#resumed) {
          this.#resumed = false;
          await this.#checkGap([]);
        }
        const entries = xreadEntries(await this.#read(), this.#options.maxPayloadBytes);
        failures = 0;
        const last = entries.at(-1);
        if (this.#stopped) continue;
        if (last === undefined) {
          // Nothing after a position past the clock: the stream may have been deleted and
          // recreated below it (ids restart from now), which only a reconnect looked for.
          if (await this.#clock.ahead(this.#lastId)) await this.#checkRecreated();
          continue;
        }
        this.#lookedAt = undefined;
        const before = this.#at();
        this.#lastId = last.id;
        if (this.#accounted !== undefined) this.#accounted += entries.length;
        this.#events.entries(entries);
        // Behind by a batch or more: the writers may have trimmed entries it never got to.
        if (entries.length >= this.#options.batch && !this.#stopped) {
          await this.#checkGap(entries, before);
        }
      } catch (error) {
        if (this.#stopped) break;
        // A dropped connection: the loop waits for 'ready' and resumes from #lastId.
        if (!this.#connection.isReady) continue;
        this.#events.failed(error);
        await this.#sleep(backoffDelay(failures++, this.#options.backoff));
      }
    }
  }

  #read(): Promise<unknown> {
    const { key, batch, blockMs } = this.#options;
    return this.#connection.sendCommand(
      ['XREAD', 'COUNT', String(batch), 'BLOCK', String(blockMs), 'STREAMS', key, this.#lastId],
      BYTES,
    );
  }

  async #info(): Promise<StreamInfo | undefined> {
    try {
      const reply = await this.#connection.sendCommand(
        ['XINFO', 'STREAM', this.#options.key],
        BYTES,
      );
      return streamInfo(reply);
    } catch (error) {
      // No such key: an empty stream. Anything else (a lost connection) is for the loop.
      if (/no such key/i.test(String(error))) return undefined;
      throw error;
    }
  }

  /**
   * At the stream's end, so entries from before this process started are not replayed to its
   * listeners. An explicit id rather than `$`: `$` is re-evaluated by every read, so after a
   * BLOCK timeout it would skip whatever was written between two reads.
   */
  async #position(): Promise<void> {
    const info = await this.#info();
    this.#lastId = info?.lastGeneratedId ?? '0-0';
    this.#accounted = info === undefined ? 0 : info.entriesAdded;
  }

  #at() {
    return { lastId: this.#lastId, accounted: this.#accounted };
  }

  /**
   * Entries trimmed before this reader got to them: checked before the first read after a
   * reconnect, and after a full batch (see `reconcile`). Also finds a stream whose ids are below
   * the position: recreated under a junk id past the clock, or an older copy behind it.
   */
  async #checkGap(read: StreamEntry[], before = this.#at()): Promise<void> {
    const info = await this.#info();
    const lastId = read.at(-1)?.id ?? before.lastId;
    const below = info !== undefined && compareIds(info.lastGeneratedId, lastId) < 0;
    this.#reconcile(before, read, info, below && (await this.#clock.ahead(lastId)));
  }

  #reconcile(
    before: Position,
    read: StreamEntry[],
    info: StreamInfo | undefined,
    pastClock: boolean,
  ): void {
    const { position, lost } = reconcile(before, read, info, pastClock);
    this.#lastId = position.lastId;
    this.#accounted = position.accounted;
    if (lost !== 0) this.#events.gap(before.lastId, lost);
  }

  /**
   * An idle read past the clock: has the stream been recreated below the position? XINFO STREAM
   * returns the first and last entries whole (the far-future one may be huge), so while nothing
   * is read it is asked again only once XLEN has changed (nothing read, yet entries added: below
   * the position), or every `LOOK_EVERY` idle reads: a stream recreated with exactly as many
   * entries as the last look saw is found then.
   */
  async #checkRecreated(): Promise<void> {
    // Where XLEN is refused (ACL), a length never seen to change: a look every `LOOK_EVERY`.
    const length = this.#lengths
      ? await streamLength(this.#connection, this.#options.key)
      : undefined;
    if (length === undefined) this.#lengths = false;
    const unchanged = this.#lookedAt !== undefined && (length ?? this.#lookedAt) === this.#lookedAt;
    if (unchanged && ++this.#skipped < LOOK_EVERY) return;
    this.#skipped = 0;
    const info = await this.#info();
    const lastId = this.#lastId;
    this.#reconcile(this.#at(), [], info, true);
    this.#lookedAt = this.#lastId === lastId ? (info?.length ?? 0) : undefined;
  }
}
