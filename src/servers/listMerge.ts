import { MAX_SERVERS, type McpServerConfig } from './config';

/**
 * This tab's change (`base` → `ours`) put on a list another tab wrote without knowing of it
 * (`theirs`), server by server: what only this tab changed (added, altered, removed) is taken
 * from `ours`; what both changed, or only the other, stays as in `theirs`, so every tab settles
 * on the same list whichever merges. Order: `theirs`, then this tab's additions.
 */
export function mergeLists(
  base: readonly McpServerConfig[],
  ours: readonly McpServerConfig[],
  theirs: readonly McpServerConfig[],
): McpServerConfig[] {
  const text = (server: McpServerConfig) => JSON.stringify(server);
  const before = new Map(base.map((server) => [server.id, text(server)]));
  const mine = new Map(ours.map((server) => [server.id, server]));
  const merged: McpServerConfig[] = [];
  for (const server of theirs) {
    const was = before.get(server.id);
    const now = mine.get(server.id);
    const onlyOursChanged = was === text(server) && (now === undefined || text(now) !== was);
    if (!onlyOursChanged) merged.push(server);
    else if (now) merged.push(now);
  }
  for (const server of ours) {
    if (before.has(server.id) || theirs.some((other) => other.id === server.id)) continue;
    if (merged.length < MAX_SERVERS) merged.push(server);
  }
  return merged;
}
