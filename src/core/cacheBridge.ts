import type { Resource } from '@modelcontextprotocol/client';
import type {
  Query,
  QueryCacheNotifyEvent,
  QueryClient,
  QueryFunction,
  QueryKey,
} from '@tanstack/query-core';
import type { InterestRegistry } from './interest';
import { type McpKeys, REQUEST_PARTS, type RequestKind } from './keys';
import { diffLists, fingerprintList, type ListFingerprint } from './listDiff';
import { LIST_KINDS, type ListKind, type NotifiedList, notifiedBy } from './lists';
import { ObserverHolds } from './observerHolds';
import { listQueryOptions } from './queryOptions';
import { retryUnlessPermanent, ttlOf } from './readResult';
import { type Gained, RefetchCoordinator } from './refetchCoordinator';
import { keptFreshBy, requestHandler } from './requests';
import type { ChangeTarget, CoverageChange } from './session';

export interface CacheBridgeOptions {
  queryClient: QueryClient;
  keys: McpKeys;
  interest: InterestRegistry;
  /** Whether the server covers this URI / list right now. */
  isCovered(uri: string): boolean;
  isListCovered(list: NotifiedList): boolean;
}

/**
 * Everything between the MCP side and the QueryClient: query defaults
 * (coverage-aware freshness, retry), holds from observers, re-reads on
 * change (single flight plus one trailing read), the resource list diff.
 * One QueryCache subscription feeds all of it (tab sharing adds one of its
 * own, to relay reads between tabs).
 */
export class CacheBridge implements ChangeTarget {
  readonly #options: CacheBridgeOptions;
  readonly #coordinator: RefetchCoordinator;
  readonly #holds: ObserverHolds;
  readonly #listTtl = new Map<ListKind, number>();
  /** The lists changed in this turn (one pass over the cache each, at its end). */
  readonly #listsChanged = new Set<NotifiedList>();
  #queryFn: QueryFunction | undefined;
  #listFingerprint: ListFingerprint | undefined;
  #listData: unknown;
  #unsubscribe: (() => void) | undefined;

