import type { QueryClient } from '@tanstack/query-core';
import { createMcpKeys } from '../core/keys';
import type { ServerRef } from './qualify';
import { type Qualified, qualify } from './qualify';

/**
 * Every server's cached tools or prompts under qualified names, servers in
 * the order they were added: what `useServerTools()` shows, read from the
 * same cache entries, so a call resolves a name the way the list named it.
 */
export function qualifiedOf<T extends { name: string }>(
  queryClient: QueryClient,
  servers: readonly ServerRef[],
  scopeOf: (id: string) => string,
  kind: 'tools' | 'prompts',
  separator: string,
): Qualified<T>[] {
  const groups = servers.map((server) => ({
    server,
    items:
      (queryClient.getQueryData(createMcpKeys(scopeOf(server.id)).list(kind)) as T[] | undefined) ??
      [],
  }));
  return qualify(groups, separator);
}
