import type { Client, ServerCapabilities } from '@modelcontextprotocol/client';
import { type BackoffOptions, backoffDelay } from './backoff';
import { type ChangeChannel, type ChannelReport, initialStatus } from './channel';
import { errorMessage, rpcCode } from './errors';
import type { StreamStatus } from './events';
import type { LegacyStreamState } from './httpTransport';
import type { Desire } from './interest';
import { declaresListChanged, type NotifiedList } from './lists';
import type { Retention } from './retention';

export interface SubscribeChannelOptions {
  capabilities: ServerCapabilities | undefined;
  requestTimeoutMs: number;
  /** Backoff for subscribe requests that failed without an answer (timeouts, network). */
  backoff: BackoffOptions;
  /** Which released URIs stay subscribed (shared across connections: it learns the app). */
  retention: Retention;
  /** Released URIs still subscribed are unsubscribed once nothing has changed for this long. */
  releaseAfterMs: number;
  /** Reopen count and last close reason carried over from earlier sessions. */
  history: Pick<StreamStatus, 'reopenCount' | 'lastCloseReason'>;
  stream: LegacyStreamState;
  random?: () => number;
}

/**
 * Where a URI stands on the server, as far as this session knows. `unsure`:
 * the last request about it got no answer (a timeout, a cut connection), so
 * the server may or may not hold the subscription; it is asked again, after
 * a backoff, to subscribe or to unsubscribe, whichever is wanted by then.
 */
type Phase = 'subscribing' | 'subscribed' | 'unsubscribing' | 'unsure';

/**
 * The 2025 channel: `resources/subscribe` when a URI is first wanted,
 * `resources/unsubscribe` when retention lets it go, one request in flight
 * per URI at a time. A request that got no answer may still have been
 * carried out, so it is settled by asking again, never assumed either way
 * (rule 10). Notifications ride the session's standalone SSE stream,
 * so a URI is covered only while it is subscribed *and* that stream is open.
 * It lives exactly as long as its session: a new session subscribes anew.
 */
export class SubscribeChannel implements ChangeChannel {
  readonly #client: Pick<Client, 'subscribeResource' | 'unsubscribeResource'>;
  readonly #report: ChannelReport;
  readonly #options: SubscribeChannelOptions;
  readonly #canSubscribe: boolean;
  readonly #phases = new Map<string, Phase>();
  readonly #declined = new Map<string, string>();
  /** Requests that got no answer, waiting to be sent again. */
  readonly #retries = new Map<string, { attempt: number; timer?: ReturnType<typeof setTimeout> }>();
  /** What should be subscribed (held plus the extras retention keeps). */
  #target: ReadonlySet<string> = new Set();
  #lists: ReadonlySet<NotifiedList> = new Set();
  #idle: ReturnType<typeof setTimeout> | undefined;
  #stream: LegacyStreamState;
  #status: StreamStatus;
  #disposed = false;

  constructor(
    client: Pick<Client, 'subscribeResource' | 'unsubscribeResource'>,
    report: ChannelReport,
    options: SubscribeChannelOptions,
  ) {
    this.#client = client;
    this.#report = report;
    this.#options = options;
    this.#canSubscribe = options.capabilities?.resources?.subscribe === true;
    this.#stream = options.stream;
    this.#status = { ...initialStatus('legacy', Date.now()), ...options.history };
    this.#publishStatus();
  }

