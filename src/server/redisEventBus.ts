import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import { type BackoffOptions, backoffDelay } from '../core/backoff';
import type { RedisEventBusClient } from './client';
import { decodeEntry, encode } from './envelope';
import { type RedisEventBusError, Reporter } from './errors';
import { Fanout, type Listener } from './fanout';
import { AFTER_GAP, ListenStreams, type McpFetch } from './listenStreams';
import { StreamReader } from './streamReader';
import type { StreamEntry } from './streamReply';
import { StreamWriter } from './streamWriter';

export interface RedisEventBusOptions {
  /**
   * A node-redis client. Events are written with it (it may connect later: events wait until it
   * is ready), and it is `duplicate()`d once for the bus's reading connection. `close()` leaves
   * it open: it is yours.
   */
  redis: RedisEventBusClient;
  /** Key of the Redis stream every instance shares (one per deployment). */
  channel?: string;
  /** Problems that do not stop the bus; floods of one kind are thinned out (see `stats()`). */
  onerror?: (error: RedisEventBusError) => void;
  /** Entries Redis keeps for instances catching up after a disconnect (trimmed approximately). */
  retain?: number;
  /** Events held while Redis cannot take them; beyond that the oldest is dropped. */
  maxQueued?: number;
  /** Largest event accepted, in characters of its JSON form. */
  maxEventSize?: number;
  /** Backoff of the reading connection's reconnects and of publish retries (ms). */
  reconnect?: Partial<BackoffOptions>;
}

export interface RedisEventBusStats {
  /** Events accepted by `publish()`. */
  published: number;
  /** Events Redis confirmed writing. */
  sent: number;
  /** Valid events read from Redis that other instances published. */
  received: number;
  /** Events handed to this process's listeners: its own (at once) plus `received`. */
  delivered: number;
  /** Entries on the stream that were not valid events (dropped). */
  malformed: number;
  /** `publish()` calls refused: invalid or oversized event, or the bus was closed. */
  rejected: number;
  /** Writes that failed; every one was queued again. */
  failedPublishes: number;
  /** Events that had to wait because Redis could not take them when published. */
  deferred: number;
  /** Events not confirmed written yet: waiting, or sent and not answered (a retry too). */
  queued: number;
  /** Waiting duplicates merged into one (an invalidation said twice says no more). */
  coalesced: number;
  /** Waiting events dropped because the queue was full. */
  dropped: number;
  /** Listener calls that threw. */
  listenerErrors: number;
  /** Times the reading connection came back after a drop. */
  reconnects: number;
  /**
   * Times entries this instance never read were found trimmed (after a reconnect, or after a
   * full read while connected: it fell `retain` entries behind), or Redis was found back on an
   * older copy of the stream (a restore from an older snapshot, a failover to a lagging replica).
   */
  gaps: number;
  /** Events in the trimming gaps: published elsewhere, never delivered here (a restore's: unknown). */
  lost: number;
  /** Listen streams of attached handlers ended after a gap, so their clients re-read. */
  streamsEnded: number;
  /** Local listeners (open listen streams on this process). */
  listeners: number;
  /** The reading connection is up and positioned. */
  connected: boolean;
}

export interface RedisEventBus extends ServerEventBus {
  /** This bus's origin id on the stream (its own entries are not delivered twice). */
  readonly id: string;
  /** Resolves once the reading connection is positioned: events published after it reach this process. */
  ready(): Promise<void>;
  stats(): RedisEventBusStats;
  /**
   * Returns `handler` with its `fetch` wrapped (serve that one): after a gap, the listen streams
   * it has open then end, so their clients listen again and re-read what they show. Without it
   * a gap only sends each local listen stream the three `list_changed` (if its filter has them):
   * a missed `notifications/resources/updated` would stay missed.
   */
  attach<H extends { fetch: McpFetch }>(handler: H): H;
  /**
   * Writes what it can, ends the reading connection and drops the listeners. Idempotent. A
   * reading connection still connecting is ended as soon as that connect succeeds or fails.
   * The listen streams of attached handlers end at once, like after a gap (their clients listen
   * again, on another instance), and so does each one opened on them later, before its
   * acknowledgement: nothing would reach it. Close the handler first and they end gracefully.
   */
  close(): Promise<void>;
}

