import type { Client, ServerCapabilities } from '@modelcontextprotocol/client';
import { type BackoffOptions, backoffDelay } from './backoff';
import {
  type ChangeChannel,
  type ChannelDesire,
  type ChannelEvents,
  initialStatus,
  type StreamStatus,
} from './channel';
import { errorMessage, rpcCode } from './errors';
import { declaresListChanged, type NotifiedList } from './lists';

/** Whether the notification stream a legacy session delivers on is up. */
export type LegacyStreamState = 'unknown' | 'opening' | 'open' | 'unsupported' | 'closed';

export interface SubscribeChannelOptions {
  capabilities: ServerCapabilities | undefined;
  requestTimeoutMs: number;
  /** How long a subscription nobody wants any more is kept before unsubscribing (churn costs requests). */
  narrowAfterMs: number;
  /** Backoff for subscribe requests that failed without an answer (timeouts, network). */
  backoff: BackoffOptions;
  /** Reopen count and last close reason carried over from earlier connections. */
  history: Pick<StreamStatus, 'reopenCount' | 'lastCloseReason'>;
  now?: () => number;
}

type Phase = 'idle' | 'subscribing' | 'subscribed' | 'unsubscribing';

/**
 * The 2025 channel: `resources/subscribe` when a URI is first wanted,
 * `resources/unsubscribe` when it is let go, one request in flight per URI at
 * a time. Notifications ride the session's standalone SSE stream, so a URI is
 * covered only while it is subscribed *and* that stream is open. This
 * channel lives exactly as long as one session: a lost session is replaced by
 * a new connection and a new channel, which subscribes everything again.
 */
export class SubscribeChannel implements ChangeChannel {
  readonly #client: Pick<Client, 'subscribeResource' | 'unsubscribeResource'>;
  readonly #events: ChannelEvents;
  readonly #options: SubscribeChannelOptions;
  readonly #now: () => number;
  readonly #canSubscribe: boolean;
  readonly #phases = new Map<string, Phase>();
  readonly #declined = new Map<string, string>();
  /** Failed subscribes waiting to be sent again: uri → attempts so far and timer. */
  /** Subscriptions let go, waiting to be unsubscribed unless wanted again. */
  readonly #releasing = new Map<string, ReturnType<typeof setTimeout>>();
  readonly #retries = new Map<string, { attempt: number; timer?: ReturnType<typeof setTimeout> }>();
  #wanted = new Set<string>();
  #wantedLists: ReadonlySet<NotifiedList> = new Set();
  #stream: LegacyStreamState;
  #status: StreamStatus;
  #disposed = false;

  constructor(
    client: Pick<Client, 'subscribeResource' | 'unsubscribeResource'>,
    events: ChannelEvents,
    options: SubscribeChannelOptions,
    stream: LegacyStreamState,
  ) {
    this.#client = client;
    this.#events = events;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#canSubscribe = options.capabilities?.resources?.subscribe === true;
    this.#stream = stream;
    this.#status = { ...initialStatus('legacy', this.#now()), ...options.history };
    this.#publishStatus();
  }

