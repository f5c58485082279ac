import { compareIds, type StreamEntry, type StreamInfo } from './streamReply';

/** Where a reader stands on the stream. */
export interface Position {
  /** Last entry read; the next read returns entries after it. */
  lastId: string;
  /** The stream's `entries-added` as of `lastId`; undefined where Redis (< 7.0) does not say. */
  accounted: number | undefined;
}

export interface Reconciled {
  position: Position;
  /**
   * Entries added after `before.lastId` that were trimmed without being read; undefined when
   * Redis went back to an older copy of the stream: some may be lost, how many is unknown.
   */
  lost: number | undefined;
}

/**
 * Checks a position against the stream as `XINFO STREAM` describes it now. `read` are the entries
 * read since `before` (none for a check before reading), and the stream may have changed since
 * they were read: every count below comes from the one atomic `info`. `pastClock`: the last id
 * read is at or past Redis' clock; it tells a stream recreated below a junk id from an older copy.
 *
 * Trimming drops the oldest entries first. So while the oldest entry left is at or before
 * `before.lastId`, nothing after it is gone. Otherwise every entry left comes after it, and
 * entries added minus those accounted for, read, or still there is what was trimmed unread.
 */
export function reconcile(
  before: Position,
  read: StreamEntry[],
  info: StreamInfo | undefined,
  pastClock: boolean,
): Reconciled {
  const lastId = read.at(-1)?.id ?? before.lastId;
  const counted = (accounted: number | undefined) =>
    accounted === undefined ? undefined : accounted + read.length;
  if (info === undefined) {
    // Gone altogether (a Redis restart without persistence, a DEL): whatever comes is new,
    // whatever ids it gets.
    const accounted = before.accounted === undefined ? undefined : 0;
    return { position: { lastId: '0-0', accounted }, lost: 0 };
  }
  const { entriesAdded, length, firstId } = info;
  if (compareIds(info.lastGeneratedId, lastId) < 0) {
    if (!pastClock) {
      // An older copy (a restore from an older snapshot, a failover to a lagging replica): what
      // it lacks up to lastId was read here, and new entries get ids after its last one (XADD,
      // whatever the clocks), so read on from there: nothing read twice, nothing skipped. What
      // others wrote after the copy and this reader had not read is gone: a gap, size unknown.
      const position = { lastId: info.lastGeneratedId, accounted: entriesAdded };
      return { position, lost: undefined };
    }
    // Recreated below our position (its ids restarted under an entry with a far-future id):
    // reading on from lastId would skip all of it until the clock got there. Nothing in it has
    // been read here; what is no longer in it never will be.
    const unread = entriesAdded === undefined ? 0 : Math.max(0, entriesAdded - length);
    return {
      position: { lastId: '0-0', accounted: entriesAdded === undefined ? undefined : unread },
      lost: unread,
    };
  }
  const untouched = { position: { lastId, accounted: counted(before.accounted) }, lost: 0 };
  if (before.accounted === undefined || entriesAdded === undefined) return untouched;
  if (firstId !== undefined && compareIds(firstId, before.lastId) <= 0) return untouched;
  // Every entry left is after before.lastId; those also read are at or before lastId.
  const readAndLeft =
    firstId === undefined ? 0 : read.filter((entry) => compareIds(entry.id, firstId) >= 0).length;
  const accounted = entriesAdded - length + readAndLeft;
  // Below what was read: the stream was recreated above our position; count from here on.
  const lost = Math.max(0, accounted - before.accounted - read.length);
  return { position: { lastId, accounted }, lost };
}
