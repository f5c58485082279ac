import { errorMessage, isNotFound } from './errors';
import type { Asked } from './listenFilter';
import { newcomers, type PlannedStream } from './listenPlan';
import type { NotifiedList } from './lists';

/**
 * What a 2026-07-28 server refused to listen to (rule 5). A listen refused
 * as invalid params or not found is the server's answer, not a missing one:
 * the same filter would get the same answer, so it is not asked again with
 * backoff. What the refused request brought (its new URIs, then its new
 * lists as one more) is halved instead, the first half asked at once, until
 * what is refused alone is declined with the server's message and not asked
 * again until it is let go. A refused merge also re-sent what open streams
 * carry, which the server may refuse now (a deleted resource): all it
 * carried is halved the same way by probes, listens that replace nothing and
 * close once acknowledged, so its newcomers are not declined for it. Each
 * refusal halves what the next request brings or declines something: a
 * server that refuses everything has everything declined after at most
 * n + 2 + log2(n) requests for the n URIs a request carried.
 */
export class ListenRefusals {
  /** Refused URIs, with the server's message. */
  readonly uris = new Map<string, string>();
  readonly lists = new Set<NotifiedList>();
  /** How many new URIs (and the new lists, counted last as one) the next request may bring. */
  #room = Number.POSITIVE_INFINITY;
  /** What a refused merge carried (URIs, its lists as one) that no probe has cleared. */
  #suspects: (string | readonly NotifiedList[])[] = [];
  /** A probe cleared the last suspect: the next refusal waits a backoff first. */
  #fruitless = false;

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

  /**
   * A request was acknowledged: what it held back is tried next, all at
   * once. A probe's: what it asked is not what the server refuses.
   */
  acknowledged(probe = false): void {
    if (probe) this.#suspects = this.#suspects.slice(this.#room);
    this.#fruitless = probe && !this.#suspects.length;
    this.#room = Number.POSITIVE_INFINITY;
  }

  /**
   * While a refused merge is narrowed down, the next probe: a listen for the
   * first `#room` of what it carried, replacing nothing, closed once
   * acknowledged (the open streams keep covering what they carry).
   */
  probe(): Asked | undefined {
    const asked = this.#suspects.slice(0, this.#room);
    return asked.length
      ? {
          uris: asked.filter((item) => typeof item === 'string'),
          lists: asked.filter((item) => typeof item !== 'string').flat(),
        }
      : undefined;
  }

  /**
   * Whether the listen for `asked`, made while `streams` were open, failed
   * with the server's refusal of what it asked: invalid params (-32602) or
   * resource not found (-32002). Anything else says nothing of the filter:
   * no answer (a timeout, the network) or one that may change (-32603, the
   * SDK's "Subscription limit reached" while 1,024 listens are open server
   * wide; a gateway's -32000), so it is asked again with backoff.
   */
  refused(asked: Asked, streams: readonly PlannedStream[], error: unknown): boolean {
    // Refused again right after everything it carried was cleared: not
    // about the filter after all, so once with backoff (no probe storm).
    if (!isNotFound(error) || this.#fruitless) {
      this.#fruitless = false;
      return false;
    }
    let uris: readonly string[] = newcomers(streams, new Set(asked.uris));
    let lists: readonly NotifiedList[] = asked.lists.filter(
      (list) => !streams.some((stream) => stream.lists.has(list)),
    );
    if (
      this.#suspects.length ||
      uris.length < asked.uris.length ||
      lists.length < asked.lists.length
    ) {
      // A probe, or a merge: what it re-sent may be what is refused.
      ({ uris, lists } = asked);
      if (!this.#suspects.length) this.#suspects = [...uris, ...(lists.length ? [lists] : [])];
    }
    const brought = uris.length + (lists.length > 0 ? 1 : 0);
    if (brought > 1) {
      this.#room = Math.ceil(brought / 2);
    } else {
      for (const uri of uris) this.uris.set(uri, `the server refused: ${errorMessage(error)}`);
      for (const list of lists) this.lists.add(list);
      this.#suspects.shift();
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
