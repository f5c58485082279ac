import { cancelled, McpQueryError } from '../core/errors';
import type { CallToolVariables, Upstream } from '../core/upstream';
import { MAX_REQUESTS_PER_TAB, TOO_MANY_REQUESTS } from './leader';
import { after, handOverOne, lostCall, type Pending, type Request } from './pending';
import type { TabMessage, WireError } from './protocol';

/** How often a request asks the leader whether it still runs it, before giving up on it. */
const ASKS = 2;

/**
 * A follower's reads and calls on their way to the leader. At most MAX_REQUESTS_PER_TAB are
 * sent at once (what the leader runs for one tab, refusing more): the rest wait here, in the
 * order made, so a tab showing many resources is never refused. A request holds its place until
 * the leader's reply comes, this tab cancels it or gives up on it (the leader is told, and frees
 * its place too), or another tab leads. Each waits while the leader shows it works on it, up to
 * its bound, and no longer than `quietMs` after the last sign: a leader that stops answering
 * holds no place, and no call, for long. A handover moves them to the next leader, sent under
 * new ids: a reply is taken only for the sending it answers (ids are never reused), so a late
 * one, to a request cancelled or sent to a previous leader, frees no place another now holds.
 * A leader of an earlier version holds a cancelled request's place until its work ends, and
 * refuses one too many: that one waits here again, and those places count until their replies.
 */
export class Requests {
  readonly #tab: string;
  readonly #send: (message: TabMessage) => void;
  #leader: string | undefined;
  #nextId = 0;
  readonly #pending = new Map<number, Pending>();
  /** Not sent to the current leader yet, in the order made. */
  #queued = new Set<number>();
  /** Sent to the current leader, its reply not in yet. */
  readonly #running = new Set<number>();
  /**
   * Sent to the current leader, then cancelled or given up on here, their late replies not in
   * yet; `#countsGone`: the leader counts them in its places still (an earlier version does).
   */
  readonly #gone = new Set<number>();
  #countsGone = false;
  /** To ask the leader about, this tick; `#askingAll`: all it was sent (and `#gone`, counted). */
  readonly #asking = new Set<number>();
  #askingAll = false;
  /** Counts the leader's words that it still runs some of this tab's requests. */
  #workingSaid = 0;

  constructor(tab: string, send: (message: TabMessage) => void) {
    this.#tab = tab;
    this.#send = send;
  }

  /**
   * A request for the leader, sent when one leads and a place is free. It waits for its reply
   * `quietMs` from the latest sign of the leader working on it, and `boundMs` in all
   * (`#patience`).
   */
  make(
    make: (id: number) => Request,
    options: {
      signal: AbortSignal | undefined;
      quietMs: number;
      boundMs: number;
      call?: CallToolVariables;
      action?: Pending['action'];
    },
  ): Promise<unknown> {
    const { signal, quietMs, boundMs, call, action } = options;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const pending: Pending = {
        request: make(this.#newId()),
        sentTo: undefined,
        call,
        action,
        signal,
        resolve,
        reject,
        done: () => {
          patience.stop();
          signal?.removeEventListener('abort', onAbort);
        },
        heard: () => patience.heard(),
      };
      const patience = this.#patience(pending, quietMs, boundMs);
      // Cancelled here: it ends as cancelled, and gives its place up at once.
      const onAbort = () => {
        if (!this.#free(pending.request.id)) return;
        reject(pending.request.type === 'call' ? cancelled(signal?.reason) : signal?.reason);
      };
      this.#pending.set(pending.request.id, pending);
      this.#queued.add(pending.request.id);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#flush();
    });
  }

  get(id: number): Pending | undefined {
    return this.#pending.get(id);
  }

  values(): IterableIterator<Pending> {
    return this.#pending.values();
  }

