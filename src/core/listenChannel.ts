import type { Client, McpSubscription, ServerCapabilities } from '@modelcontextprotocol/client';
import { type BackoffOptions, backoffDelay } from './backoff';
import {
  type ChangeChannel,
  type ChannelDesire,
  type ChannelEvents,
  type CloseReason,
  initialStatus,
  noCoverage,
  type StreamStatus,
} from './channel';
import { errorMessage } from './errors';
import { declaresListChanged, filterBit, type NotifiedList } from './lists';
import { RetryTimer } from './retryTimer';

export interface ListenChannelOptions {
  backoff: BackoffOptions;
  /** Bound on the wait for `notifications/subscriptions/acknowledged`. */
  ackTimeoutMs: number;
  capabilities: ServerCapabilities | undefined;
  /**
   * How long URIs and lists nobody wants any more may stay in the filter.
   * Narrowing the filter costs a new stream and extra entries cost nothing
   * but a notification now and then, so removals wait: until the next stream
   * opens for an addition, or this long.
   */
  narrowAfterMs: number;
  now?: () => number;
  random?: () => number;
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
  openedAt: number;
  /** Replaced by a newer stream: its close is ours and means nothing. */
  retired: boolean;
}

const LISTS: readonly NotifiedList[] = ['resources', 'tools', 'prompts'];

const filterKey = (filter: Filter) =>
  JSON.stringify([
    LISTS.map((list) => filter[filterBit[list]] === true),
    filter.resourceSubscriptions ?? [],
  ]);

/** Whether stream filter `a` delivers everything `b` asks for. */
function covers(a: Filter, b: Filter): boolean {
  const uris = new Set(a.resourceSubscriptions ?? []);
  return (
    LISTS.every((list) => !b[filterBit[list]] || a[filterBit[list]] === true) &&
    (b.resourceSubscriptions ?? []).every((uri) => uris.has(uri))
  );
}

function union(a: Filter, b: Filter): Filter {
  const merged: Filter = {};
  for (const list of LISTS) {
    if (a[filterBit[list]] || b[filterBit[list]]) merged[filterBit[list]] = true;
  }
  const uris = [
    ...new Set([...(a.resourceSubscriptions ?? []), ...(b.resourceSubscriptions ?? [])]),
  ];
  if (uris.length > 0) merged.resourceSubscriptions = uris.sort();
  return merged;
}

/**
 * The 2026-07-28 channel: one `subscriptions/listen` stream per connection
 * whose filter names every subscribed URI and wanted list. The filter is
 * fixed for the life of a stream, so a new set opens a new stream, waits for
 * its acknowledgement and only then closes the old one (make-before-break:
 * no window in which something in both sets is unheard). A stream that ends
 * for any reason but our own close is re-opened with capped, jittered backoff.
 */
export class ListenChannel implements ChangeChannel {
  readonly #client: Pick<Client, 'listen'>;
  readonly #events: ChannelEvents;
  readonly #options: ListenChannelOptions;
  readonly #now: () => number;
  readonly #canSubscribe: boolean;
  #desire: ChannelDesire = { uris: [], lists: new Set() };
  #current: Stream | undefined;
  #opening: Filter | undefined;
  readonly #retry = new RetryTimer();
  #narrowTimer: ReturnType<typeof setTimeout> | undefined;
  #narrowDue = false;
  #attempt = 0;
  #status: StreamStatus;
  #disposed = false;

