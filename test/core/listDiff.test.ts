import { describe, expect, it } from 'vitest';
import { canonical, diffLists, fingerprintList } from '../../src/core/listDiff';

describe('list diff', () => {
  const a = { uri: 'a://1', name: 'a', mimeType: 'text/plain' };
  const b = { uri: 'b://2', name: 'b', annotations: { lastModified: '2026-01-01' } };

  it('finds changed, removed and added entries by URI', () => {
    const before = fingerprintList([a, b]);
    const after = fingerprintList([
      a,
      { ...b, annotations: { lastModified: '2026-02-02' } },
      { uri: 'c://3', name: 'c' },
    ]);
    expect(diffLists(before, after)).toEqual({ changed: ['b://2'], removed: [], added: ['c://3'] });
    expect(diffLists(after, fingerprintList([a]))).toEqual({
      changed: [],
      removed: ['b://2', 'c://3'],
      added: [],
    });
  });

  it('key order in an entry does not count as a change', () => {
    const reordered = { name: 'a', mimeType: 'text/plain', uri: 'a://1' };
    expect(diffLists(fingerprintList([a]), fingerprintList([reordered])).changed).toEqual([]);
    expect(canonical({ x: 1, y: { b: 2, a: 1 } })).toBe(canonical({ y: { a: 1, b: 2 }, x: 1 }));
  });

  it('with no previous list nothing is judged changed', () => {
    expect(diffLists(undefined, fingerprintList([a]))).toEqual({
      changed: [],
      removed: [],
      added: [],
    });
  });
});
