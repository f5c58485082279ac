import type { Client, LoggingLevel } from '@modelcontextprotocol/client';
import {
  type ChangeChannel,
  type CoverageChange,
  type CoverageDiff,
  type DeclinedChanges,
  initialStatus,
  statusChanged,
} from './channel';
import { installDispatcher, type NotificationSink } from './dispatcher';
import { clip } from './errors';
import type { McpEventInput, StreamStatus } from './events';
import type { LegacyStreamState, TransportObserver } from './httpTransport';
import type { Desire } from './interest';
import { whileAlive } from './lifetime';
import { ListenChannel } from './listenChannel';
import type { NotifiedList } from './lists';
import { setLevel } from './requests';
import type { SessionHost, SessionOptions } from './sessionHost';
import { SubscribeChannel } from './subscribeChannel';
import { Waiters } from './waiters';

export type {
  ChangeTarget,
  SessionControl,
  SessionHost,
  SessionOptions,
  Wanted,
} from './sessionHost';
export type { CoverageChange };

type Target = { uri: string } | { list: NotifiedList };

/** The longest unmatched URI an event carries. */
const MAX_URI = 2048;

const targetOf = (target: Target) =>
  'uri' in target ? `uri:${target.uri}` : `list:${target.list}`;

/**
 * One connected client and everything that lives exactly as long as it: the notification sink,
 * the channel of its era, what the server covers, what it declined, the stream status, and reads
 * waiting to be covered. The connection opens a session before the client's first request (so
 * the sink is in place, rule 1) and disposes it when the client is done with. Every callback it
 * hands out is bound to its lifetime (`signal`): once disposed, nothing of it reaches the cache.
 */
export class Session {
  readonly client: Client;
  readonly #host: SessionHost;
  readonly #options: SessionOptions;
  readonly #life = new AbortController();
  readonly #waiters: Waiters;
  /** Targets reads are waiting to be covered, with how many reads wait for each. */
  readonly #awaiting = new Map<string, number>();
  /** What the channel reported covered (kept up to date from its changes). */
  readonly #coverage = { uris: new Set<string>(), lists: new Set<NotifiedList>() };
  readonly #declined = new Map<string, string>();
  #channel: ChangeChannel | undefined;
  /** The same channel, on a 2025 connection: it is told about the SSE stream. */
  #legacy: SubscribeChannel | undefined;
  #legacyStream: LegacyStreamState;
  #status: StreamStatus;
  #ended: Promise<void> | undefined;
  /** The log level the server was told (2025), once ready. */
  #logLevel: LoggingLevel | undefined;

