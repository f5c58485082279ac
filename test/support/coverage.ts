import type { Coverage, CoverageDiff, DeclinedChanges } from '../../src/core/channel';

/** The coverage a channel's reports add up to: `coverage` with `change` applied (a new snapshot). */
export function withChange(coverage: Coverage, change: CoverageDiff): Coverage {
  const uris = new Set(coverage.uris);
  const lists = new Set(coverage.lists);
  for (const uri of change.gained) uris.add(uri);
  for (const uri of change.lost) uris.delete(uri);
  for (const list of change.listsGained) lists.add(list);
  for (const list of change.listsLost) lists.delete(list);
  return { uris, lists };
}

/** The declined map a channel's reports add up to: `declined` with `changes` applied (a new map). */
export function withDeclined(
  declined: ReadonlyMap<string, string>,
  changes: DeclinedChanges,
): Map<string, string> {
  const next = new Map(declined);
  for (const [uri, reason] of changes) {
    if (reason === null) next.delete(uri);
    else next.set(uri, reason);
  }
  return next;
}