  constructor(options: CacheBridgeOptions) {
    this.#options = options;
    const { keys } = options;
    this.#coordinator = new RefetchCoordinator(options.queryClient, (key) => {
      const uri = keys.uriOf(key);
      if (uri !== undefined) return options.isCovered(uri);
      const list = keptFreshBy(keys, key);
      return list !== undefined && options.isListCovered(list);
    });
    this.#holds = new ObserverHolds(options.keys, options.interest);
  }

  /**
   * Serve this scope's keys: query functions, and freshness that follows
   * coverage (docs/design.md, rule 7: fresh until notified while covered,
   * else the server's TTL).
   */
  registerDefaults(queryFn: QueryFunction): void {
    this.#queryFn = queryFn;
    const { queryClient, keys } = this.#options;
    queryClient.setQueryDefaults(keys.resourcePrefix(), {
      queryFn,
      retry: retryUnlessPermanent,
      staleTime: (query: Query) => {
        const uri = keys.uriOf(query.queryKey);
        return uri !== undefined && this.#options.isCovered(uri)
          ? Number.POSITIVE_INFINITY
          : ttlOf(query.state.data);
      },
    });
    for (const kind of LIST_KINDS) {
      queryClient.setQueryDefaults(keys.list(kind), {
        queryFn,
        retry: retryUnlessPermanent,
        staleTime: () =>
          this.#options.isListCovered(notifiedBy[kind])
            ? Number.POSITIVE_INFINITY
            : (this.#listTtl.get(kind) ?? 0),
      });
    }
    // Prompts, completions, tasks: one kept fresh by a list (a prompt) is fresh until that
    // list's `list_changed` while covered; the options of the others say how fresh they are.
    const scope = keys.resourcePrefix().slice(0, -1);
    for (const kind of Object.keys(REQUEST_PARTS) as RequestKind[]) {
      queryClient.setQueryDefaults([...scope, kind], {
        queryFn,
        retry: retryUnlessPermanent,
        staleTime: (query: Query) => {
          const handler = requestHandler(kind);
          return handler?.list && this.#options.isListCovered(handler.list)
            ? Number.POSITIVE_INFINITY
            : (handler?.staleTime?.(query.state.data) ?? 0);
        },
      });
    }
  }

  start(): void {
    if (this.#unsubscribe) return;
    // The started bridge's defaults are the ones that count: React StrictMode builds a second
    // McpCacheSync for a provider after the one it keeps, whose defaults read the other's coverage.
    if (this.#queryFn) this.registerDefaults(this.#queryFn);
    const cache = this.#options.queryClient.getQueryCache();
    this.#unsubscribe = cache.subscribe((event) => this.#onCacheEvent(event));
    this.#holds.scan(cache);
  }

  dispose(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#holds.dispose();
    this.#coordinator.stop();
  }

  /** The content of `uri` may have changed: re-read it (rule 3). */
  changed(uri: string): void {
    this.#coordinator.signal(this.#options.keys.resource(uri));
  }

  /**
   * A list changed: one coalesced refetch of each list it keeps fresh. The
   * resource list is fetched even when nobody shows it, since its diff
   * decides which cached resources to re-read. The changes of one turn of the
   * event loop are one: each scans the cache, and a flood brings thousands in
   * one chunk (10,000 with 20,000 entries cached took 30 s, scanning each).
   */
  listChanged(list: NotifiedList): void {
    const lists = this.#listsChanged;
    if (!lists.size) {
      // Emptied first: a pass that throws must not keep the set full (the
      // list_changed of every later turn would be dropped).
      setTimeout(() => {
        const changed = [...lists];
        lists.clear();
        for (const list of changed) this.#listChanged(list);
      });
    }
    lists.add(list);
  }

  #listChanged(list: NotifiedList): void {
    const { queryClient, keys } = this.#options;
    for (const key of this.#keptBy(list)) this.#coordinator.signal(key);
    for (const kind of LIST_KINDS) {
      if (notifiedBy[kind] !== list) continue;
      const isResources = kind === 'resources';
      const outcome = this.#coordinator.signal(keys.list(kind), { evenIfInactive: isResources });
      if (outcome === 'absent' && isResources && this.#cachedResourceUris().length > 0) {
        void queryClient.fetchQuery(listQueryOptions('resources', keys.scope)).catch(() => {});
      }
    }
  }

  coverageChanged({ gained, lost, listsGained, listsLost, awaited }: CoverageChange): void {
    const { keys } = this.#options;
    const kindsOf = (lists: readonly NotifiedList[]) =>
      LIST_KINDS.filter((kind) => lists.includes(notifiedBy[kind]));
    this.#coordinator.uncovered([
      ...lost.map((uri) => keys.resource(uri)),
      ...kindsOf(listsLost).map((kind) => keys.list(kind)),
    ]);
    const covered: Gained[] = gained.map((uri) => ({
      key: keys.resource(uri),
      awaited: awaited.uris.has(uri),
    }));
    for (const kind of kindsOf(listsGained)) {
      covered.push({ key: keys.list(kind), awaited: awaited.lists.has(notifiedBy[kind]) });
    }
    for (const list of listsGained) {
      for (const key of this.#keptBy(list)) covered.push({ key, awaited: awaited.lists.has(list) });
    }
    this.#coordinator.covered(covered);
  }

  listFetched(kind: ListKind, ttlMs: unknown): void {
    this.#listTtl.set(kind, ttlOf({ ttlMs }));
  }

  #onCacheEvent(event: QueryCacheNotifyEvent): void {
    const { keys } = this.#options;
    const key = event.query.queryKey;
    const isResource = keys.uriOf(key) !== undefined;
    const list = isResource ? undefined : keys.listOf(key);
    if (!isResource && list === undefined && !keys.requestOf(key)) return;
    this.#holds.onCacheEvent(event);
    this.#coordinator.onCacheEvent(event);
    if (
      list === 'resources' &&
      event.type === 'updated' &&
      event.action.type === 'success' &&
      Array.isArray(event.query.state.data)
    ) {
      this.#resourceListUpdated(event.query.state.data as Resource[]);
    }
  }

  /**
   * The list changed: re-read the cached resources whose entry changed,
   * disappeared, or appeared (a cached read of a URI that was not listed is
   * at best a not-found error), and nothing else. With no earlier list to
   * compare against, only disappearance is certain.
   */
  #resourceListUpdated(data: Resource[]): void {
    if (data === this.#listData) return;
    this.#listData = data;
    const next = fingerprintList(data);
    const previous = this.#listFingerprint;
    this.#listFingerprint = next;
    let affected: string[];
    if (previous) {
      const { changed, removed, added } = diffLists(previous, next);
      affected = [...changed, ...removed, ...added];
    } else {
      affected = this.#cachedResourceUris().filter((uri) => !next.has(uri));
    }
    for (const uri of affected) this.changed(uri);
  }

  /** The cached request keys of this scope that `list` keeps fresh (prompts: the prompts list). */
  #keptBy(list: NotifiedList): QueryKey[] {
    const { queryClient, keys } = this.#options;
    return queryClient
      .getQueryCache()
      .getAll()
      .map((query) => query.queryKey)
      .filter((key) => requestHandler(keys.requestOf(key)?.kind)?.list === list);
  }

  #cachedResourceUris(): string[] {
    const { queryClient, keys } = this.#options;
    const uris: string[] = [];
    for (const query of queryClient.getQueryCache().getAll()) {
      const uri = keys.uriOf(query.queryKey);
      if (uri !== undefined && query.state.data !== undefined) uris.push(uri);
    }
    return uris;
  }
}