  constructor(
    client: Pick<Client, 'listen'>,
    events: ChannelEvents,
    options: ListenChannelOptions,
  ) {
    this.#client = client;
    this.#events = events;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#canSubscribe = options.capabilities?.resources?.subscribe === true;
    this.#status = initialStatus('listen', this.#now());
    if (
      !this.#canSubscribe &&
      !LISTS.some((list) => declaresListChanged(options.capabilities, list))
    ) {
      this.#setStatus({
        state: 'unsupported',
        note: 'the server declared neither resources.subscribe nor any listChanged',
      });
    }
  }

  update(desire: ChannelDesire): void {
    this.#desire = desire;
    this.#pump();
  }

  isEstablishing(uri: string): boolean {
    return this.#opening?.resourceSubscriptions?.includes(uri) ?? false;
  }

  isEstablishingList(list: NotifiedList): boolean {
    return this.#opening?.[filterBit[list]] === true;
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#retry.cancel();
    clearTimeout(this.#narrowTimer);
    const current = this.#current;
    this.#current = undefined;
    this.#setStatus({ state: 'closed', nextRetryAt: undefined });
    if (current) {
      current.retired = true;
      await current.subscription.close().catch(() => {});
    }
  }

  #filterFor(desire: ChannelDesire): Filter {
    const filter: Filter = {};
    for (const list of LISTS) {
      if (desire.lists.has(list) && declaresListChanged(this.#options.capabilities, list)) {
        filter[filterBit[list]] = true;
      }
    }
    if (desire.uris.length > 0 && this.#canSubscribe) {
      filter.resourceSubscriptions = [...desire.uris];
    }
    return filter;
  }

  /** URIs this server can never cover, whatever we ask. */
  #uncoverable(): Map<string, string> {
    const declined = new Map<string, string>();
    if (!this.#canSubscribe) {
      for (const uri of this.#desire.uris) {
        declined.set(uri, 'the server did not declare resources.subscribe');
      }
    }
    return declined;
  }

  #pump(): void {
    if (this.#disposed || this.#opening || this.#retry.pending) return;
    if (this.#status.state === 'unsupported') {
      this.#events.declined(this.#uncoverable());
      return;
    }
    const filter = this.#filterFor(this.#desire);
    if (Object.keys(filter).length === 0) {
      this.#retire(this.#current);
      this.#current = undefined;
      this.#events.coverage(noCoverage);
      this.#events.declined(this.#uncoverable());
      if (this.#status.state !== 'idle')
        this.#setStatus({ state: 'idle', note: 'nothing to listen to' });
      return;
    }
    const current = this.#current?.filter;
    if (current && filterKey(current) === filterKey(filter)) {
      this.#stopNarrowing();
      return;
    }
    if (current && !this.#narrowDue) {
      if (covers(current, filter)) {
        // Only removals: keep the stream, narrow it later.
        this.#startNarrowing();
        return;
      }
      // An addition needs a new stream anyway; the extras ride along until narrowing is due.
      const merged = union(current, filter);
      if (filterKey(merged) !== filterKey(filter)) this.#startNarrowing();
      this.#open(merged);
      return;
    }
    this.#open(filter);
  }

  #startNarrowing(): void {
    if (this.#narrowTimer !== undefined) return;
    this.#narrowTimer = setTimeout(() => {
      this.#narrowTimer = undefined;
      this.#narrowDue = true;
      this.#pump();
    }, this.#options.narrowAfterMs);
  }

  #stopNarrowing(): void {
    clearTimeout(this.#narrowTimer);
    this.#narrowTimer = undefined;
    this.#narrowDue = false;
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
    this.#client.listen(filter, { timeout: this.#options.ackTimeoutMs }).then(
      (subscription) => this.#acknowledged(filter, subscription),
      (error: unknown) => this.#openFailed(error),
    );
  }

  #acknowledged(filter: Filter, subscription: McpSubscription): void {
    this.#opening = undefined;
    if (this.#disposed) {
      void subscription.close().catch(() => {});
      return;
    }
    const stream: Stream = { subscription, filter, openedAt: this.#now(), retired: false };
    if (filterKey(filter) === filterKey(this.#filterFor(this.#desire))) this.#stopNarrowing();
    const previous = this.#current;
    this.#current = stream;
    void subscription.closed.then((reason) => this.#closed(stream, reason));

    // Only what we asked for counts: an acknowledgement naming URIs or lists
    // we never requested does not make them covered.
    const honored = subscription.honoredFilter as Filter;
    const requested = filter.resourceSubscriptions ?? [];
    const honoredUris = new Set(
      Array.isArray(honored.resourceSubscriptions) ? honored.resourceSubscriptions : [],
    );
    const covered = new Set(requested.filter((uri) => honoredUris.has(uri)));
    const declined = this.#uncoverable();
    for (const uri of requested) {
      if (!covered.has(uri)) declined.set(uri, 'not in the acknowledged filter');
    }
    const lists = new Set(
      LISTS.filter((list) => filter[filterBit[list]] === true && honored[filterBit[list]] === true),
    );
    this.#events.coverage({ uris: covered, lists });
    this.#events.declined(declined);
    this.#retire(previous);
    if (this.#status.state !== 'open') {
      // The last error belongs to the outage that just ended (events keep the history).
      this.#setStatus({
        state: 'open',
        since: this.#now(),
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
    if (this.#disposed) return;
    this.#status = { ...this.#status, lastError: errorMessage(error) };
    this.#scheduleRetry();
  }

  #closed(stream: Stream, reason: CloseReason): void {
    if (stream.retired || this.#disposed || stream !== this.#current) return;
    this.#current = undefined;
    this.#events.coverage(noCoverage);
    // A stream that lived a long time earned a fresh backoff; one that dies
    // right after its acknowledgement keeps backing off (no reopen storm).
    if (this.#now() - stream.openedAt >= this.#options.backoff.maxDelayMs) this.#attempt = 0;
    this.#status = {
      ...this.#status,
      reopenCount: this.#status.reopenCount + 1,
      lastCloseReason: reason,
    };
    this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    const delay = backoffDelay(this.#attempt, this.#options.backoff, this.#options.random);
    this.#attempt += 1;
    const offline = this.#retry.schedule(delay, () => this.#pump());
    const nextRetryAt = offline ? undefined : this.#now() + delay;
    if (!this.#current) {
      this.#setStatus({
        state: 'reopening',
        since: this.#status.state === 'reopening' ? this.#status.since : this.#now(),
        attempt: this.#attempt,
        nextRetryAt,
      });
    } else {
      this.#setStatus({ attempt: this.#attempt, nextRetryAt });
    }
  }

  #retire(stream: Stream | undefined): void {
    if (!stream || stream.retired) return;
    stream.retired = true;
    void stream.subscription.close().catch(() => {});
  }

  #setStatus(patch: Partial<StreamStatus>): void {
    this.#status = { ...this.#status, ...patch };
    this.#events.status(this.#status);
  }
}
