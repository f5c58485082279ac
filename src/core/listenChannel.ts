import type { Client, McpSubscription } from '@modelcontextprotocol/client';
import { backoffDelay } from './backoff';
import type { ChangeChannel, ChannelReport, CloseReason, Coverage } from './channel';
import { declinedChanges, initialStatus, noCoverage } from './channel';
import { errorMessage, rpcCode } from './errors';
import type { StreamStatus } from './events';
import type { Desire } from './interest';
import { delay, whileAlive } from './lifetime';
import { filterOf, grantedOf } from './listenFilter';
import { coverageOf, newcomers } from './listenPlan';
import { ListenRefusals } from './listenRefusals';
import type { ListenChannelOptions, Opening, Stream } from './listenTypes';
import { declaresListChanged, NOTIFIED_LISTS, type NotifiedList } from './lists';
import { Retiring } from './retiring';
import { RetryTimer } from './retryTimer';
import { WaitLearner } from './waitLearner';

export type { ListenChannelOptions } from './listenTypes';

/**
 * The 2026-07-28 channel (docs/design.md, rules 4–6): `subscriptions/listen`
 * streams whose filters together name every subscribed URI and wanted list.
 * A filter is fixed for the life of its stream, so what is added goes into
 * a new stream, beside the others or merged with some of them (the plan:
 * `listenPlan.ts`), and a merge closes what it replaces only once it is
 * acknowledged (make-before-break: nothing wanted is ever unheard). One
 * request is in flight at a time; changes meanwhile go into the next one.
 * Coverage is the union of the open streams' acknowledged URIs; a stream that
 * ends for any reason but our own close loses only its own, which are asked
 * again after a capped, jittered backoff. A listen the server refuses is
 * narrowed down at once instead (`listenRefusals.ts`).
 */
