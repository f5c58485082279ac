import { canonical } from './listDiff';

/**
 * A short fingerprint of read contents, carried by the read's event once the
 * diagnostics are in use (they install it): a fold tells changed content from
 * the same content by it, without a hook into the read. FNV-1a over the
 * canonical JSON; an app without the diagnostics does not pay for it per read.
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
