import type { Client, McpSubscription, ServerCapabilities } from '@modelcontextprotocol/client';
import { type BackoffOptions, backoffDelay } from './backoff';
import {
  type ChangeChannel,
  type ChannelReport,
  type CloseReason,
  initialStatus,
  noCoverage,
} from './channel';
import type { Clock } from './clock';
import { errorMessage } from './errors';
import type { StreamStatus } from './events';
import type { Desire } from './interest';
import { delay, whileAlive } from './lifetime';
import { declaresListChanged, filterBit, NOTIFIED_LISTS, type NotifiedList } from './lists';
import type { Retention } from './retention';
import { RetryTimer } from './retryTimer';

export interface ListenChannelOptions {
  /** The channel's lifetime (its session's): once aborted, nothing it started reports. */
  signal: AbortSignal;
  backoff: BackoffOptions;
  /** Bound on the wait for `notifications/subscriptions/acknowledged`. */
  ackTimeoutMs: number;
  capabilities: ServerCapabilities | undefined;
  /** Which released URIs stay in the filter (shared across connections: it learns the app). */
  retention: Retention;
  /** Released URIs still in the filter go once nothing has changed for this long. */
  releaseAfterMs: number;
  clock: Clock;
}

interface Filter {
  resourcesListChanged?: true;
  toolsListChanged?: true;
  promptsListChanged?: true;
  resourceSubscriptions?: string[];
}

interface Stream {
  subscription: McpSubscription;
  filter: Filter;
  uris: ReadonlySet<string>;
  openedAt: number;
}

const NO_URIS: ReadonlySet<string> = new Set();

const sameFilter = (a: Filter, b: Filter) =>
  NOTIFIED_LISTS.every((list) => a[filterBit[list]] === b[filterBit[list]]) &&
  (a.resourceSubscriptions ?? []).join('\n') === (b.resourceSubscriptions ?? []).join('\n');

/**
 * The 2026-07-28 channel (docs/design.md, rules 4–6): one
 * `subscriptions/listen` stream per connection whose filter names every
 * subscribed URI and wanted list. The filter is fixed for the life of a
 * stream, so a new set opens a new stream, waits for its acknowledgement and
 * only then closes the old one (make-before-break: nothing in both sets is
 * ever unheard). Changes that arrive while a stream is opening are batched
 * into the next one. A stream that ends for any reason but our own close is
 * re-opened with capped, jittered backoff.
 */
export class ListenChannel implements ChangeChannel {
  readonly #client: Pick<Client, 'listen'>;
  readonly #report: ChannelReport;
  readonly #options: ListenChannelOptions;
  readonly #canSubscribe: boolean;
  #desire: Desire = { uris: [], held: new Set(), lists: new Set() };
  #current: Stream | undefined;
  /** The filter of the stream being opened, if one is. */
  #opening: Filter | undefined;
  readonly #retry: RetryTimer;
  #attempt = 0;
  #declined = new Map<string, string>();
  #stopIdle: (() => void) | undefined;
  #settle = false;
  #status: StreamStatus;

