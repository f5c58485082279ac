import type { Coverage, CoverageDiff } from '../../src/core/channel';

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
