import {
  hashKey,
  type QueryCacheNotifyEvent,
  type QueryClient,
  type QueryKey,
} from '@tanstack/query-core';

interface Target {
  key: QueryKey;
  /** A change was signalled after the latest read attempt started. */
  dirty: boolean;
  /** The latest read started while the server was covering this key. */
  readUnderCoverage: boolean;
}

/** `absent`: not cached (the caller may fetch it); `stopped`: nothing is read any more. */
export type SignalOutcome = 'absent' | 'deferred' | 'refetching' | 'marked-stale' | 'stopped';

/** A key the server covers now; `awaited`: its read was waiting for exactly that (rule 4). */
export interface Gained {
  key: QueryKey;
  awaited: boolean;
}

/**
 * Turns change signals into reads, single flight per key with one trailing
 * read (docs/design.md, rule 3). TanStack's `invalidateQueries` is not enough: with data it
 * cancels and restarts (a burst of N costs N requests), and during a first
 * fetch it joins the in-flight read, which may have started before the
 * change, and so ends stale (TanStack issue 8530). Here a signal during a
 * read only marks the key dirty; when the read settles, one more starts.
 */
export class RefetchCoordinator {
  readonly #client: QueryClient;
  readonly #isCovered: (key: QueryKey) => boolean;
  readonly #targets = new Map<string, Target>();
  /** Ends at `stop()`: no signal reads anything after it. */
  readonly #life = new AbortController();

  /** `isCovered`: whether the server covers a key's data right now. */
  constructor(client: QueryClient, isCovered: (key: QueryKey) => boolean) {
    this.#client = client;
    this.#isCovered = isCovered;
  }

  stop(): void {
    this.#life.abort();
    this.#targets.clear();
  }

  /**
   * The content behind `key` may have changed. Active and idle: refetch now.
   * Fetching: one trailing read after it settles. Inactive: only mark it
   * stale, so the next observer refetches. Not cached: nothing to do.
   */
  signal(key: QueryKey, options?: { evenIfInactive?: boolean }): SignalOutcome {
    if (this.#life.signal.aborted) return 'stopped';
    // By hash, not `find()`: find scans every cached query, and a flood of
    // notifications would make that quadratic.
    const hash = hashOf(key);
    const query = this.#client.getQueryCache().get(hash);
    if (!query) return 'absent';
    const target = this.#target(key, hash);
    if (query.state.fetchStatus !== 'idle') {
      target.dirty = true;
      return 'deferred';
    }
    if (!query.isActive() && !options?.evenIfInactive) {
      // The query itself, not `invalidateQueries`, which scans every cached query.
      query.invalidate();
      return 'marked-stale';
    }
    void query.fetch(undefined, { cancelRefetch: false }).catch(() => {
      // The error is in the query's state; the previous data stays.
    });
    return 'refetching';
  }

  /**
   * The server now covers these keys. Any cached data read before that may
   * have missed a change made between the read and the acknowledgement
   * (rules 4 and 6), so it is read once more. A read that was waiting for
   * this coverage goes out now, covered: it is the one read (rule 4), and
   * any change signalled while it waited is in what it reads.
   */
  covered(gained: readonly Gained[]): void {
    for (const { key, awaited } of gained) {
      const hash = hashKey(key);
      const fetching = this.#client.getQueryCache().get(hash)?.state.fetchStatus === 'fetching';
      if (awaited && fetching) {
        // (Its fetch may have started before this provider listened to the cache.)
        const target = this.#target(key);
        target.readUnderCoverage = true;
        target.dirty = false;
        continue;
      }
      if (this.#targets.get(hash)?.readUnderCoverage) continue;
      this.signal(key);
    }
  }

  uncovered(keys: readonly QueryKey[]): void {
    for (const key of keys) {
      const target = this.#targets.get(hashKey(key));
      if (target) target.readUnderCoverage = false;
    }
  }

  #target(key: QueryKey, hash = hashOf(key)): Target {
    let target = this.#targets.get(hash);
    if (!target) {
      target = { key, dirty: false, readUnderCoverage: false };
      this.#targets.set(hash, target);
    }
    return target;
  }

  /**
   * Every QueryCache event of this provider's keys (the cache bridge
   * forwards them). A read starts with the query's `fetch` action: changes
   * signalled before it are in what it reads.
   */
  onCacheEvent(event: QueryCacheNotifyEvent): void {
    if (event.type === 'removed') {
      this.#targets.delete(event.query.queryHash);
      return;
    }
    if (event.type !== 'updated') return;
    const { query } = event;
    if (event.action.type === 'fetch') {
      const target = this.#target(query.queryKey);
      target.dirty = false;
      target.readUnderCoverage = this.#isCovered(query.queryKey);
      return;
    }
    if (query.state.fetchStatus !== 'idle') return;
    const settled =
      event.action.type === 'success' ||
      event.action.type === 'error' ||
      event.action.type === 'setState';
    if (!settled) return;
    const target = this.#targets.get(query.queryHash);
    if (!target?.dirty) return;
    target.dirty = false;
    // After the current dispatch: starting a fetch from inside the cache's
    // own notification would re-enter the query mid-update.
    queueMicrotask(() => this.signal(target.key));
  }
}

/**
 * TanStack's `hashKey`, without its replacer for keys of strings only (the
 * MCP keys): a notification flood hashes a key per notification.
 */
function hashOf(key: QueryKey): string {
  return key.every((part) => typeof part === 'string') ? JSON.stringify(key) : hashKey(key);
}
