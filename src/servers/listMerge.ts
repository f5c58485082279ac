import { MAX_SERVERS, type McpServerConfig, sameSignIn } from './config';

/**
 * A server's configuration as text, its fields in one order: the same configuration reads the
 * same whether it was checked from a storage or made here (`withOAuth` adds `auth` last).
 */
const textOf = (server: McpServerConfig | undefined): string | undefined =>
  server &&
  JSON.stringify([
    server.id,
    server.name,
    server.url,
    server.headers ?? null,
    server.auth ?? null,
    server.nonce ?? null,
  ]);

/** Whether two lists hold the same servers in the same order. */
export const sameServers = (a: readonly McpServerConfig[], b: readonly McpServerConfig[]) =>
  a.length === b.length && a.every((server, i) => textOf(server) === textOf(b[i]));

/**
 * Whether `version` ended `base`'s add of the server: removed it, or put another add in its place
 * (another URL or nonce). That tab forgot its sign-in, closed it and dropped its cache already.
 */
const ended = (base: McpServerConfig, version: McpServerConfig | undefined) =>
  version === undefined || !sameSignIn(base, version);

/**
 * One server (by id) of the merged list: the side that changed it from `base`; where both did, the
 * side that ended that add (a removal is never undone by a rename or a sign-in learnt elsewhere,
 * whose tokens the removing tab revoked), and otherwise `theirs`.
 */
function pick(
  base: McpServerConfig | undefined,
  ours: McpServerConfig | undefined,
  theirs: McpServerConfig | undefined,
): McpServerConfig | undefined {
  const was = textOf(base);
  if (textOf(ours) === was) return theirs;
  if (textOf(theirs) === was) return ours;
  return base && ended(base, ours) && !ended(base, theirs) ? ours : theirs;
}

/** What no two servers of a list share (as `checkServer` refuses it). */
const keysOf = (server: McpServerConfig) => [
  `id ${server.id}`,
  `url ${server.url}`,
  `name ${server.name.toLowerCase()}`,
];

/**
 * This tab's change (`base` → `ours`) put on a list another tab wrote without knowing of it
 * (`theirs`), server by server (`pick`), so every tab settles on the same list whichever merges.
 * Order: `theirs`, then this tab's additions. A server of `ours` that would share an id, URL or
 * name with another gives way to `theirs`' (which holds no such pair): the list is one every tab
 * reads whole (`checkStored` drops the later of two). At most MAX_SERVERS.
 */
export function mergeLists(
  base: readonly McpServerConfig[],
  ours: readonly McpServerConfig[],
  theirs: readonly McpServerConfig[],
): McpServerConfig[] {
  const byId = (list: readonly McpServerConfig[]) => new Map(list.map((s) => [s.id, s]));
  const [was, mine, other] = [byId(base), byId(ours), byId(theirs)];
  const ids = [...other.keys(), ...[...mine.keys()].filter((id) => !other.has(id))];
  const slots = ids.map((id) => {
    const fallback = other.get(id);
    return { fallback, chosen: pick(was.get(id), mine.get(id), fallback) };
  });
  for (;;) {
    const counts = new Map<string, number>();
    for (const { chosen } of slots) {
      for (const key of chosen ? keysOf(chosen) : []) counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const clashing = slots.find(
      ({ chosen, fallback }) =>
        chosen !== fallback && chosen && keysOf(chosen).some((key) => (counts.get(key) ?? 0) > 1),
    );
    if (!clashing) break;
    clashing.chosen = clashing.fallback;
  }
  return slots.flatMap(({ chosen }) => (chosen ? [chosen] : [])).slice(0, MAX_SERVERS);
}

/**
 * One change this tab made: on which list (`base`), the list it made, and the revs of the lists
 * this tab wrote it in (as made, then each list it put it again on), oldest first.
 */
export interface OwnChange {
  readonly revs: readonly number[];
  readonly base: readonly McpServerConfig[];
  readonly servers: readonly McpServerConfig[];
}

/**
 * What `changes` (this tab's, oldest first) did, as `mergeLists` takes it: each server they
 * changed as it was before the first of them (`base`) and as `now` has it (`ours`, in `now`'s
 * order), where `now` still shows the last of them. One changed since by another tab (which held
 * this tab's change, and made its own knowing of it) is left out: that tab's change stands. But
 * a server they added, that `now` still has as that add (same URL and nonce), goes as `now` has
 * it: another tab's edit of it is no removal, and a list that does not hold the add never knew
 * of the server (that tab, putting its edit again, would find it gone, and the server would be).
 */
export function ownChanges(
  changes: readonly OwnChange[],
  now: readonly McpServerConfig[],
): { base: McpServerConfig[]; ours: McpServerConfig[] } {
  const byId = (list: readonly McpServerConfig[]) => new Map(list.map((s) => [s.id, s]));
  const first = new Map<string, McpServerConfig | undefined>();
  const last = new Map<string, McpServerConfig | undefined>();
  for (const change of changes) {
    const [before, after] = [byId(change.base), byId(change.servers)];
    for (const id of new Set([...before.keys(), ...after.keys()])) {
      if (textOf(before.get(id)) === textOf(after.get(id))) continue;
      if (!first.has(id)) first.set(id, before.get(id));
      last.set(id, after.get(id));
    }
  }
  const current = byId(now);
  const shown = (id: string) => {
    const [was, mine, shows] = [first.get(id), last.get(id), current.get(id)];
    if (!was && mine && shows && sameSignIn(mine, shows)) return true;
    return textOf(shows) === textOf(mine);
  };
  const base = [...first].flatMap(([id, was]) => (was && shown(id) ? [was] : []));
  const ours = now.filter((server) => first.has(server.id) && shown(server.id));
  return { base, ours };
}