const defaults = {
  channel: 'mcp:events',
  retain: 10_000,
  maxQueued: 1_000,
  maxEventSize: 64 * 1024,
  backoff: { initialDelayMs: 100, maxDelayMs: 5_000 },
};
/** Entries per XREAD: large enough to drain a burst in a few round trips. */
const READ_BATCH = 256;
/** Full jitter can draw ~0: never reconnect in a hot loop. */
const MIN_RECONNECT_MS = 10;
/** Bound of one blocking read; a socket timeout shorter than that would cut every idle read. */
const BLOCK_MS = 2_000;

/**
 * A `ServerEventBus` over one Redis stream shared by every instance of a deployment.
 *
 * Local first: an event reaches this process's listeners synchronously inside `publish()`,
 * like the SDK's in-memory bus, and this process skips its own entries when they come back
 * from Redis. So an instance keeps serving its own listen streams while Redis is down, and
 * the Redis round trip is paid only by the instances that need it.
 *
 * A stream rather than pub/sub: pub/sub delivers only to subscribers connected at that moment,
 * so every reconnect of a subscriber (and the flush of events queued during an outage, which
 * can race the other instances' resubscription) silently loses events. A stream read from our
 * own last position loses nothing across a reconnect, within `retain` entries.
 */
class RedisStreamEventBus implements RedisEventBus {
  // Web Crypto's global (Node >= 19): this entry then needs no Node type declarations.
  readonly id = globalThis.crypto.randomUUID();
  readonly #maxEventSize: number;
  readonly #reporter: Reporter;
  readonly #fanout = new Fanout();
  readonly #streams = new ListenStreams();
  readonly #writer: StreamWriter;
  readonly #reader: StreamReader;
  readonly #ready: Promise<void>;
  #resolveReady: () => void = () => {};
  #rejectReady: (error: Error) => void = () => {};
  #closed = false;
  #closing: Promise<void> | undefined;
  readonly #counts = {
    published: 0,
    received: 0,
    delivered: 0,
    malformed: 0,
    rejected: 0,
    listenerErrors: 0,
    reconnects: 0,
    gaps: 0,
    lost: 0,
    streamsEnded: 0,
  };

  constructor(options: RedisEventBusOptions) {
    const key = options.channel ?? defaults.channel;
    const backoff = { ...defaults.backoff, ...options.reconnect };
    this.#maxEventSize = options.maxEventSize ?? defaults.maxEventSize;
    this.#reporter = new Reporter(options.onerror);
    const retain = Math.max(1, Math.floor(options.retain ?? defaults.retain));
    this.#ready = new Promise<void>((resolve, reject) => {
      this.#resolveReady = resolve;
      this.#rejectReady = reject;
    });
    // Nobody has to ask for readiness; an unobserved rejection on close must not crash anyone.
    this.#ready.catch(() => {});

    const socket = options.redis.options?.socket ?? {};
    const socketTimeout = (socket as { socketTimeout?: unknown }).socketTimeout;
    const timed = typeof socketTimeout === 'number' && socketTimeout > 0;
    const blockMs = timed
      ? Math.max(1, Math.min(BLOCK_MS, Math.floor(socketTimeout / 2)))
      : BLOCK_MS;
    // How long Redis may leave a command unanswered before the bus treats it as gone.
    const stallMs = timed ? socketTimeout : 2 * blockMs;
    this.#writer = new StreamWriter(
      options.redis,
      {
        key,
        retain,
        maxQueued: Math.max(1, Math.floor(options.maxQueued ?? defaults.maxQueued)),
        backoff,
        stallMs,
      },
      this.#reporter,
    );

    const connection = options.redis.duplicate({
      name: 'mcp-event-bus',
      socket: {
        ...socket,
        // Every read answers within blockMs, so a socket silent for twice that is dead (a
        // partition, a hung host): without a timeout node-redis would wait for that answer for
        // good, and the bus would stop hearing other instances while reporting itself connected.
        socketTimeout: stallMs,
        // Never give up: a bus that stopped reading would be the silent staleness it exists to
        // prevent. Full jitter spreads a fleet's reconnects after a Redis restart.
        reconnectStrategy: (retries: number) =>
          Math.max(MIN_RECONNECT_MS, backoffDelay(retries, backoff)),
      },
    });
    this.#reader = new StreamReader(
      connection,
      {
        key,
        blockMs,
        batch: Math.min(READ_BATCH, retain),
        // A UTF-16 code unit is at most 3 bytes of UTF-8: more bytes than that is more characters.
        maxPayloadBytes: 3 * this.#maxEventSize,
        backoff,
      },
      {
        positioned: () => this.#resolveReady(),
        entries: (entries) => this.#receive(entries),
        disconnected: (error) =>
          this.#reporter.report(
            'disconnected',
            'Redis reading connection lost; reconnecting, events published meanwhile are read after it',
            error,
          ),
        reconnected: () => {
          this.#counts.reconnects += 1;
        },
        gap: (lastId, count) => {
          this.#counts.gaps += 1;
          this.#counts.lost += count ?? 0;
          const ended = this.#afterGap();
          this.#reporter.report(
            'gap',
            count === undefined
              ? `Redis went back to an older copy of the stream, below ${lastId} (a restore from an older snapshot, a failover to a lagging replica): events published after that copy that this instance had not read are lost; ${ended} listen stream(s) ended`
              : `${count} event(s) after ${lastId} were trimmed before this instance read them (raise \`retain\`); ${ended} listen stream(s) ended`,
          );
        },
        failed: (error) =>
          this.#reporter.report('reader', 'reading the event stream failed', error),
      },
    );
    this.#reader.start();
  }

  ready(): Promise<void> {
    return this.#ready;
  }

  attach<H extends { fetch: McpFetch }>(handler: H): H {
    return { ...handler, fetch: this.#streams.wrap(handler.fetch.bind(handler)) };
  }

  subscribe(listener: Listener): () => void {
    if (this.#closed) return () => {};
    return this.#fanout.subscribe(listener);
  }

  publish(event: ServerEvent): void {
    if (this.#closed) {
      this.#counts.rejected += 1;
      this.#reporter.report('rejected', 'publish() after close(): event not delivered');
      return;
    }
    const encoded = encode(this.id, event, this.#maxEventSize);
    if (!encoded.ok) {
      this.#counts.rejected += 1;
      this.#reporter.report('rejected', `publish() refused an event: ${encoded.reason}`);
      return;
    }
    this.#counts.published += 1;
    // Written before the local delivery: a listener that publishes in reaction must not get
    // its event onto the stream ahead of the cause.
    this.#writer.write(encoded.payload);
    this.#deliver(encoded.event);
  }

  stats(): RedisEventBusStats {
    return {
      ...this.#counts,
      ...this.#writer.counts,
      queued: this.#writer.queued,
      listeners: this.#fanout.size,
      connected: this.#reader.connected,
    };
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    this.#closed = true;
    // Nothing reaches them from now on: left open, they would be silent for good.
    this.#streams.close();
    this.#rejectReady(new Error('RedisEventBus closed before it was ready'));
    const unsent = await this.#writer.close();
    if (unsent > 0) {
      this.#reporter.report(
        'unsent',
        `${unsent} event(s) were never written to Redis, or never confirmed`,
      );
    }
    await this.#reader.stop();
    this.#fanout.clear();
  }

  #deliver(event: ServerEvent): void {
    this.#counts.delivered += 1;
    this.#fanout.deliver(event, this.#listenerThrew);
  }

  readonly #listenerThrew = (error: unknown): void => {
    this.#counts.listenerErrors += 1;
    this.#reporter.report('listener', 'a bus listener threw', error);
  };

  /** Lost events: every local client must re-read (why this way: `listenStreams.ts`). */
  #afterGap(): number {
    if (this.#closed) return 0;
    for (const event of AFTER_GAP) this.#fanout.deliver(event, this.#listenerThrew);
    const ended = this.#streams.endAll();
    this.#counts.streamsEnded += ended;
    return ended;
  }

  #receive(entries: StreamEntry[]): void {
    for (const entry of entries) {
      if (this.#closed) return;
      const decoded = decodeEntry(entry, this.#maxEventSize);
      if (!decoded.ok) {
        this.#counts.malformed += 1;
        this.#reporter.report('malformed', `dropped stream entry ${entry.id}: ${decoded.reason}`);
        continue;
      }
      // Already delivered here when it was published.
      if (decoded.origin === this.id) continue;
      this.#counts.received += 1;
      this.#deliver(decoded.event);
    }
  }
}

/**
 * A `ServerEventBus` for `createMcpHandler({ bus })` that every instance of a deployment
 * shares through Redis, so a `subscriptions/listen` stream on one instance hears about changes
 * published on any other. Give each instance its own bus (one per process) on the same channel.
 */
export function createRedisEventBus(options: RedisEventBusOptions): RedisEventBus {
  return new RedisStreamEventBus(options);
}
