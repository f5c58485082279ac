import type { Query, QueryCache, QueryCacheNotifyEvent, QueryObserver } from '@tanstack/query-core';
import type { InterestRegistry } from './interest';
import type { McpKeys } from './keys';
import { keptFreshBy } from './requests';

/**
 * Set `meta: { [SUBSCRIBE_META]: false }` on a query's options to read a
 * resource without holding its subscription (`useResource(uri, { subscribe:
 * false })` does).
 */
export const SUBSCRIBE_META = 'mcpSubscribe';

type AnyObserver = QueryObserver<unknown, unknown, unknown, unknown, readonly unknown[]>;

/**
 * Holds come from the QueryCache itself: every mounted observer of one of
 * this provider's resource keys holds that URI, and every observer of a
 * tools or prompts list, or of a prompt, holds that list's `list_changed`. So
 * `useQuery(resourceQueryOptions(uri))`, `useSuspenseQuery`, `useQueries`
 * and `useResource` are all live in the same way. An observer opts out with
 * `enabled: false` or `meta: { mcpSubscribe: false }`.
 */
export class ObserverHolds {
  readonly #keys: McpKeys;
  readonly #interest: InterestRegistry;
  readonly #holds = new Map<AnyObserver, { query: Query; release: () => void }>();

  constructor(keys: McpKeys, interest: InterestRegistry) {
    this.#keys = keys;
    this.#interest = interest;
  }

  /** Take the holds of observers that mounted before we listened. */
  scan(cache: QueryCache): void {
    for (const query of cache.getAll()) {
      for (const observer of query.observers) this.#update(query, observer as AnyObserver);
    }
  }

  onCacheEvent(event: QueryCacheNotifyEvent): void {
    switch (event.type) {
      case 'observerAdded':
      case 'observerOptionsUpdated':
        this.#update(event.query, event.observer as AnyObserver);
        return;
      case 'observerRemoved':
        this.#drop(event.observer as AnyObserver);
        return;
    }
  }

  dispose(): void {
    for (const hold of this.#holds.values()) hold.release();
    this.#holds.clear();
  }

  #update(query: Query, observer: AnyObserver): void {
    const take = this.#target(query, observer);
    const current = this.#holds.get(observer);
    if (current && current.query === query && take) return;
    this.#drop(observer);
    if (take) this.#holds.set(observer, { query, release: take() });
  }

  #drop(observer: AnyObserver): void {
    this.#holds.get(observer)?.release();
    this.#holds.delete(observer);
  }

  /** How to hold what this observer shows, or undefined when it holds nothing. */
  #target(query: Query, observer: AnyObserver): (() => () => void) | undefined {
    const { options } = observer;
    const enabled =
      typeof options.enabled === 'function' ? options.enabled(query as never) : options.enabled;
    if (enabled === false || options.meta?.[SUBSCRIBE_META] === false) return undefined;
    const uri = this.#keys.uriOf(query.queryKey);
    if (uri !== undefined) return uri.length > 0 ? () => this.#interest.holdUri(uri) : undefined;
    // A prompt shown is kept fresh by the prompts list's `list_changed`.
    const list = keptFreshBy(this.#keys, query.queryKey);
    return list && (() => this.#interest.holdList(list));
  }
}
