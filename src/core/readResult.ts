import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { isPermanent, McpQueryError } from './errors';
import { canonical } from './listDiff';

const MAX_RETRIES = 3;

/**
 * A read answer that would replace good content with nothing, or with the
 * content of another resource, is an error: the previous content stays.
 */
export function checkContents(uri: string, result: ReadResourceResult): void {
  const contents: unknown = result.contents;
  if (!Array.isArray(contents) || contents.length === 0) {
    throw new McpQueryError(
      'EMPTY_CONTENTS',
      `resources/read of ${uri} returned no contents (what was shown stays)`,
    );
  }
  const named = contents.map((item) => (item as { uri?: unknown } | null)?.uri);
  if (!named.some((other) => typeof other === 'string' && sameResource(other, uri))) {
    throw new McpQueryError(
      'WRONG_URI',
      `resources/read of ${uri} returned contents for ${String(named[0]).slice(0, 200)}; what was shown stays`,
    );
  }
}

/**
 * Whether a content item belongs to the requested resource: the same URI, the
 * same after `new URL()` (servers on the SDKs turn `file:///a b` into
 * `file:///a%20b`), or a URI below it (a directory-like resource listing its
 * children).
 */
function sameResource(returned: string, requested: string): boolean {
  if (returned === requested) return true;
  const normal = (uri: string) => {
    try {
      return new URL(uri).href;
    } catch {
      return uri;
    }
  };
  const a = normal(returned);
  const b = normal(requested);
  return a === b || a.startsWith(b.endsWith('/') ? b : `${b}/`);
}

/** TanStack's retry, minus what retrying cannot fix (not found, invalid URI). */
export function retryUnlessPermanent(failureCount: number, error: unknown): boolean {
  return !isPermanent(error) && failureCount < MAX_RETRIES;
}

/** A result's `ttlMs` as a staleTime: absent, zero or negative means stale at once. */
export function ttlOf(data: unknown): number {
  const ttl = (data as { ttlMs?: unknown } | undefined)?.ttlMs;
  return typeof ttl === 'number' && Number.isFinite(ttl) && ttl > 0 ? ttl : 0;
}

/**
 * A short fingerprint of read contents, carried by the read's event: a fold
 * (the diagnostics) tells changed content from the same content by it,
 * without a hook into the read. FNV-1a over the canonical JSON.
 */
export function digest(contents: unknown): string {
  const text = canonical(contents);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return `${(hash >>> 0).toString(36)}.${text.length.toString(36)}`;
}
