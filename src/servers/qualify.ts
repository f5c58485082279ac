/**
 * Names that stay apart across servers: `server__tool`, the convention of
 * chat hosts, which a model's tool list needs (one flat namespace, names of
 * `[A-Za-z0-9_-]`).
 *
 * The rule, deterministic and independent of which lists have loaded:
 * 1. Each server gets a prefix: its name with every run of other characters
 *    made `_`. Servers are taken in the order they were added; a prefix an
 *    earlier server has becomes `prefix_2`, `prefix_3`… So two servers never
 *    share a prefix, and the first one added keeps the plain name.
 * 2. An item's qualified name is `prefix + separator + name`, the name made
 *    of `[A-Za-z0-9_-]` the same way (MCP allows `.` and more; model APIs do
 *    not). One that is still taken (a name containing the separator can meet
 *    another server's prefix: `a` + `b__c` and `a__b` + `c`) gets `_2`,
 *    `_3`… in the same order: servers as added, items as the server lists
 *    them. A call resolves the qualified name through this list, so the
 *    server always gets the item's own name.
 */

export const DEFAULT_SEPARATOR = '__';

export interface ServerRef {
  readonly id: string;
  readonly name: string;
}

/** One item of one server under its qualified name. */
export interface Qualified<T> {
  /** The name to show a model and to call with. */
  readonly qualifiedName: string;
  readonly serverId: string;
  readonly serverName: string;
  /** The item's own name on its server. */
  readonly name: string;
  readonly item: T;
}

function sanitize(name: string, fallback: string): string {
  const clean = name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
  return clean === '' ? fallback : clean;
}

function firstFree(base: string, taken: Set<string>): string {
  let name = base;
  for (let n = 2; taken.has(name); n += 1) name = `${base}_${n}`;
  taken.add(name);
  return name;
}

/** Each server's prefix (rule 1), by id. */
export function serverPrefixes(servers: readonly ServerRef[]): Map<string, string> {
  const taken = new Set<string>();
  return new Map(
    servers.map((server) => [server.id, firstFree(sanitize(server.name, server.id), taken)]),
  );
}

/** Every server's items under collision-safe qualified names (rules 1 and 2). */
export function qualify<T extends { name: string }>(
  groups: ReadonlyArray<{ server: ServerRef; items: readonly T[] }>,
  separator: string = DEFAULT_SEPARATOR,
): Qualified<T>[] {
  const prefixes = serverPrefixes(groups.map((group) => group.server));
  const taken = new Set<string>();
  const out: Qualified<T>[] = [];
  for (const { server, items } of groups) {
    const prefix = prefixes.get(server.id) as string;
    for (const item of items) {
      out.push({
        qualifiedName: firstFree(`${prefix}${separator}${sanitize(item.name, 'item')}`, taken),
        serverId: server.id,
        serverName: server.name,
        name: item.name,
        item,
      });
    }
  }
  return out;
}

/**
 * The server and item a qualified name stands for: from the qualified list
 * when the name is in it, else by prefix (an item whose list has not
 * loaded yet), when exactly one server's prefix fits.
 */
export function resolveQualified(
  qualifiedName: string,
  listed: readonly Qualified<unknown>[],
  servers: readonly ServerRef[],
  separator: string = DEFAULT_SEPARATOR,
): { serverId: string; name: string } | undefined {
  const found = listed.find((entry) => entry.qualifiedName === qualifiedName);
  if (found) return { serverId: found.serverId, name: found.name };
  const fits = [...serverPrefixes(servers)].filter(
    ([, prefix]) =>
      qualifiedName.startsWith(`${prefix}${separator}`) &&
      qualifiedName.length > prefix.length + separator.length,
  );
  if (fits.length !== 1) return undefined;
  const [serverId, prefix] = fits[0] as [string, string];
  return { serverId, name: qualifiedName.slice(prefix.length + separator.length) };
}
