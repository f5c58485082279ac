import type { Client } from '@modelcontextprotocol/client';
import type { BackoffOptions } from './backoff';
import { type ChangeChannel, type Coverage, initialStatus, noCoverage } from './channel';
import { installDispatcher, type NotificationSink } from './dispatcher';
import type { Emit, McpEventInput, StreamStatus } from './events';
import type { LegacyStreamState, TransportObserver } from './httpTransport';
import type { Desire } from './interest';
import { ListenChannel } from './listenChannel';
import type { NotifiedList } from './lists';
import type { Retention } from './retention';
import { SubscribeChannel } from './subscribeChannel';
import { Waiters } from './waiters';

/** What the engine gives every session, and what a session tells it. */
export interface SessionHost {
  emit: Emit;
  /** What is wanted now. */
  desire(): Desire;
  /** Whether `uri` is held or lingering. */
  wants(uri: string): boolean;
  wantsList(list: NotifiedList): boolean;
  /** A matched `updated` notification: re-read `uri`. */
  changed(uri: string): void;
  listChanged(list: NotifiedList): void;
  /** Coverage moved: newly covered data may be stale (rule 4), uncovered data follows its TTL. */
  coverageChanged(change: {
    gained: readonly string[];
    lost: readonly string[];
    listsGained: readonly NotifiedList[];
    listsLost: readonly NotifiedList[];
  }): void;
  /** This session can no longer deliver (2025: stream ended, session forgotten). */
  lost(session: Session, reason: string, endSession: boolean): void;
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
  random?: () => number;
}

type Target = { uri: string } | { list: NotifiedList };

/**
 * One connected client and everything that lives exactly as long as it: the
 * notification sink, the channel of its era, what the server covers, what
 * it declined, the stream status, and reads waiting to be covered. The
 * connection opens a session before the client's first request (so the sink
 * is in place, rule 1) and disposes it when the client is done with; a
 * disposed session's callbacks reach nothing, so nothing of an old
 * connection can write into the cache.
 */
export class Session {
  readonly client: Client;
  readonly #host: SessionHost;
  readonly #options: SessionOptions;
  readonly #waiters = new Waiters();
  #coverage: Coverage = noCoverage;
  #declined: ReadonlyMap<string, string> = new Map();
  #channel: ChangeChannel | undefined;
  /** The same channel, on a 2025 connection: it is told about the SSE stream. */
  #legacy: SubscribeChannel | undefined;
  #legacyStream: LegacyStreamState;
  #status: StreamStatus;
  #ready = false;
  #disposed = false;

  constructor(client: Client, host: SessionHost, options: SessionOptions, observed: boolean) {
    this.client = client;
    this.#host = host;
    this.#options = options;
    this.#legacyStream = observed ? 'opening' : 'unknown';
    this.#status = { ...initialStatus('none', Date.now()), ...options.history };
    installDispatcher(client, this.#sink());
  }

  /** For the HTTP transport: the 2025 stream and session as the exchanges show them. */
  readonly transportObserver: TransportObserver = {
    stream: (state, resumed) => {
      if (this.#disposed) return;
      this.#legacyStream = state;
      this.#legacy?.streamChanged(state, resumed === true);
      this.#waiters.recheck();
    },
    sessionLost: (reason, forgotten) => {
      if (this.#disposed || !this.#ready) return;
      // A session the server still has (its stream could not be resumed) is
      // ended on the server, or it keeps our subscriptions for nobody.
      this.#host.lost(this, reason, !forgotten);
    },
  };

  /** The client is connected: listen or subscribe as its era says. */
  ready(): void {
    if (this.#disposed || this.#ready) return;
    this.#ready = true;
    const capabilities = this.client.getServerCapabilities();
    const report = {
      coverage: (next: Coverage) => this.#setCoverage(next),
      declined: (next: ReadonlyMap<string, string>) => this.#setDeclined(next),
      status: (next: StreamStatus) => this.#setStatus(next),
    };
    const options = this.#options;
    if (this.client.getProtocolEra() === 'modern') {
      this.#channel = new ListenChannel(this.client, report, {
        backoff: options.backoff,
        ackTimeoutMs: options.ackTimeoutMs,
        capabilities,
        retention: options.retention,
        releaseAfterMs: options.releaseAfterMs,
        ...(options.random && { random: options.random }),
      });
    } else {
      this.#legacy = new SubscribeChannel(this.client, report, {
        capabilities,
        requestTimeoutMs: options.requestTimeoutMs,
        backoff: options.backoff,
        retention: options.retention,
        releaseAfterMs: options.releaseAfterMs,
        history: options.history,
        stream: this.#legacyStream,
        ...(options.random && { random: options.random }),
      });
      this.#channel = this.#legacy;
    }
    this.#channel.update(this.#host.desire());
  }