  constructor(
    client: Pick<Client, 'listen'>,
    report: ChannelReport,
    options: ListenChannelOptions,
  ) {
    this.#client = client;
    this.#report = report;
    this.#options = options;
    this.#canSubscribe = options.capabilities?.resources?.subscribe === true;
    this.#retry = new RetryTimer(options.signal);
    this.#status = initialStatus('listen', options.clock.now());
    if (!this.#canSubscribe && !NOTIFIED_LISTS.some((list) => this.#declares(list))) {
      this.#setStatus({
        state: 'unsupported',
        note: 'the server declared neither resources.subscribe nor any listChanged',
      });
    }
  }

  update(desire: Desire): void {
    this.#desire = desire;
    if (!this.#canSubscribe) this.#declineAll();
    this.#stopIdle?.();
    this.#stopIdle = delay(this.#options.signal, this.#options.releaseAfterMs, () => {
      this.#settle = true;
      this.#pump();
    });
    this.#pump();
  }

  mayCover(uri: string): boolean {
    return this.#canSubscribe && !this.#declined.has(uri);
  }

  mayCoverList(list: NotifiedList): boolean {
    return this.#declares(list) && this.#status.state !== 'unsupported';
  }

  async close(): Promise<void> {
    const current = this.#current;
    this.#current = undefined;
    await current?.subscription.close().catch(() => {});
  }

  #declares(list: NotifiedList): boolean {
    return declaresListChanged(this.#options.capabilities, list);
  }

  #declineAll(): void {
    this.#declined = this.#uncoverable();
    this.#report.declined(this.#declined);
  }

  /** Every wanted URI, when the server cannot cover any. */
  #uncoverable(): Map<string, string> {
    const reason = 'the server did not declare resources.subscribe';
    return new Map(this.#desire.uris.map((uri) => [uri, reason]));
  }

  /** The filter to be listening with now, given what is wanted and what is open. */
  #nextFilter(): Filter {
    const settle = this.#settle;
    this.#settle = false;
    const filter: Filter = {};
    for (const list of this.#desire.lists) {
      if (this.#declares(list)) filter[filterBit[list]] = true;
    }
    if (this.#canSubscribe) {
      const { retention } = this.#options;
      const { held } = this.#desire;
      const uris = settle
        ? retention.settle(held)
        : retention.plan(held, this.#current?.uris ?? NO_URIS);
      if (uris.size > 0) filter.resourceSubscriptions = [...uris].sort();
    }
    const current = this.#current?.filter;
    // A list nobody shows any more costs nothing in the open stream: it goes
    // when the stream is replaced anyway, or once things are quiet.
    if (current && !settle && sameUris(current, filter)) {
      const listsCovered = NOTIFIED_LISTS.every(
        (list) => !filter[filterBit[list]] || current[filterBit[list]],
      );
      if (listsCovered) return current;
    }
    return filter;
  }

  #pump(): void {
    if (this.#opening || this.#retry.pending) return;
    if (this.#status.state === 'unsupported') return;
    const filter = this.#nextFilter();
    if (this.#current && filter === this.#current.filter) return;
    if (Object.keys(filter).length === 0) {
      this.#retire(this.#current);
      this.#current = undefined;
      this.#report.coverage(noCoverage);
      this.#declined = this.#canSubscribe ? new Map() : this.#uncoverable();
      this.#report.declined(this.#declined);
      if (this.#status.state !== 'idle') {
        this.#setStatus({ state: 'idle', note: 'nothing to listen to' });
      }
      return;
    }
    if (this.#current && sameFilter(this.#current.filter, filter)) return;
    this.#open(filter);
  }

  #open(filter: Filter): void {
    this.#opening = filter;
    if (!this.#current) {
      this.#setStatus({
        state: this.#status.reopenCount > 0 || this.#attempt > 0 ? 'reopening' : 'opening',
        nextRetryAt: undefined,
        note: undefined,
      });
    }
    const { signal } = this.#options;
    this.#client.listen(filter, { timeout: this.#options.ackTimeoutMs }).then(
      (subscription) => {
        // Acknowledged after the session ended: nobody is listening to it.
        if (signal.aborted) void subscription.close().catch(() => {});
        else this.#acknowledged(filter, subscription);
      },
      whileAlive(signal, (error: unknown) => this.#openFailed(error)),
    );
  }

  #acknowledged(filter: Filter, subscription: McpSubscription): void {
    this.#opening = undefined;
    // A stream is open again: a retry still pending for an older one would
    // only hold the next change back.
    this.#retry.cancel();
    const requested = filter.resourceSubscriptions ?? [];
    const stream: Stream = {
      subscription,
      filter,
      uris: new Set(requested),
      openedAt: this.#options.clock.now(),
    };
    const previous = this.#current;
    this.#current = stream;
    void subscription.closed.then(
      whileAlive(this.#options.signal, (reason: CloseReason) => this.#closed(stream, reason)),
    );

    // Rule 5: only what we asked for counts. An acknowledgement naming URIs
    // or lists we never requested does not make them covered.
    const honored = subscription.honoredFilter as Filter;
    const honoredUris = new Set(
      Array.isArray(honored.resourceSubscriptions) ? honored.resourceSubscriptions : [],
    );
    const covered = new Set(requested.filter((uri) => honoredUris.has(uri)));
    this.#declined = this.#canSubscribe ? new Map() : this.#uncoverable();
    for (const uri of requested) {
      if (!covered.has(uri)) this.#declined.set(uri, 'not in the acknowledged filter');
    }
    const lists = new Set(
      NOTIFIED_LISTS.filter(
        (list) => filter[filterBit[list]] === true && honored[filterBit[list]] === true,
      ),
    );
    this.#report.coverage({ uris: covered, lists });
    this.#report.declined(this.#declined);
    this.#retire(previous);
    if (this.#status.state !== 'open') {
      // The last error belongs to the outage that just ended (events keep the history).
      this.#setStatus({
        state: 'open',
        since: this.#options.clock.now(),
        attempt: 0,
        nextRetryAt: undefined,
        lastError: undefined,
        note: undefined,
      });
    }
    this.#pump();
  }

  #openFailed(error: unknown): void {
    this.#opening = undefined;
    this.#status = { ...this.#status, lastError: errorMessage(error) };
    this.#scheduleRetry();
  }

  /** A stream ended: only the current one's end means anything (the others were replaced). */
  #closed(stream: Stream, reason: CloseReason): void {
    if (stream !== this.#current) return;
    this.#current = undefined;
    this.#report.coverage(noCoverage);
    // A stream that lived a long time earned a fresh backoff; one that dies
    // right after its acknowledgement keeps backing off (no reopen storm).
    const { clock, backoff } = this.#options;
    if (clock.now() - stream.openedAt >= backoff.maxDelayMs) this.#attempt = 0;
    this.#status = {
      ...this.#status,
      reopenCount: this.#status.reopenCount + 1,
      lastCloseReason: reason,
    };
    this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    const { clock } = this.#options;
    const wait = backoffDelay(this.#attempt, this.#options.backoff, clock.random);
    this.#attempt += 1;
    const offline = this.#retry.schedule(wait, () => this.#pump());
    const nextRetryAt = offline ? undefined : clock.now() + wait;
    if (!this.#current) {
      this.#setStatus({
        state: 'reopening',
        since: this.#status.state === 'reopening' ? this.#status.since : clock.now(),
        attempt: this.#attempt,
        nextRetryAt,
      });
    } else {
      this.#setStatus({ attempt: this.#attempt, nextRetryAt });
    }
  }

  /** Close a stream that is no longer current (or about to be replaced). */
  #retire(stream: Stream | undefined): void {
    void stream?.subscription.close().catch(() => {});
  }

  #setStatus(patch: Partial<StreamStatus>): void {
    this.#status = { ...this.#status, ...patch };
    this.#report.status(this.#status);
  }
}

function sameUris(a: Filter, b: Filter): boolean {
  return (a.resourceSubscriptions ?? []).join('\n') === (b.resourceSubscriptions ?? []).join('\n');
}
