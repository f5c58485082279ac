import type { Resource } from '@modelcontextprotocol/client';

/** URI → a canonical rendering of its list entry. */
export type ListFingerprint = ReadonlyMap<string, string>;

export function fingerprintList(resources: readonly Resource[]): ListFingerprint {
  const entries = new Map<string, string>();
  for (const resource of resources) {
    if (resource && typeof resource.uri === 'string')
      entries.set(resource.uri, canonical(resource));
  }
  return entries;
}

export interface ListDiff {
  /** Present before and after, with a different entry (title, size, lastModified…). */
  changed: string[];
  removed: string[];
  added: string[];
}

/**
 * Which URIs a new list says something about. Without a previous list only
 * removals are certain (a URI that is not listed now is gone); an entry seen
 * for the first time says nothing about whether its content changed.
 */
export function diffLists(previous: ListFingerprint | undefined, next: ListFingerprint): ListDiff {
  const diff: ListDiff = { changed: [], removed: [], added: [] };
  if (!previous) return diff;
  for (const [uri, entry] of next) {
    const before = previous.get(uri);
    if (before === undefined) diff.added.push(uri);
    else if (before !== entry) diff.changed.push(uri);
  }
  for (const uri of previous.keys()) {
    if (!next.has(uri)) diff.removed.push(uri);
  }
  return diff;
}

/** JSON with sorted keys, so two equal entries render identically. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(inner).sort())
      sorted[key] = (inner as Record<string, unknown>)[key];
    return sorted;
  });
}
