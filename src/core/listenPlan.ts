import { type Coverage, type CoverageDiff, coverageDiff, noCoverage } from './channel';
import type { NotifiedList } from './lists';

/**
 * At most this many listen streams stay open, and one more while a
 * replacement waits for its acknowledgement. Each is a long-lived request:
 * a browser on HTTP/1.1 has 6 connections per host, and reads need the rest.
 */
export const MAX_STREAMS = 3;
/**
 * A new URI waits at most this long for its stream while newcomers keep
 * coming (coalescing them is what keeps a growing list linear on the wire)…
 */
export const MAX_WAIT_MS = 1000;
/** …and no longer once none has come for this long: the list stopped growing… */
export const QUIET_MS = 100;
/**
 * …or this long, when the merge would re-send more than the credit pays for:
 * a busy machine's pauses between a list's batches are not its end, and each
 * merge they forced re-sent a whole stream (a simulated growing list with
 * such pauses cost 6 entries per URI instead of 2.4).
 */
export const OVER_BUDGET_QUIET_MS = 300;

/** A stream as the plan sees it: what it was asked to carry. */
export interface PlannedStream {
  uris: ReadonlySet<string>;
  lists: ReadonlySet<NotifiedList>;
}

/** An open stream: what it was asked to carry, and what its acknowledgement granted of that. */
export interface AcknowledgedStream extends PlannedStream {
  covered: ReadonlySet<string>;
  listsCovered: ReadonlySet<NotifiedList>;
}

/**
 * What open streams cover together (and what of it moved since `previous`),
 * and the URIs they were asked for and not granted.
 */
export function coverageOf(
  streams: readonly AcknowledgedStream[],
  previous: Coverage = noCoverage,
): {
  coverage: Coverage;
  declined: Map<string, string>;
  /** What moved since `previous`. */
  change: CoverageDiff | undefined;
} {
  const uris = new Set<string>();
  const lists = new Set<NotifiedList>();
  const declined = new Map<string, string>();
  for (const stream of streams) {
    for (const uri of stream.covered) uris.add(uri);
    for (const list of stream.listsCovered) lists.add(list);
    for (const uri of stream.uris) {
      if (!stream.covered.has(uri)) declined.set(uri, 'not in the acknowledged filter');
    }
  }
  const coverage = { uris, lists };
  return { coverage, declined, change: coverageDiff(previous, coverage) };
}

export interface Situation<S extends PlannedStream> {
  /** The acknowledged, open streams. */
  streams: readonly S[];
  /** The URIs to be covered (retention's choice: the held ones plus extras). */
  keep: ReadonlySet<string>;
  /** The lists to be covered. */
  lists: ReadonlySet<NotifiedList>;
  /**
   * URIs that may be re-sent before the wire cost passes two entries per URI
   * brought: every new URI sent adds one, every URI sent again takes one.
   */
  credit: number;
  /** Since the oldest newcomer (not in any stream) was first seen, and the latest. */
  waitedMs: number;
  sinceNewestMs: number;
  /** Quiet for long enough: one stream with exactly what is kept and listed. */
  settle: boolean;
  /**
   * Waiting for more newcomers has lately gathered none: the app adds more
   * only once these are covered (a list that loads its next page when the
   * last one shows). Merge at once, log-structured, instead of waiting.
   */
  eager?: boolean;
  /**
   * The last waits gathered nothing: a wait ends after QUIET_MS without a
   * newcomer even when over budget (it only checks whether waiting pays again).
   */
  doubtful?: boolean;
}

export type Plan<S extends PlannedStream> =
  /** Close `close` (they carry nothing wanted); then nothing to ask, or ask again in `retryInMs`. */
  | { kind: 'rest'; close: S[]; retryInMs?: number }
  /** Open a stream with `uris` and `lists`; once acknowledged, close `replaces`. */
  | {
      kind: 'open';
      close: S[];
      uris: string[];
      lists: NotifiedList[];
      replaces: S[];
      added: number;
      resent: number;
    };

/** What `keep` has that no stream was asked for. */
export function newcomers(streams: readonly PlannedStream[], keep: ReadonlySet<string>): string[] {
  return [...keep].filter((uri) => !streams.some((stream) => stream.uris.has(uri)));
}

const kept = (stream: PlannedStream, keep: ReadonlySet<string>) => {
  let n = 0;
  for (const uri of stream.uris) if (keep.has(uri)) n += 1;
  return n;
};