  /**
   * The leader says it still runs these (or sent progress for one): each of them waits on
   * (within its bound), and so do the requests queued behind them for a place (`#patience`).
   */
  working(ids: number[]): void {
    for (const id of ids) {
      if (!this.#sent(id) && !(this.#countsGone && this.#gone.has(id))) continue;
      this.#pending.get(id)?.heard();
      this.#workingSaid += 1;
    }
  }

  /**
   * The leader replied to `id`: the request sent under that id, if one is (a reply to another
   * sending, or to nothing sent, is no one's); its place is free. A late reply to one this tab
   * gave up frees the place the leader held for it, if it counted it. One refused and waiting
   * again takes a reply all the same: the refusal was another script's, and it ran.
   */
  replied(id: number, error?: WireError): Pending | undefined {
    if (this.#gone.delete(id)) this.#flush();
    const pending = this.#pending.get(id);
    if (!pending || !this.#sent(id)) return undefined;
    if (error?.code === 'INVALID_OPTIONS' && error.message === TOO_MANY_REQUESTS) {
      if (!this.#running.delete(id)) return undefined;
      // Not run: the leader holds places for requests this tab gave up (an earlier version frees
      // them as their work ends, then replies). It waits for a place again, in the order made,
      // and keeps `sentTo`: the refusal may be another script's, so it may run there all the same.
      this.#countsGone = true;
      const queued = this.#queued;
      this.#queued = new Set(
        [...this.#pending.keys()].filter((one) => one === id || queued.has(one)),
      );
      return undefined;
    }
    this.#running.delete(id);
    this.#take(id);
    this.#flush();
    return pending;
  }

  /** Sent to the current leader under `id`: running, or refused and waiting to go again. */
  #sent(id: number): boolean {
    const sentTo = this.#queued.has(id) ? this.#pending.get(id)?.sentTo : undefined;
    return this.#running.has(id) || (sentTo !== undefined && sentTo === this.#leader);
  }

  /**
   * Another tab leads (or none does, `undefined`): calls sent to the previous one fail (they
   * may have run); reads, and calls never sent, go to the new one, in the order made: a read
   * sent before under a new id. Each waits for the new leader afresh (the previous one's silence
   * is not the new one's).
   */
  follow(leader: string | undefined): void {
    this.#leader = leader;
    this.#running.clear();
    this.#gone.clear();
    this.#countsGone = false;
    if (leader === undefined) return;
    const all = [...this.#pending.values()];
    this.#pending.clear();
    for (const pending of all) {
      if (pending.sentTo !== undefined) {
        if (pending.request.type === 'call') {
          pending.done();
          pending.reject(lostCall());
          continue;
        }
        pending.request = { ...pending.request, id: this.#newId() };
        pending.sentTo = undefined;
      }
      pending.heard();
      this.#pending.set(pending.request.id, pending);
    }
    this.#queued = new Set(this.#pending.keys());
    this.#flush();
  }

  /**
   * This tab leads now (`to`: its own connection), or leaves (`to`: the membership of its next
   * group, or nothing). Reads run again through `to`; without one they fail. A call or task
   * request that never left this tab runs through `to`, unless `unsent` says why it may not (`to`
   * is another identity's): it fails with that, or (no `to`) as not run; one already sent may
   * have run, so it is not repeated but fails.
   */
  handOver(
    to: Pick<Upstream, 'query' | 'callTool' | 'request'> | undefined,
    why: string,
    unsent?: () => Error,
  ): void {
    for (const id of [...this.#pending.keys()])
      handOverOne(this.#take(id) as Pending, to, why, unsent);
  }

  #newId(): number {
    this.#nextId += 1;
    return this.#nextId;
  }

  /**
   * `id` waits no longer (returns it, if it still waited): if it was sent to the leader, the
   * leader is told (it frees the place too, and stops a call); if it held a place, the next
   * request goes into it. One refused and waiting again holds none there, as far as this tab
   * knows: it is not remembered among those given up.
   */
  #free(id: number): Pending | undefined {
    const sent = this.#sent(id);
    const taken = this.#take(id);
    if (!taken) return undefined;
    if (sent) this.#send({ type: 'cancel', tab: this.#tab, id });
    if (!this.#running.delete(id)) return taken;
    // At most as many as places: a leader that never replies keeps no more.
    if (this.#gone.size >= MAX_REQUESTS_PER_TAB)
      this.#gone.delete(this.#gone.values().next().value as number);
    this.#gone.add(id);
    this.#flush();
    return taken;
  }

  /** The request `id`, out of the pending set: the one who takes it settles it. */
  #take(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    this.#pending.delete(id);
    this.#queued.delete(id);
    pending.done();
    return pending;
  }

  /**
   * How long a request waits for its reply: `quietMs` from the latest sign of the leader
   * working on it (sent to it, the leader saying it still runs it, a call's progress), and
   * `boundMs` in all (a leader's read can join a flight of its own, retried; a call runs as long
   * as its own timeouts let it). Without a sign for a third of `quietMs` it asks the leader, and
   * again after two thirds: a leader that answers is never given up on for want of one answer
   * (this tab's timers, late after its page was frozen or the machine slept, run one at a time,
   * and the answer to the first question comes before the next). Timers of time waited: the
   * clock may be set back or forward meanwhile.
   */
  #patience(pending: Pending, quietMs: number, boundMs: number) {
    const step = quietMs / (ASKS + 1);
    let silent = 0;
    let said = this.#workingSaid;
    let stopTimer = () => {};
    const due = () => {
      const { id } = pending.request;
      // Not sent yet, for want of a place: while the leader works on the requests that hold the
      // places, this one waits with them (a leader that says nothing frees them as they expire).
      if (this.#queued.has(id) && said !== this.#workingSaid) {
        said = this.#workingSaid;
        silent = 0;
      } else silent += 1;
      if (silent > ASKS) {
        this.#expire(id, quietMs);
        return;
      }
      // Queued, it asks about every request holding a place.
      if (silent > 0 && this.#running.has(id)) this.#ask(id);
      else if (silent > 0 && this.#queued.has(id)) this.#ask(undefined);
      stopTimer = after(step, due);
    };
    stopTimer = after(step, due);
    // Derived from options of up to 2^31 - 1 ms each (durations.ts), the bound can be longer than
    // a timer holds: a timer given it would fire at once.
    const stopBound = after(boundMs, () => this.#expire(pending.request.id, boundMs));
    return {
      stop: () => {
        stopTimer();
        stopBound();
      },
      heard: () => {
        silent = 0;
        stopTimer();
        stopTimer = after(step, due);
      },
    };
  }

  /**
   * No answer in time: the leader dropped it or is stuck, and its place goes to the next. A call
   * sent may have run: it fails saying so, and is cancelled where it runs (never run again).
   */
  #expire(id: number, waitedMs: number): void {
    const taken = this.#free(id);
    if (!taken) return;
    let outcome = '';
    if (taken.request.type === 'call') {
      const sent = taken.sentTo !== undefined;
      outcome = sent
        ? '; the call may or may not have run'
        : '; the call was not sent: it was not run';
    }
    taken.reject(
      new McpQueryError(
        'NOT_CONNECTED',
        `no answer from the tab holding the connection within ${waitedMs} ms${outcome}`,
      ),
    );
  }

  /**
   * Ask the leader, once a tick, whether it still runs these (`undefined`: every request sent to
   * it); it answers `working`.
   */
  #ask(id: number | undefined): void {
    const first = this.#asking.size === 0 && !this.#askingAll;
    if (id === undefined) this.#askingAll = true;
    else this.#asking.add(id);
    if (!first) return;
    queueMicrotask(() => {
      // Those it gave up that the leader still counts hold places too: while it runs them, the
      // requests queued behind them wait on.
      const gone = this.#countsGone ? [...this.#gone] : [];
      const ids = this.#askingAll
        ? [...this.#pending.keys()].filter((one) => this.#sent(one)).concat(gone)
        : [...this.#asking].filter((one) => this.#sent(one));
      this.#asking.clear();
      this.#askingAll = false;
      if (ids.length > 0) this.#send({ type: 'waiting', tab: this.#tab, ids });
    });
  }

  /** Send what waits, while places are free. */
  #flush(): void {
    const leader = this.#leader;
    if (leader === undefined) return;
    const gone = this.#countsGone ? this.#gone.size : 0;
    for (const id of this.#queued) {
      if (this.#running.size + gone >= MAX_REQUESTS_PER_TAB) return;
      this.#queued.delete(id);
      const pending = this.#pending.get(id);
      if (!pending) continue;
      pending.sentTo = leader;
      this.#running.add(id);
      pending.heard();
      this.#send(pending.request);
    }
  }
}