export class ListenChannel implements ChangeChannel {
  readonly #client: Pick<Client, 'listen'>;
  readonly #report: ChannelReport;
  readonly #options: ListenChannelOptions;
  #cannot: string | undefined; // why no URI can be covered, if none can
  #desire: Desire = { uris: [], held: new Set(), lists: new Set() };
  #streams: Stream[] = [];
  #opening: Opening | undefined;
  readonly #retry: RetryTimer;
  #attempt = 0;
  /** Re-sends allowed before the wire cost passes two entries per URI brought. */
  #credit = 0;
  /** The plan, with what waiting for newcomers lately brought. */
  readonly #planner = new WaitLearner();
  /** When the oldest and the newest URI still waiting for a stream were first seen. */
  #waiting: { since: number; newest: number; count: number } | undefined;
  /** What retention chose to keep at the last plan (released URIs out of it are dead weight). */
  #kept: ReadonlySet<string> = new Set();
  #declined: ReadonlyMap<string, string> = new Map();
  readonly #refusals = new ListenRefusals();
  /** What the session was last told is covered. */
  #reported: Coverage = noCoverage;
  /** Streams let go this turn, closed on the next. */
  readonly #retiring: Retiring;
  #stopWait: (() => void) | undefined;
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
    if (options.capabilities?.resources?.subscribe !== true) {
      this.#cannot = 'the server did not declare resources.subscribe';
    }
    this.#retry = new RetryTimer(options.signal);
    this.#retiring = new Retiring(options.signal);
    this.#status = initialStatus('listen', options.clock.now());
    if (this.#cannot && !NOTIFIED_LISTS.some((list) => this.#declares(list))) {
      this.#setStatus({
        state: 'unsupported',
        note: 'the server declared neither resources.subscribe nor any listChanged',
      });
    }
  }

  update(desire: Desire): void {
    this.#desire = desire;
    if (this.#cannot) this.#reportDeclined();
    if (this.#refusals.forget(desire.held, desire.lists)) this.#reportStreams();
    this.#noteNewcomers();
    this.#stopIdle?.();
    this.#stopIdle = delay(this.#options.signal, this.#options.releaseAfterMs, () => {
      this.#settle = true;
      this.#pump();
    });
    this.#pump();
  }

  mayCover(uri: string): boolean {
    return !this.#cannot && !this.#declined.has(uri);
  }

  /** Not once a stream was asked for `list` and not granted it: nothing asks again (rule 5). */
  mayCoverList(list: NotifiedList): boolean {
    return (
      this.#declares(list) &&
      this.#status.state !== 'unsupported' &&
      !this.#refusals.lists.has(list) &&
      !this.#streams.some((stream) => stream.lists.has(list) && !stream.listsCovered.has(list))
    );
  }

  async close(): Promise<void> {
    this.#retiring.add(this.#streams);
    this.#streams = [];
    await this.#retiring.close();
  }

  #declares(list: NotifiedList): boolean {
    return declaresListChanged(this.#options.capabilities, list);
  }

  /**
   * When the oldest and the newest held URI that no stream carries or is
   * being asked for were first seen: the plan coalesces newcomers for a
   * bounded time, counted from these.
   */
  #noteNewcomers(): void {
    const opening = new Set(this.#opening?.uris);
    const asked = (uri: string) =>
      opening.has(uri) ||
      this.#refusals.uris.has(uri) ||
      this.#streams.some((stream) => stream.uris.has(uri));
    let count = 0;
    for (const uri of this.#desire.held) if (!asked(uri)) count += 1;
    if (count > 0 && this.#opening) this.#planner.grewWhileAsking();
    const now = this.#options.clock.now();
    const waiting = this.#waiting;
    if (count === 0) this.#waiting = undefined;
    else if (!waiting) this.#waiting = { since: now, newest: now, count };
    else if (count > waiting.count) this.#waiting = { ...waiting, newest: now, count };
  }

  /** Declined, reported as what changed: every wanted URI if none can be covered, else `notGranted`. */
  #reportDeclined(notGranted = new Map<string, string>()): void {
    const reason = this.#cannot;
    const next = reason ? new Map(this.#desire.uris.map((u) => [u, reason])) : notGranted;
    const changes = declinedChanges(this.#declined, next);
    this.#declined = next;
    if (changes.length > 0) this.#report.declined(changes);
  }

  /** What the open streams cover together, and what they were asked for and not granted. */
  #reportStreams(): void {
    const { coverage, declined, change } = coverageOf(this.#streams, this.#reported);
    this.#reported = coverage;
    // Even unchanged: a list the acknowledgement left out is no longer waited for.
    this.#report.coverage(change ?? { gained: [], lost: [], listsGained: [], listsLost: [] });
    this.#reportDeclined(new Map([...declined, ...this.#refusals.uris]));
  }

  #pump(): void {
    if (this.#opening || this.#retry.pending) return;
    if (this.#status.state === 'unsupported') return;
    const probe = this.#refusals.probe();
    // A probe is asked and answered alone: nothing else of a plan is read.
    if (probe) {
      this.#open({ ...probe, probe: true } as Opening);
      return;
    }
    this.#stopWait?.();
    this.#stopWait = undefined;
    const { clock, retention } = this.#options;
    const settle = this.#settle;
    this.#settle = false;
    const lists = new Set([...this.#desire.lists].filter((list) => this.#declares(list)));
    let keep: ReadonlySet<string> = new Set();
    if (!this.#cannot) {
      const { held } = this.#desire;
      // What retention let go but a stream still carries is not active any more.
      const active = new Set<string>();
      for (const stream of this.#streams) {
        for (const uri of stream.uris) if (held.has(uri) || this.#kept.has(uri)) active.add(uri);
      }
      keep = settle ? retention.settle(held) : retention.plan(held, active);
    }
    const asked = this.#refusals.narrow(keep, lists, this.#streams);
    keep = asked.keep;
    this.#kept = keep;
    const now = clock.now();
    if (newcomers(this.#streams, keep).length === 0) this.#waiting = undefined;
    else this.#waiting ??= { since: now, newest: now, count: 0 };
    const next = this.#planner.plan({
      streams: this.#streams,
      keep,
      lists: asked.lists,
      credit: this.#credit,
      waitedMs: this.#waiting ? now - this.#waiting.since : 0,
      sinceNewestMs: this.#waiting ? now - this.#waiting.newest : 0,
      settle,
    });
    if (next.kind === 'open') {
      this.#waiting = undefined;
      this.#credit += next.added - next.resent;
      // What carries nothing wanted goes with what the new stream replaces,
      // once it is acknowledged: the request is not held up by closing them,
      // and no more than MAX_STREAMS + 1 are ever on the wire.
      this.#open({ ...next, close: [], replaces: [...next.replaces, ...next.close] });
      return;
    }
    if (next.close.length > 0) {
      this.#streams = this.#streams.filter((stream) => !next.close.includes(stream));
      this.#retiring.add(next.close);
      this.#reportStreams();
    }
    if (next.retryInMs !== undefined) {
      this.#stopWait = delay(this.#options.signal, next.retryInMs, () => this.#pump());
    } else if (this.#streams.length === 0 && this.#status.state !== 'idle') {
      this.#setStatus({
        state: 'idle',
        note:
          this.#refusals.uris.size + this.#refusals.lists.size
            ? 'all refused by the server'
            : 'nothing to listen to',
      });
    }
  }

  #open(next: Opening): void {
    this.#opening = next;
    if (this.#streams.length === 0) {
      this.#setStatus({
        state: this.#status.reopenCount > 0 || this.#attempt > 0 ? 'reopening' : 'opening',
        nextRetryAt: undefined,
        note: undefined,
      });
    }
    const { signal } = this.#options;
    this.#client.listen(filterOf(next), { timeout: this.#options.ackTimeoutMs }).then(
      (subscription) => {
        // Acknowledged after the session ended: nobody is listening to it.
        if (signal.aborted) void subscription.close().catch(() => {});
        else this.#acknowledged(next, subscription);
      },
      whileAlive(signal, (error: unknown) => this.#openFailed(next, error)),
    );
    // What the last acknowledgement let go closes in this turn, right behind
    // the request: on the wire, the request takes the place it leaves.
    void this.#retiring.close();
  }

  #acknowledged(next: Opening, subscription: McpSubscription): void {
    this.#opening = undefined;
    if (next.probe) {
      // Only a test: the open streams still cover what they carry.
      void subscription.close().catch(() => {});
      this.#refusals.acknowledged(true);
      this.#pump();
      return;
    }
    // A stream is open again: a retry still pending for an older one would
    // only hold the next change back.
    this.#retry.cancel();
    this.#refusals.acknowledged();
    const stream: Stream = {
      subscription,
      uris: new Set(next.uris),
      lists: new Set(next.lists),
      ...grantedOf(next, subscription.honoredFilter),
      openedAt: this.#options.clock.now(),
    };
    void subscription.closed.then(
      whileAlive(this.#options.signal, (reason: CloseReason) => this.#closed(stream, reason)),
    );
    this.#streams = [...this.#streams.filter((s) => !next.replaces.includes(s)), stream];
    this.#reportStreams();
    this.#retiring.add(next.replaces);
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

  #openFailed(next: Opening, error: unknown): void {
    this.#opening = undefined;
    const lastError = errorMessage(error);
    this.#status = { ...this.#status, lastError };
    // No listen at all ("method not found"): asking again cannot help, nothing is covered.
    if (rpcCode(error) === -32601) {
      this.#cannot = `cannot listen: ${lastError}`;
      this.#setStatus({ state: 'unsupported', note: this.#cannot });
      void this.close();
      this.#reportStreams();
      return;
    }
    // A refusal is narrowed down at once; anything else is asked again with backoff.
    if (this.#refusals.refused(next, this.#streams, error)) {
      this.#reportStreams();
      this.#pump();
    } else {
      this.#scheduleRetry();
    }
  }

  /** A stream ended: only an open one's end means anything (the others were replaced). */
  #closed(stream: Stream, reason: CloseReason): void {
    if (!this.#streams.includes(stream)) return;
    this.#streams = this.#streams.filter((s) => s !== stream);
    this.#reportStreams();
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
    if (this.#streams.length === 0) {
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

  #setStatus(patch: Partial<StreamStatus>): void {
    this.#status = { ...this.#status, ...patch };
    this.#report.status(this.#status);
  }
}