/**
 * The next listen request (docs/design.md, rule 4). A filter is fixed for
 * the life of a stream, so a URI joins by a new stream: one of its own while
 * there is room, else merged with the smallest streams, which that stream
 * replaces once acknowledged. A merge re-sends what the replaced streams
 * still keep; it waits (coalescing more newcomers) while that is more than
 * the credit allows (keeping back what the next forced merge would need),
 * but never past MAX_WAIT_MS, nor past QUIET_MS without another newcomer
 * (OVER_BUDGET_QUIET_MS when the credit would not pay for the merge). So a
 * list that keeps growing costs about 2 entries per URI instead of one
 * whole filter per change, and a URI that just appeared alone is covered at
 * once (within OVER_BUDGET_QUIET_MS when the credit is spent). A stream
 * with nothing wanted left closes; the rest of the narrowing (released URIs,
 * lists nobody shows) waits until a stream is rebuilt anyway or `settle`.
 */
export function plan<S extends PlannedStream>(now: Situation<S>): Plan<S> {
  const { keep, lists } = now;
  const alive: S[] = [];
  const close: S[] = [];
  for (const stream of now.streams) {
    const carries = [...stream.lists].some((list) => lists.has(list));
    (carries || kept(stream, keep) > 0 ? alive : close).push(stream);
  }
  const fresh = newcomers(alive, keep);
  const listsAsked = new Set(alive.flatMap((stream) => [...stream.lists]));
  const needLists = [...lists].some((list) => !listsAsked.has(list));

  if (now.settle) {
    const exact = (stream: S) =>
      [...stream.uris].every((uri) => keep.has(uri)) &&
      [...stream.lists].every((list) => lists.has(list));
    if (alive.length === 0 || (alive.length === 1 && fresh.length === 0 && exact(alive[0] as S))) {
      return fresh.length === 0 && !needLists ? { kind: 'rest', close } : open([]);
    }
    return open(alive);
  }
  if (fresh.length === 0 && !needLists) return { kind: 'rest', close };

  // A new list rides with the streams that carry lists, so none is heard
  // twice; a stream that keeps no URI (only lists) is merged for free.
  const replaces = alive.filter(
    (stream) => (needLists && stream.lists.size > 0) || kept(stream, keep) === 0,
  );
  const others = alive
    .filter((stream) => !replaces.includes(stream))
    .sort((a, b) => kept(a, keep) - kept(b, keep));
  while (others.length + 1 > MAX_STREAMS) replaces.push(others.shift() as S);
  const cost = replaces.reduce((sum, stream) => sum + kept(stream, keep), 0);
  // A merge now may spend the credit, but not what the next merge forced by
  // the wait bounds would need: the smallest stream left after it (that is
  // what a list that stops growing merges its last newcomers with).
  const smallestAfter = Math.min(
    fresh.length + cost,
    ...others.map((stream) => kept(stream, keep)),
  );
  if (needLists || cost === 0 || now.credit + fresh.length - cost >= smallestAfter) {
    return open(replaces);
  }
  const overBudget = now.credit + fresh.length - cost < 0;
  const quietMs = overBudget && !now.doubtful ? OVER_BUDGET_QUIET_MS : QUIET_MS;
  if (!now.eager && now.waitedMs < MAX_WAIT_MS && now.sinceNewestMs < quietMs) {
    return {
      kind: 'rest',
      close,
      retryInMs: Math.min(MAX_WAIT_MS - now.waitedMs, quietMs - now.sinceNewestMs),
    };
  }
  // Over budget anyway. If the list stopped growing, the cheapest merge;
  // if it keeps growing (or waits on this coverage to grow), merge like a
  // log-structured tree (each next stream while it is no bigger than what is
  // merged already), so the small streams that force the next merges do not
  // pile up.
  let size = fresh.length + cost;
  const growing = now.eager || now.waitedMs >= MAX_WAIT_MS;
  while (growing && others.length > 0 && kept(others[0] as S, keep) <= size) {
    const next = others.shift() as S;
    size += kept(next, keep);
    replaces.push(next);
  }
  return open(replaces);

  function open(replaced: S[]): Plan<S> {
    const uris = new Set(fresh);
    for (const stream of replaced) for (const uri of stream.uris) if (keep.has(uri)) uris.add(uri);
    const carriesLists = needLists || replaced.some((stream) => stream.lists.size > 0);
    return {
      kind: 'open',
      close,
      uris: [...uris].sort(),
      lists: carriesLists ? [...lists] : [],
      replaces: replaced,
      added: fresh.length,
      resent: uris.size - fresh.length,
    };
  }
}