  /**
   * The session's present state as events (stream, coverage, declined), for
   * a fold that starts late (diagnostics attached later, another tab).
   */
  facts(): McpEventInput[] {
    const facts: McpEventInput[] = [];
    if (this.#ready) facts.push({ type: 'stream', status: this.#status });
    facts.push({
      type: 'coverage',
      acknowledged: [...this.#coverage.uris],
      lost: [],
      lists: [...this.#coverage.lists],
    });
    if (this.#declined.size > 0) facts.push({ type: 'declined', changes: [...this.#declined] });
    return facts;
  }

  /** What is wanted changed (one flush of the interest registry). */
  update(desire: Desire): void {
    if (this.#disposed) return;
    this.#channel?.update(desire);
    this.#waiters.recheck();
  }

  isCovered(uri: string): boolean {
    return this.#coverage.uris.has(uri);
  }

  isListCovered(list: NotifiedList): boolean {
    return this.#coverage.lists.has(list);
  }

  /**
   * Rule 4 without the extra read: if `target` is wanted and its coverage
   * can still come, a promise that settles once it is covered (or can no
   * longer be, or the ack timeout passes); otherwise undefined, and the read
   * goes ahead at once.
   */
  whenCovered(target: Target, signal: AbortSignal): Promise<void> | undefined {
    if (!this.#pending(target)) return undefined;
    return this.#waiters.wait(() => !this.#pending(target), {
      timeoutMs: this.#options.ackTimeoutMs,
      signal,
    });
  }

  /**
   * End this session: its channel stops, waiting reads go ahead, nothing it
   * started reaches the cache any more. `shutdown` is the provider going
   * away (the stream is closed, not re-opening).
   */
  async dispose(shutdown: boolean): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#waiters.releaseAll();
    const channel = this.#channel;
    this.#channel = undefined;
    this.#legacy = undefined;
    this.#applyCoverage(noCoverage);
    if (this.#ready && this.#status.state !== 'closed') {
      this.#emitStatus({
        ...this.#status,
        state: shutdown ? 'closed' : 'reopening',
        since: Date.now(),
        nextRetryAt: undefined,
      });
    }
    await channel?.dispose();
  }

  #pending(target: Target): boolean {
    if (this.#disposed || !this.#channel) return false;
    if ('uri' in target) {
      return (
        this.#host.wants(target.uri) &&
        !this.#coverage.uris.has(target.uri) &&
        this.#channel.mayCover(target.uri)
      );
    }
    return (
      this.#host.wantsList(target.list) &&
      !this.#coverage.lists.has(target.list) &&
      this.#channel.mayCoverList(target.list)
    );
  }

  #sink(): NotificationSink {
    return {
      updated: (uri) => {
        if (this.#disposed) return;
        // Rule 2: exact string equality only. A server that notifies another
        // spelling is a bug the diagnostics must show, not hide.
        const matched = this.#host.wants(uri) || this.#coverage.uris.has(uri);
        this.#host.emit({ type: 'updated', uri, matched });
        if (!matched) return;
        this.#host.changed(uri);
      },
      listChanged: (list) => {
        if (this.#disposed) return;
        this.#host.emit({ type: 'list_changed', list });
        this.#host.listChanged(list);
      },
      malformed: (method, reason) => {
        if (this.#disposed) return;
        this.#host.emit({ type: 'malformed', method: method.slice(0, 200), reason });
      },
    };
  }

  #setCoverage(next: Coverage): void {
    if (this.#disposed) return;
    this.#applyCoverage(next);
    this.#waiters.recheck();
  }

  #applyCoverage(next: Coverage): void {
    const previous = this.#coverage;
    const gained = [...next.uris].filter((uri) => !previous.uris.has(uri));
    const lost = [...previous.uris].filter((uri) => !next.uris.has(uri));
    const listsGained = [...next.lists].filter((list) => !previous.lists.has(list));
    const listsLost = [...previous.lists].filter((list) => !next.lists.has(list));
    if (gained.length + lost.length + listsGained.length + listsLost.length === 0) return;
    this.#coverage = next;
    this.#host.emit({ type: 'coverage', acknowledged: gained, lost, lists: [...next.lists] });
    this.#host.coverageChanged({ gained, lost, listsGained, listsLost });
  }

  #setDeclined(next: ReadonlyMap<string, string>): void {
    if (this.#disposed) return;
    const changes: [string, string | null][] = [];
    for (const [uri, reason] of next) {
      if (this.#declined.get(uri) !== reason) changes.push([uri, reason]);
    }
    for (const uri of this.#declined.keys()) if (!next.has(uri)) changes.push([uri, null]);
    this.#declined = next;
    if (changes.length > 0) this.#host.emit({ type: 'declined', changes });
    this.#waiters.recheck();
  }

  #setStatus(next: StreamStatus): void {
    if (this.#disposed) return;
    this.#emitStatus(next);
    this.#waiters.recheck();
  }

  #emitStatus(next: StreamStatus): void {
    const previous = this.#status;
    this.#status = next;
    if (
      next.state !== previous.state ||
      next.kind !== previous.kind ||
      next.attempt !== previous.attempt ||
      next.note !== previous.note ||
      next.lastError !== previous.lastError
    ) {
      this.#host.emit({ type: 'stream', status: next });
    }
  }
}
