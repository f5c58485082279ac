import type { Client, ServerCapabilities } from '@modelcontextprotocol/client';
import { type BackoffOptions, backoffDelay } from './backoff';
import {
  type ChangeChannel,
  type ChannelReport,
  type DeclinedChanges,
  declinedChanges,
  initialStatus,
} from './channel';
import type { Clock } from './clock';
import { errorMessage, isPermanent } from './errors';
import type { StreamStatus } from './events';
import type { LegacyStreamState } from './httpTransport';
import type { Desire } from './interest';
import { delay, whileAlive } from './lifetime';
import { declaresListChanged, NOTIFIED_LISTS, type NotifiedList } from './lists';
import type { Retention } from './retention';
import { countedStatus, legacyStreamView, SUBSCRIBES_AT_ONCE, unheard } from './subscribePacing';
import { UnsubscribeLine } from './unsubscribeLine';

export interface SubscribeChannelOptions {
  /** The channel's lifetime (its session's): once aborted, nothing it started reports. */
  signal: AbortSignal;
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
  clock: Clock;
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
  #declined = new Map<string, string>();
  /** Requests that got no answer, waiting to be sent again. */
  readonly #retries = new Map<string, { attempt: number; cancel?: () => void }>();
  /** What should be subscribed (held plus the extras retention keeps). */
  #target: ReadonlySet<string> = new Set();
  /** Subscribed but no longer wanted: their unsubscribes wait for a pause in subscribing. */
  readonly #evicted: UnsubscribeLine;
  /** Wanted, waiting for a subscribe slot, in the order they were wanted. */
  readonly #queued = new Set<string>();
  #subscribing = 0;
  #lists: ReadonlySet<NotifiedList> = new Set();
  #desire: Desire | undefined;
  #stopIdle: (() => void) | undefined;
  #stream: LegacyStreamState;
  #status: StreamStatus;

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
    this.#evicted = new UnsubscribeLine(options, (uri) => this.#unsubscribe(uri));
    this.#status = { ...initialStatus('legacy', options.clock.now()), ...options.history };
    this.#publishStatus();
  }

  update(desire: Desire): void {
    this.#desire = desire;
    this.#lists = desire.lists;
    let changes: DeclinedChanges = [];
    const reason = unheard(this.#canSubscribe, this.#stream);
    if (reason !== undefined) {
      const next = new Map(desire.uris.map((uri) => [uri, reason]));
      changes = declinedChanges(this.#declined, next);
      this.#declined = next;
    } else {
      // What waits for its unsubscribe was let go already: it is not active.
      const active = new Set<string>();
      for (const [uri, phase] of this.#phases) {
        if ((phase === 'subscribing' || phase === 'subscribed') && !this.#evicted.has(uri)) {
          active.add(uri);
        }
      }
      const { retention, signal, releaseAfterMs } = this.#options;
      this.#retarget(retention.plan(desire.held, active));
      this.#stopIdle?.();
      this.#stopIdle = delay(signal, releaseAfterMs, () =>
        this.#retarget(retention.settle(desire.held)),
      );
      // A URI let go forgets why it was declined: asking again later is fair.
      // One the server may still hold keeps its retry: it becomes an unsubscribe.
      for (const uri of this.#declined.keys()) {
        if (this.#target.has(uri)) continue;
        this.#declined.delete(uri);
        changes.push([uri, null]);
        if (this.#phases.get(uri) === 'unsure') continue;
        this.#retries.get(uri)?.cancel?.();
        this.#retries.delete(uri);
      }
    }
    if (changes.length > 0) this.#report.declined(changes);
    this.#publish([]);
  }

  #retarget(target: ReadonlySet<string>): void {
    this.#target = target;
    for (const uri of new Set([...target, ...this.#phases.keys()])) this.#step(uri, false);
    this.#evicted.drain();
  }

  /**
   * The session's SSE stream changed state (reported by the HTTP transport).
   * While the SDK resumes it, what was covered stays covered: a resumption
   * with `Last-Event-ID` replays what was sent meanwhile. One that had to
   * start afresh lost it, so coverage starts over, and with it the re-read
   * of everything covered (rule 6).
   */
  streamChanged(state: LegacyStreamState, resumed: boolean): void {
    if (state === this.#stream) return;
    const gap = this.#stream === 'resuming' && state === 'open' && !resumed;
    this.#status = countedStatus(this.#status, state);
    this.#stream = state;
    this.#publishStatus();
    if (state === 'unsupported') {
      // Final for the session (the GET is never asked again): retries end, and
      // what is wanted is declined with the stream's reason.
      for (const retry of this.#retries.values()) retry.cancel?.();
      this.#retries.clear();
      if (this.#desire) this.update(this.#desire);
    }
    if (gap) {
      const lost = [...this.#phases.keys()];
      this.#report.coverage({ gained: [], lost, listsGained: [], listsLost: NOTIFIED_LISTS });
    }
    this.#publish(this.#phases.keys());
  }

  mayCover(uri: string): boolean {
    return this.#canSubscribe && this.#stream !== 'unsupported' && !this.#declined.has(uri);
  }

  mayCoverList(list: NotifiedList): boolean {
    return declaresListChanged(this.#options.capabilities, list) && this.#stream !== 'unsupported';
  }

  asking(uri: string): boolean {
    return this.#queued.has(uri) || this.#phases.get(uri) === 'subscribing';
  }

  /**
   * The session goes away with its subscriptions (its timers went with its signal);
   * unsubscribing from a session that is ending would only produce errors.
   */
  async close(): Promise<void> {}

  #delivers(): boolean {
    return this.#stream === 'open' || this.#stream === 'unknown' || this.#stream === 'resuming';
  }

  /** Asks for what `uri` needs now; `drain`: false while a retarget steps every URI (it drains once). */
  #step(uri: string, drain = true): void {
    // Wanted again while its unsubscribe waits: nothing to ask at all.
    if (this.#target.has(uri)) this.#evicted.delete(uri);
    if (this.#needsSubscribe(uri)) {
      this.#queued.add(uri);
      this.#pump();
    } else if (this.#needsUnsubscribe(uri) && !this.#evicted.has(uri)) {
      this.#evicted.add(uri);
      if (drain) this.#evicted.drain();
    }
  }

  /** Nothing is in flight or waiting to be retried for `uri`. */
  #settled(uri: string): boolean {
    const phase = this.#phases.get(uri);
    return (
      phase !== 'subscribing' &&
      phase !== 'unsubscribing' &&
      this.#retries.get(uri)?.cancel === undefined
    );
  }

  #needsSubscribe(uri: string): boolean {
    return (
      this.#target.has(uri) &&
      this.#stream !== 'unsupported' &&
      this.#settled(uri) &&
      this.#phases.get(uri) !== 'subscribed' &&
      !this.#declined.has(uri)
    );
  }

  #needsUnsubscribe(uri: string): boolean {
    const phase = this.#phases.get(uri);
    return (
      !this.#target.has(uri) && this.#settled(uri) && (phase === 'subscribed' || phase === 'unsure')
    );
  }

  /** Sends queued subscribes while there are slots; one let go meanwhile is dropped. */
  #pump(): void {
    for (const uri of this.#queued) {
      if (this.#subscribing >= SUBSCRIBES_AT_ONCE) return;
      this.#queued.delete(uri);
      if (this.#needsSubscribe(uri)) this.#subscribe(uri);
    }
  }

  #subscribe(uri: string): void {
    this.#phases.set(uri, 'subscribing');
    this.#subscribing += 1;
    this.#evicted.subscribed();
    const { signal } = this.#options;
    this.#client
      .subscribeResource({ uri }, { timeout: this.#options.requestTimeoutMs })
      .then(
        whileAlive(signal, () => {
          this.#phases.set(uri, 'subscribed');
          this.#retries.delete(uri);
        }),
        whileAlive(signal, (error: unknown) => {
          // A "no" (unknown resource, method not found…) would be answered again. No answer (a
          // timeout), or a passing error (-32603, a gateway's -32000), says nothing of the URI:
          // asked again with backoff, declined meanwhile. With no stream, neither: it stays
          // declined with the stream's note, and nothing is asked again (#scheduleRetry).
          let reason = `the server refused: ${errorMessage(error)}`;
          if (isPermanent(error)) {
            this.#phases.delete(uri);
          } else {
            this.#phases.set(uri, 'unsure');
            reason = `subscribe failed: ${errorMessage(error)}; retrying`;
            this.#scheduleRetry(uri);
          }
          if (this.#stream === 'unsupported') return;
          this.#declined.set(uri, reason);
          this.#report.declined([[uri, reason]]);
        }),
      )
      .finally(
        whileAlive(signal, () => {
          this.#subscribing -= 1;
          this.#publish([uri]);
          this.#step(uri);
          this.#pump();
          this.#evicted.drain();
        }),
      );
  }

  #scheduleRetry(uri: string): void {
    if (this.#stream === 'unsupported') return; // final for the session: nothing could be heard
    const retry = this.#retries.get(uri) ?? { attempt: 0 };
    const { backoff, clock, signal } = this.#options;
    const wait = backoffDelay(retry.attempt, backoff, clock.random);
    retry.attempt += 1;
    retry.cancel = delay(signal, wait, () => {
      retry.cancel = undefined;
      if (this.#declined.delete(uri)) this.#report.declined([[uri, null]]);
      this.#step(uri);
    });
    this.#retries.set(uri, retry);
  }

  #unsubscribe(uri: string): void {
    this.#phases.set(uri, 'unsubscribing');
    this.#publish([uri]);
    const { signal } = this.#options;
    this.#client
      .unsubscribeResource({ uri }, { timeout: this.#options.requestTimeoutMs })
      .then(
        whileAlive(signal, () => {
          this.#phases.delete(uri);
          this.#retries.delete(uri);
        }),
        whileAlive(signal, (error: unknown) => {
          // A refusal is final (the session's end forgets the rest); no
          // answer, or a passing error, leaves it possibly held: ask again.
          if (isPermanent(error)) {
            this.#phases.delete(uri);
            this.#retries.delete(uri);
          } else {
            this.#phases.set(uri, 'unsure');
            this.#scheduleRetry(uri);
          }
        }),
      )
      .finally(
        whileAlive(signal, () => {
          this.#evicted.settled();
          this.#step(uri);
          this.#evicted.drain();
        }),
      );
  }

  /**
   * Tells the session which of `uris` are covered now (subscribed, and the
   * stream delivers), and which lists: 2025 servers send list_changed
   * unsolicited to every session that can receive it.
   */
  #publish(uris: Iterable<string>): void {
    const delivers = this.#delivers();
    const gained: string[] = [];
    const lost: string[] = [];
    for (const uri of uris) {
      (delivers && this.#phases.get(uri) === 'subscribed' ? gained : lost).push(uri);
    }
    const covers = (list: NotifiedList) =>
      delivers && this.#lists.has(list) && declaresListChanged(this.#options.capabilities, list);
    this.#report.coverage({
      gained,
      lost,
      listsGained: NOTIFIED_LISTS.filter(covers),
      listsLost: NOTIFIED_LISTS.filter((list) => !covers(list)),
    });
  }

  #publishStatus(): void {
    const { state, note } = legacyStreamView(this.#stream);
    if (state !== this.#status.state || note !== this.#status.note) {
      this.#status = { ...this.#status, state, note, since: this.#options.clock.now() };
      this.#report.status(this.#status);
    }
  }
}