  constructor(client: Client, host: SessionHost, options: SessionOptions, observed: boolean) {
    this.client = client;
    this.#host = host;
    this.#options = options;
    this.#waiters = new Waiters({ now: () => options.clock.now() });
    this.#legacyStream = observed ? 'opening' : 'unknown';
    this.#status = { ...initialStatus('none', options.clock.now()), ...options.history };
    installDispatcher(client, this.#sink());
  }

  /** Aborted when the session is disposed. */
  get signal(): AbortSignal {
    return this.#life.signal;
  }

  /**
   * A request made on this session failed (a read, a call): the connection
   * learns whether credentials are wanted, unless this session has ended
   * meanwhile (its failure says nothing about the next one).
   */
  readonly failed = whileAlive(this.signal, (error: unknown) => this.#host.failed(error));

  /** For the HTTP transport: the 2025 stream and session as the exchanges show them. */
  readonly transportObserver: TransportObserver = {
    stream: whileAlive(this.signal, (state: LegacyStreamState, resumed?: boolean) => {
      this.#legacyStream = state;
      this.#legacy?.streamChanged(state, resumed === true);
      this.#waiters.recheck();
    }),
    sessionLost: whileAlive(this.signal, (reason: string, forgotten: boolean) => {
      // Not before it is ready: the connection attempt itself fails then.
      // A session the server still has (its stream could not be resumed) is
      // ended on the server, or it keeps our subscriptions for nobody.
      if (this.#channel) this.#host.lost(reason, !forgotten);
    }),
    // Rule 2 before the SDK: an update nobody wants or covers is counted as
    // the sink counts it, and goes no further. Once ended, everything passes.
    updates: {
      relevant: (uri) => this.signal.aborted || this.#matches(uri),
      dropped: whileAlive(this.signal, (uri: string) => this.#unmatched(uri)),
    },
  };

  /** The client is connected: listen or subscribe as its era says. */
  ready(): void {
    const capabilities = this.client.getServerCapabilities();
    const report = {
      coverage: whileAlive(this.signal, (change: CoverageDiff) => {
        this.#applyCoverage(change);
        this.#waiters.recheck();
      }),
      declined: whileAlive(this.signal, (changes: DeclinedChanges) => this.#setDeclined(changes)),
      status: whileAlive(this.signal, (next: StreamStatus) => {
        this.#emitStatus(next);
        this.#waiters.recheck();
      }),
    };
    const options = this.#options;
    const common = {
      signal: this.signal,
      backoff: options.backoff,
      capabilities,
      retention: options.retention,
      releaseAfterMs: options.releaseAfterMs,
      clock: options.clock,
    };
    if (this.client.getProtocolEra() === 'modern') {
      this.#channel = new ListenChannel(this.client, report, {
        ...common,
        ackTimeoutMs: options.ackTimeoutMs,
      });
    } else {
      this.#legacy = new SubscribeChannel(this.client, report, {
        ...common,
        requestTimeoutMs: options.requestTimeoutMs,
        history: options.history,
        stream: this.#legacyStream,
      });
      this.#channel = this.#legacy;
    }
    this.#channel.update(this.#host.wanted.desire());
    this.logAt(this.#host.logLevel?.());
  }

  /** Ask for the server's log messages from `level` up (once per level per session). */
  logAt(level: LoggingLevel | undefined): void {
    if (!this.#channel || level === this.#logLevel) return;
    this.#logLevel = level;
    // A level the server would not take leaves its default; asked again with the next one.
    setLevel(this.client, level)?.catch(() => (this.#logLevel = undefined));
  }

  /**
   * The session's present state as events (stream, coverage, declined), for
   * a fold that starts late (diagnostics attached later, another tab).
   */
  facts(): McpEventInput[] {
    const facts: McpEventInput[] = [];
    if (this.#channel) facts.push({ type: 'stream', status: this.#status });
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
   * Rule 4 without the extra read: if `target` is wanted and its coverage can still come, a
   * promise that settles once it is covered, or can no longer be, or nothing was acknowledged for
   * `ackTimeoutMs` (a server working through a thousand new rows is slow, not silent), or after
   * `requestTimeoutMs`, not counting while the channel still asks for it (in line or in flight:
   * that request's outcome ends the wait); otherwise undefined, and the read goes ahead at once.
   */
  whenCovered(target: Target, signal: AbortSignal): Promise<void> | undefined {
    if (!this.#pending(target)) return undefined;
    const key = targetOf(target);
    this.#awaiting.set(key, (this.#awaiting.get(key) ?? 0) + 1);
    const { ackTimeoutMs, requestTimeoutMs } = this.#options;
    const covered = () => !this.#pending(target);
    return this.#waiters
      .wait(covered, {
        timeoutMs: ackTimeoutMs,
        maxMs: requestTimeoutMs,
        signal,
        held: () => 'uri' in target && this.#channel?.asking?.(target.uri) === true,
      })
      .finally(() => {
        const left = (this.#awaiting.get(key) ?? 1) - 1;
        if (left > 0) this.#awaiting.set(key, left);
        else this.#awaiting.delete(key);
      });
  }

  /**
   * End this session: its channel stops, waiting reads go ahead, nothing it
   * started reaches the cache any more. `shutdown` is the provider going
   * away (the stream is closed, not re-opening).
   */
  dispose(shutdown: boolean): Promise<void> {
    this.#ended ??= this.#end(shutdown);
    return this.#ended;
  }

  async #end(shutdown: boolean): Promise<void> {
    const channel = this.#channel;
    this.#channel = undefined;
    this.#legacy = undefined;
    const { uris, lists } = this.#coverage;
    this.#applyCoverage({ gained: [], lost: [...uris], listsGained: [], listsLost: [...lists] });
    // What this session's server refused says nothing of the next session's: it asks again.
    this.#setDeclined([...this.#declined.keys()].map((uri) => [uri, null]));
    if (channel && this.#status.state !== 'closed') {
      this.#emitStatus({
        ...this.#status,
        state: shutdown ? 'closed' : 'reopening',
        since: this.#options.clock.now(),
        nextRetryAt: undefined,
      });
    }
    this.#life.abort();
    this.#waiters.releaseAll();
    await channel?.close();
  }

  #pending(target: Target): boolean {
    const channel = this.#channel;
    if (!channel) return false;
    const { wanted } = this.#host;
    if ('uri' in target) {
      const { uri } = target;
      return wanted.wants(uri) && !this.#coverage.uris.has(uri) && channel.mayCover(uri);
    }
    const { list } = target;
    return wanted.wantsList(list) && !this.#coverage.lists.has(list) && channel.mayCoverList(list);
  }

  /** Rule 2: exact string equality only (another spelling is a server bug to show, not hide). */
  #matches(uri: string): boolean {
    return this.#host.wanted.wants(uri) || this.#coverage.uris.has(uri);
  }

  /** A URI nobody wants is the server's string: kept bounded (a wanted one is ours). */
  #unmatched(uri: string): void {
    this.#host.emit({ type: 'updated', uri: clip(uri, MAX_URI), matched: false });
  }

  #sink(): NotificationSink {
    const { emit, changes } = this.#host;
    return {
      updated: whileAlive(this.signal, (uri: string) => {
        if (!this.#matches(uri)) return this.#unmatched(uri);
        emit({ type: 'updated', uri, matched: true });
        changes.changed(uri);
      }),
      listChanged: whileAlive(this.signal, (list: NotifiedList) => {
        emit({ type: 'list_changed', list });
        changes.listChanged(list);
      }),
      malformed: whileAlive(this.signal, (method: string, reason: string) =>
        emit({ type: 'malformed', method: clip(method, 200), reason }),
      ),
      event: whileAlive(this.signal, emit),
    };
  }

  #applyCoverage(change: CoverageDiff): void {
    // Each filter keeps what moved and applies it to the session's sets as it goes.
    const { uris, lists } = this.#coverage;
    const gained = change.gained.filter((uri) => !uris.has(uri) && uris.add(uri));
    const lost = change.lost.filter((uri) => uris.delete(uri));
    const listsGained = change.listsGained.filter((list) => !lists.has(list) && lists.add(list));
    const listsLost = change.listsLost.filter((list) => lists.delete(list));
    if (gained.length + lost.length + listsGained.length + listsLost.length === 0) return;
    const diff = { gained, lost, listsGained, listsLost };
    if (gained.length > 0 || listsGained.length > 0) this.#waiters.progress();
    const awaited = {
      uris: new Set(gained.filter((uri) => this.#awaiting.has(targetOf({ uri })))),
      lists: new Set(listsGained.filter((list) => this.#awaiting.has(targetOf({ list })))),
    };
    this.#host.emit({ type: 'coverage', acknowledged: gained, lost, lists: [...lists] });
    this.#host.changes.coverageChanged({ ...diff, awaited });
  }

  #setDeclined(changes: DeclinedChanges): void {
    const declined = this.#declined;
    const moved: DeclinedChanges = [];
    for (const change of changes) {
      const [uri, reason] = change;
      if ((declined.get(uri) ?? null) === reason) continue;
      if (reason === null) declined.delete(uri);
      else declined.set(uri, reason);
      moved.push(change);
    }
    if (moved.length > 0) this.#host.emit({ type: 'declined', changes: moved });
    this.#waiters.recheck();
  }

  #emitStatus(next: StreamStatus): void {
    const previous = this.#status;
    this.#status = next;
    if (statusChanged(previous, next)) this.#host.emit({ type: 'stream', status: next });
  }
}