  update(desire: Desire): void {
    if (this.#disposed) return;
    this.#lists = desire.lists;
    if (!this.#canSubscribe) {
      this.#declined.clear();
      for (const uri of desire.uris) {
        this.#declined.set(uri, 'the server did not declare resources.subscribe');
      }
    } else {
      const active = new Set<string>();
      for (const [uri, phase] of this.#phases) {
        if (phase === 'subscribing' || phase === 'subscribed') active.add(uri);
      }
      this.#retarget(this.#options.retention.plan(desire.held, active));
      clearTimeout(this.#idle);
      this.#idle = setTimeout(
        () => this.#retarget(this.#options.retention.settle(desire.held)),
        this.#options.releaseAfterMs,
      );
      // A URI let go forgets why it was declined: asking again later is fair.
      // One the server may still hold keeps its retry: it becomes an unsubscribe.
      for (const uri of this.#declined.keys()) {
        if (this.#target.has(uri)) continue;
        this.#declined.delete(uri);
        if (this.#phases.get(uri) === 'unsure') continue;
        clearTimeout(this.#retries.get(uri)?.timer);
        this.#retries.delete(uri);
      }
    }
    this.#report.declined(new Map(this.#declined));
    this.#publishCoverage();
  }

  #retarget(target: ReadonlySet<string>): void {
    if (this.#disposed) return;
    this.#target = target;
    for (const uri of new Set([...target, ...this.#phases.keys()])) this.#step(uri);
  }

  /**
   * The session's SSE stream changed state (reported by the HTTP transport).
   * While the SDK resumes it, what was covered stays covered: a resumption
   * with `Last-Event-ID` replays what was sent meanwhile. One that had to
   * start afresh lost it, so coverage starts over, and with it the re-read
   * of everything covered (rule 6).
   */
  streamChanged(state: LegacyStreamState, resumed: boolean): void {
    if (this.#disposed || state === this.#stream) return;
    const gap = this.#stream === 'resuming' && state === 'open' && !resumed;
    if (state === 'resuming') {
      this.#status = {
        ...this.#status,
        reopenCount: this.#status.reopenCount + 1,
        lastCloseReason: 'remote',
        attempt: this.#status.attempt + 1,
      };
    } else if (state === 'open') {
      this.#status = { ...this.#status, attempt: 0 };
    }
    this.#stream = state;
    this.#publishStatus();
    if (gap) this.#report.coverage({ uris: new Set(), lists: new Set() });
    this.#publishCoverage();
  }

  mayCover(uri: string): boolean {
    return (
      !this.#disposed &&
      this.#canSubscribe &&
      this.#stream !== 'unsupported' &&
      !this.#declined.has(uri)
    );
  }

  mayCoverList(list: NotifiedList): boolean {
    return (
      !this.#disposed &&
      declaresListChanged(this.#options.capabilities, list) &&
      this.#stream !== 'unsupported'
    );
  }

  async dispose(): Promise<void> {
    // The session goes away with its subscriptions; unsubscribing from a
    // session that is ending would only produce errors.
    this.#disposed = true;
    clearTimeout(this.#idle);
    for (const retry of this.#retries.values()) clearTimeout(retry.timer);
    this.#retries.clear();
  }

  #delivers(): boolean {
    return this.#stream === 'open' || this.#stream === 'unknown' || this.#stream === 'resuming';
  }

  #step(uri: string): void {
    const phase = this.#phases.get(uri);
    if (phase === 'subscribing' || phase === 'unsubscribing') return;
    if (this.#retries.get(uri)?.timer !== undefined) return;
    const wanted = this.#target.has(uri);
    if (wanted && phase !== 'subscribed' && !this.#declined.has(uri)) this.#subscribe(uri);
    else if (!wanted && (phase === 'subscribed' || phase === 'unsure')) this.#unsubscribe(uri);
  }

  #subscribe(uri: string): void {
    this.#phases.set(uri, 'subscribing');
    this.#client
      .subscribeResource({ uri }, { timeout: this.#options.requestTimeoutMs })
      .then(
        () => {
          if (this.#disposed) return;
          this.#phases.set(uri, 'subscribed');
          this.#retries.delete(uri);
        },
        (error: unknown) => {
          if (this.#disposed) return;
          // The server answered "no" (unknown resource, method not found…):
          // asking again would get the same answer. No answer at all (a
          // timeout, the network) says nothing about the server's will, nor
          // whether it subscribed: ask again with backoff, and show it as
          // declined meanwhile.
          if (rpcCode(error) !== undefined) {
            this.#phases.delete(uri);
            this.#declined.set(uri, `the server refused: ${errorMessage(error)}`);
          } else {
            this.#phases.set(uri, 'unsure');
            this.#declined.set(uri, `subscribe failed: ${errorMessage(error)}; retrying`);
            this.#scheduleRetry(uri);
          }
          this.#report.declined(new Map(this.#declined));
        },
      )
      .finally(() => {
        if (this.#disposed) return;
        this.#publishCoverage();
        this.#step(uri);
      });
  }

  #scheduleRetry(uri: string): void {
    const retry = this.#retries.get(uri) ?? { attempt: 0 };
    const delay = backoffDelay(retry.attempt, this.#options.backoff, this.#options.random);
    retry.attempt += 1;
    retry.timer = setTimeout(() => {
      retry.timer = undefined;
      if (this.#disposed) return;
      if (this.#declined.delete(uri)) this.#report.declined(new Map(this.#declined));
      this.#step(uri);
    }, delay);
    this.#retries.set(uri, retry);
  }

  #unsubscribe(uri: string): void {
    this.#phases.set(uri, 'unsubscribing');
    this.#publishCoverage();
    this.#client
      .unsubscribeResource({ uri }, { timeout: this.#options.requestTimeoutMs })
      .then(
        () => {
          if (this.#disposed) return;
          this.#phases.delete(uri);
          this.#retries.delete(uri);
        },
        (error: unknown) => {
          if (this.#disposed) return;
          // A refusal is final (the session's end forgets the rest); no
          // answer leaves the subscription possibly held: ask again.
          if (rpcCode(error) !== undefined) {
            this.#phases.delete(uri);
            this.#retries.delete(uri);
          } else {
            this.#phases.set(uri, 'unsure');
            this.#scheduleRetry(uri);
          }
        },
      )
      .finally(() => {
        if (this.#disposed) return;
        this.#step(uri);
      });
  }

  #publishCoverage(): void {
    const delivers = this.#delivers();
    const uris = new Set<string>();
    if (delivers) {
      for (const [uri, phase] of this.#phases) if (phase === 'subscribed') uris.add(uri);
    }
    // 2025 servers send list_changed unsolicited to every session that can receive it.
    const lists = new Set(
      [...this.#lists].filter(
        (list) => delivers && declaresListChanged(this.#options.capabilities, list),
      ),
    );
    this.#report.coverage({ uris, lists });
  }

  #publishStatus(): void {
    const state =
      this.#stream === 'open' || this.#stream === 'unknown'
        ? 'open'
        : this.#stream === 'unsupported'
          ? 'unsupported'
          : this.#stream === 'resuming'
            ? 'reopening'
            : 'opening';
    const note =
      this.#stream === 'unsupported'
        ? 'the server has no standalone SSE stream (GET answered 405): notifications cannot arrive'
        : this.#stream === 'unknown'
          ? 'custom transport: the SSE stream cannot be observed and is assumed open'
          : undefined;
    if (state !== this.#status.state || note !== this.#status.note) {
      this.#status = { ...this.#status, state, note, since: Date.now() };
      this.#report.status(this.#status);
    }
  }
}
