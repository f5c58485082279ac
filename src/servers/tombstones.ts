import { type McpServerConfig, NONCE } from './config';

/**
 * How many ended adds a list remembers (newest first): enough for any crossing among the tabs open
 * at once, small enough to write with every change.
 */
export const REMOVED = 64;

/**
 * The nonces of the adds a stored list or message says were ended lately, as far as they can be
 * used: nonces as `checkServer` takes them (anything else names no add), each once, at most REMOVED. A list from an earlier
 * version has none.
 */
export function checkRemoved(value: unknown): string[] {
  const removed: string[] = [];
  if (!Array.isArray(value)) return removed;
  for (const one of value) {
    if (removed.length >= REMOVED) break;
    if (typeof one !== 'string' || !NONCE.test(one)) continue;
    if (!removed.includes(one)) removed.push(one);
  }
  return removed;
}

/**
 * The nonces of the adds `before` holds and `after` does not: servers removed, or moved (a move
 * is a new add, with a new nonce). A server from an earlier version has no nonce and no tombstone.
 */
export function endedAdds(
  before: readonly McpServerConfig[],
  after: readonly McpServerConfig[],
): string[] {
  const kept = new Set(after.map((server) => server.nonce));
  return before.flatMap(({ nonce }) => (nonce !== undefined && !kept.has(nonce) ? [nonce] : []));
}

/** Both sides' ended adds, `first`'s ahead (the newest first), at most REMOVED. */
export const unionRemoved = (first: readonly string[], second: readonly string[]): string[] =>
  [...new Set([...first, ...second])].slice(0, REMOVED);

/** `servers` without those whose add was ended (a re-add has a fresh nonce, and stays). */
export const withoutRemoved = (
  servers: readonly McpServerConfig[],
  removed: readonly string[],
): McpServerConfig[] => {
  const ended = new Set(removed);
  return servers.filter((server) => server.nonce === undefined || !ended.has(server.nonce));
};
