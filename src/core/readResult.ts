import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { isPermanent, McpQueryError } from './errors';

/** How many times TanStack retries an MCP query that failed (`retryUnlessPermanent`). */
export const MAX_RETRIES = 3;

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
