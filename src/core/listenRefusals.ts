import { errorMessage, isNotFound } from './errors';
import { newcomers, type PlannedStream } from './listenPlan';
import type { NotifiedList } from './lists';

/**
 * What a 2026-07-28 server refused to listen to (rule 5). A listen refused
 * as invalid params or not found is the server's answer, not a missing one: the same
 * filter would get the same answer, so it is not asked again with backoff.
 * What the refused request brought (its new URIs, then its new lists as one
 * more) is halved instead, the first half asked at once, until what is
 * refused alone is declined with the server's message and not asked again
 * until it is let go. Each refusal halves what the next request brings or
 * declines something: a server that refuses everything has everything
 * declined after at most n + 2 + log2(n) requests for n URIs.
 */
export class ListenRefusals {
  /** Refused URIs, with the server's message. */
  readonly uris = new Map<string, string>();
  readonly lists = new Set<NotifiedList>();
  /** How many new URIs (and the new lists, counted last as one) the next request may bring. */
  #room = Number.POSITIVE_INFINITY;

  /** Of `keep` and `lists`, what may be asked now, beside what `streams` carry. */
  narrow(
    keep: ReadonlySet<string>,
    lists: ReadonlySet<NotifiedList>,
    streams: readonly PlannedStream[],
  ): { keep: Set<string>; lists: Set<NotifiedList> } {
    const fresh = newcomers(streams, keep).filter((uri) => !this.uris.has(uri));
    const later = new Set(fresh.slice(this.#room));
    const roomForLists = fresh.length < this.#room;
    return {
      keep: new Set([...keep].filter((uri) => !this.uris.has(uri) && !later.has(uri))),
      lists: new Set(
        [...lists].filter(
          (list) =>
            !this.lists.has(list) &&
            (roomForLists || streams.some((stream) => stream.lists.has(list))),
        ),
      ),
    };
  }

  /** A request was acknowledged: what it held back is tried next, all at once. */
  acknowledged(): void {
    this.#room = Number.POSITIVE_INFINITY;
  }

  /**
   * Whether the listen for `asked`, made while `streams` were open, failed
   * with the server's refusal of what it asked: invalid params (-32602) or
   * resource not found (-32002). Anything else says nothing of the filter:
   * no answer (a timeout, the network) or one that may change (-32603, the
   * SDK's "Subscription limit reached" while 1,024 listens are open server
   * wide; a gateway's -32000), so it is asked again with backoff.
   */
  refused(
    asked: { uris: readonly string[]; lists: readonly NotifiedList[] },
    streams: readonly PlannedStream[],
    error: unknown,
  ): boolean {
    if (!isNotFound(error)) return false;
    const uris = newcomers(streams, new Set(asked.uris));
    const lists = asked.lists.filter((list) => !streams.some((stream) => stream.lists.has(list)));
    const brought = uris.length + (lists.length > 0 ? 1 : 0);
    if (brought > 1) {
      this.#room = Math.ceil(brought / 2);
    } else {
      for (const uri of uris) this.uris.set(uri, `the server refused: ${errorMessage(error)}`);
      for (const list of lists) this.lists.add(list);
    }
    return true;
  }

  /** What is no longer wanted forgets that it was refused: asking again later is fair. */
  forget(held: ReadonlySet<string>, lists: ReadonlySet<NotifiedList>): boolean {
    for (const list of this.lists) if (!lists.has(list)) this.lists.delete(list);
    let forgot = false;
    for (const uri of this.uris.keys()) if (!held.has(uri)) forgot = this.uris.delete(uri);
    return forgot;
  }
}
