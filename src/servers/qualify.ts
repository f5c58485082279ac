/**
 * Names that stay apart across servers: `server__tool`, the convention of
 * chat hosts, which a model's tool list needs (one flat namespace, names of
 * `[A-Za-z0-9_-]`). A name always means the (server, item) it was issued
 * for, or nothing: never another server's item because a list changed.
 *
 * The rule, deterministic and independent of which lists have loaded:
 * 1. Each server gets a prefix: its name with every run of other characters
 *    made `_`, and without the separator (`a__b` is `a_b`, with `_` as the
 *    separator `a_b` is `ab`), so a qualified name splits at its first
 *    separator, one way only. Servers are taken in the order they were
 *    added; a prefix an earlier server has becomes `prefix_2`, `prefix_3`…
 * 2. An item's qualified name is `prefix + separator + name`, the name made
 *    of `[A-Za-z0-9_-]` the same way (MCP allows `.` and more; model APIs do
 *    not). Two items of one server that come out alike (`read.file` and
 *    `read file`) could each be meant: neither gets the name, and calling it
 *    fails saying so. A call resolves the name to the server's own item name.
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

/** `prefix` without what would let `prefix + separator + …` split anywhere but at its end. */
function unambiguous(prefix: string, separator: string): string {
  let clean = prefix;
  for (;;) {
    const at = (clean + separator).indexOf(separator);
    if (at >= clean.length) return clean;
    clean = clean.slice(0, at) + clean.slice(at + 1);
  }
}

/** Each server's prefix (rule 1), by id. */
export function serverPrefixes(
  servers: readonly ServerRef[],
  separator: string = DEFAULT_SEPARATOR,
): Map<string, string> {
  const taken = new Set<string>();
  return new Map(
    servers.map((server) => {
      const base =
        unambiguous(sanitize(server.name, server.id), separator) ||
        unambiguous(server.id, separator) ||
        unambiguous('server', separator);
      let prefix = base;
      for (let n = 2; taken.has(prefix); n += 1) prefix = unambiguous(`${base}_${n}`, separator);
      taken.add(prefix);
      return [server.id, prefix];
    }),
  );
}

/** One server's items by the name they come out as: an item's own name, or `null` when several. */
function byName(items: readonly { name: string }[]): Map<string, string | null> {
  const names = new Map<string, string | null>();
  for (const { name } of items) {
    const clean = sanitize(name, 'item');
    const before = names.get(clean);
    names.set(clean, before === undefined || before === name ? name : null);
  }
  return names;
}

/** Every server's items under qualified names that mean one item each (rules 1 and 2). */
export function qualify<T extends { name: string }>(
  groups: ReadonlyArray<{ server: ServerRef; items: readonly T[] }>,
  separator: string = DEFAULT_SEPARATOR,
): Qualified<T>[] {
  const prefixes = serverPrefixes(
    groups.map((group) => group.server),
    separator,
  );
  const out: Qualified<T>[] = [];
  for (const { server, items } of groups) {
    const prefix = prefixes.get(server.id) as string;
    const names = byName(items);
    for (const item of items) {
      const clean = sanitize(item.name, 'item');
      if (names.get(clean) !== item.name) continue;
      names.delete(clean); // listed twice: named once
      out.push({
        qualifiedName: `${prefix}${separator}${clean}`,
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
 * The server and item a qualified name stands for, or why none: the server
 * whose prefix is the name up to its first separator, and its item that
 * comes out as the rest. While that server's list has not loaded (`items`
 * undefined), or it does not list such an item, the rest is the name it is
 * asked for: a name of that server either way, never another's.
 */
export function resolveQualified(
  qualifiedName: string,
  groups: ReadonlyArray<{ server: ServerRef; items: readonly { name: string }[] | undefined }>,
  separator: string = DEFAULT_SEPARATOR,
): { serverId: string; name: string } | { problem: string } {
  const at = qualifiedName.indexOf(separator);
  const prefixes = serverPrefixes(
    groups.map((group) => group.server),
    separator,
  );
  const group =
    at > 0
      ? groups.find(({ server }) => prefixes.get(server.id) === qualifiedName.slice(0, at))
      : undefined;
  const rest = qualifiedName.slice(at + separator.length);
  if (!group || rest === '') return { problem: `no server has a tool named "${qualifiedName}"` };
  const { server, items } = group;
  const alike = (items ?? []).filter((item) => sanitize(item.name, 'item') === rest);
  const names = [...new Set(alike.map((item) => item.name))];
  if (names.length > 1) {
    return {
      problem: `"${qualifiedName}" could be any of ${names.map((name) => JSON.stringify(name)).join(', ')} on "${server.name}": call one of them with useCallTool({ scope: "${server.id}" })`,
    };
  }
  return { serverId: server.id, name: names[0] ?? rest };
}
