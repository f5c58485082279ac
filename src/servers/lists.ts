import type { QueryClient } from '@tanstack/query-core';
import { createMcpKeys } from '../core/keys';
import { type Qualified, qualify, resolveQualified, type ServerRef } from './qualify';

/** Each server with its cached tools or prompts (undefined: not loaded), in the order added. */
function listsOf<T>(
  queryClient: QueryClient,
  servers: readonly ServerRef[],
  scopeOf: (id: string) => string,
  kind: 'tools' | 'prompts',
) {
  return servers.map((server) => ({
    server,
    items: queryClient.getQueryData(createMcpKeys(scopeOf(server.id)).list(kind)) as
      | T[]
      | undefined,
  }));
}

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
  const lists = listsOf<T>(queryClient, servers, scopeOf, kind);
  return qualify(
    lists.map(({ server, items }) => ({ server, items: items ?? [] })),
    separator,
  );
}

/** The server and tool a qualified name stands for in the cached lists, or why none. */
export function toolOf(
  queryClient: QueryClient,
  servers: readonly ServerRef[],
  scopeOf: (id: string) => string,
  qualifiedName: string,
  separator: string,
): { serverId: string; name: string } | { problem: string } {
  const lists = listsOf<{ name: string }>(queryClient, servers, scopeOf, 'tools');
  return resolveQualified(qualifiedName, lists, separator);
}

/** The same items in the same places. */
export const sameItems = <T>(a: readonly T[], b: readonly T[]) =>
  a.length === b.length && a.every((item, i) => item === b[i]);