  update(desire: ChannelDesire): void {
    if (this.#disposed) return;
    this.#wanted = new Set(desire.uris);
    this.#wantedLists = desire.lists;
    if (!this.#canSubscribe) {
      this.#declined.clear();
      for (const uri of desire.uris) {
        this.#declined.set(uri, 'the server did not declare resources.subscribe');
      }
    } else {
      for (const uri of new Set([...this.#wanted, ...this.#phases.keys()])) this.#step(uri);
      // A URI let go forgets why it was declined: asking again later is fair.
      for (const uri of this.#declined.keys()) {
        if (this.#wanted.has(uri)) continue;
        this.#declined.delete(uri);
        clearTimeout(this.#retries.get(uri)?.timer);
        this.#retries.delete(uri);
      }
    }
    this.#events.declined(new Map(this.#declined));
    this.#publishCoverage();
  }

  setStream(state: LegacyStreamState): void {
    if (this.#disposed || state === this.#stream) return;
    this.#stream = state;
    this.#publishStatus();
    this.#publishCoverage();
  }

  isEstablishing(uri: string): boolean {
    if (this.#disposed || !this.#canSubscribe || this.#declined.has(uri)) return false;
    const phase = this.#phases.get(uri);
    return phase === 'subscribing' || (phase === 'subscribed' && this.#stream === 'opening');
  }

  isEstablishingList(list: NotifiedList): boolean {
    return (
      !this.#disposed &&
      declaresListChanged(this.#options.capabilities, list) &&
      this.#stream === 'opening'
    );
  }

  async dispose(): Promise<void> {
    // The session is going away with its subscriptions; unsubscribing from a
    // dead session would only produce errors.
    this.#disposed = true;
    for (const retry of this.#retries.values()) clearTimeout(retry.timer);
    for (const timer of this.#releasing.values()) clearTimeout(timer);
    this.#releasing.clear();
    this.#retries.clear();
  }

  #streamDelivers(): boolean {
    return this.#stream === 'open' || this.#stream === 'unknown';
  }

  #step(uri: string): void {
    const phase = this.#phases.get(uri) ?? 'idle';
    const wanted = this.#wanted.has(uri);
    if (phase === 'subscribing' || phase === 'unsubscribing') return;
    if (wanted) {
      clearTimeout(this.#releasing.get(uri));
      this.#releasing.delete(uri);
    }
    if (wanted && phase === 'idle' && !this.#declined.has(uri)) {
      this.#subscribe(uri);
    } else if (!wanted && phase === 'subscribed') {
      if (this.#releasing.has(uri)) return;
      this.#releasing.set(
        uri,
        setTimeout(() => {
          this.#releasing.delete(uri);
          if (!this.#disposed && !this.#wanted.has(uri)) this.#unsubscribe(uri);
        }, this.#options.narrowAfterMs),
      );
    } else if (!wanted && phase === 'idle') {
      this.#phases.delete(uri);
    }
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
          this.#phases.set(uri, 'idle');
          // The server answered "no" (unknown resource, method not found…):
          // asking again would get the same answer. No answer at all (a
          // timeout, the network) says nothing about the server's will: ask
          // again with backoff, and show it as declined meanwhile.
          if (rpcCode(error) !== undefined) {
            this.#declined.set(uri, `the server refused: ${errorMessage(error)}`);
          } else {
            this.#declined.set(uri, `subscribe failed: ${errorMessage(error)}; retrying`);
            this.#scheduleRetry(uri);
          }
          this.#events.declined(new Map(this.#declined));
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
    const delay = backoffDelay(retry.attempt, this.#options.backoff);
    retry.attempt += 1;
    retry.timer = setTimeout(() => {
      retry.timer = undefined;
      if (this.#disposed) return;
      this.#declined.delete(uri);
      this.#events.declined(new Map(this.#declined));
      this.#step(uri);
    }, delay);
    this.#retries.set(uri, retry);
  }

  #unsubscribe(uri: string): void {
    this.#phases.set(uri, 'unsubscribing');
    this.#publishCoverage();
    this.#client
      .unsubscribeResource({ uri }, { timeout: this.#options.requestTimeoutMs })
      .catch(() => {
        // Best effort: the server forgets subscriptions with the session anyway.
      })
      .finally(() => {
        if (this.#disposed) return;
        this.#phases.set(uri, 'idle');
        this.#step(uri);
      });
  }

  #publishCoverage(): void {
    const delivers = this.#streamDelivers();
    const uris = new Set<string>();
    if (delivers) {
      for (const [uri, phase] of this.#phases) {
        // Subscriptions waiting to be let go still deliver: they are covered.
        if (phase === 'subscribed') uris.add(uri);
      }
    }
    // 2025 servers send list_changed unsolicited to every session that can receive it.
    const lists = new Set(
      [...this.#wantedLists].filter(
        (list) => delivers && declaresListChanged(this.#options.capabilities, list),
      ),
    );
    this.#events.coverage({ uris, lists });
  }

  #publishStatus(): void {
    const state =
      this.#stream === 'open' || this.#stream === 'unknown'
        ? 'open'
        : this.#stream === 'unsupported'
          ? 'unsupported'
          : this.#stream === 'closed'
            ? 'reopening'
            : 'opening';
    const note =
      this.#stream === 'unsupported'
        ? 'the server has no standalone SSE stream (GET answered 405): notifications cannot arrive'
        : this.#stream === 'unknown'
          ? 'custom transport: the SSE stream cannot be observed and is assumed open'
          : undefined;
    if (state !== this.#status.state || note !== this.#status.note) {
      this.#status = { ...this.#status, state, note, since: this.#now() };
      this.#events.status(this.#status);
    }
  }
}
