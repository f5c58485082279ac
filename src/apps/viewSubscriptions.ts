import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { type QueryClient, QueryObserver } from '@tanstack/query-core';
import type { McpQueryOptions } from '../core/queryOptions';

/**
 * A view's `resources/subscribe`, as an ordinary hold: one QueryObserver of the resource's key
 * per subscribed URI. The package turns every mounted observer of an MCP resource key into a
 * share of one ref-counted server subscription (docs/design.md, rule 9), so the view costs the
 * server nothing a component showing the same resource would not, and its updates are the
 * cache's: when the observed data changes, the view is told (`notifications/resources/updated`)
 * and reads the new content from the cache. Unsubscribing, or the view going away, removes the
 * observer; the server subscription then ends after the usual linger.
 */
export class ViewSubscriptions {
  readonly #queryClient: QueryClient;
  readonly #options: (uri: string) => McpQueryOptions<ReadResourceResult>;
  readonly #updated: (uri: string) => void;
  readonly #max: number;
  readonly #held = new Map<string, () => void>();

  constructor(options: {
    queryClient: QueryClient;
    queryOptions: (uri: string) => McpQueryOptions<ReadResourceResult>;
    updated: (uri: string) => void;
    max: number;
  }) {
    this.#queryClient = options.queryClient;
    this.#options = options.queryOptions;
    this.#updated = options.updated;
    this.#max = options.max;
  }

  get uris(): string[] {
    return [...this.#held.keys()];
  }

  /** Idempotent, like the protocol's: a second subscribe to a URI holds nothing more. */
  subscribe(uri: string): void {
    if (this.#held.has(uri)) return;
    if (this.#held.size >= this.#max) {
      throw new Error(`a view may subscribe to at most ${this.#max} resources`);
    }
    const observer = new QueryObserver(this.#queryClient, this.#options(uri));
    // Content the view could already have read is not news; the first data after a first load
    // is what the view's own read returns.
    let seen = observer.getCurrentResult().data;
    const stop = observer.subscribe((result) => {
      if (result.data === undefined || result.data === seen) return;
      const before = seen;
      seen = result.data;
      if (before !== undefined) this.#updated(uri);
    });
    this.#held.set(uri, stop);
  }

  unsubscribe(uri: string): void {
    this.#held.get(uri)?.();
    this.#held.delete(uri);
  }

  dispose(): void {
    for (const stop of this.#held.values()) stop();
    this.#held.clear();
  }
}
