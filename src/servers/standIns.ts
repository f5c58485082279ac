import type { Transport } from '@modelcontextprotocol/client';
import type { QueryClient } from '@tanstack/query-core';
import { clip, McpQueryError } from '../core/errors';
import { McpCacheSync } from '../core/mcpCacheSync';
import { removeScope } from './runtime';

/** Scopes stood in for at once; the oldest goes first (its hooks get a new one on their next render). */
const MAX_STAND_INS = 64;

/**
 * What stands for a scope the hooks below an `McpServersProvider` ask for and no provider or
 * server has: a server the user removed while the host still shows it (a "selected server" kept in
 * the host's own state), or one not added yet. Each is an McpCacheSync that connects nowhere: its
 * connection fails at once, for good, and every read with it, with `UNKNOWN_SERVER` naming the
 * scope, so a hook shows an error instead of throwing into the tree. Its keys are in a scope of
 * their own (`?` is in no server id), so a server added later under that id starts clean.
 */
export class StandIns {
  readonly #queryClient: QueryClient;
  readonly #prefix: string;
  readonly #syncs = new Map<string, { sync: McpCacheSync; own: string; release: () => void }>();

  /** `prefix`: the manager's scopes' (`scopeOf('')`). */
  constructor(queryClient: QueryClient, prefix: string) {
    this.#queryClient = queryClient;
    this.#prefix = prefix;
  }

  get = (scope: string): McpCacheSync => {
    const kept = this.#syncs.get(scope);
    if (kept) {
      this.#syncs.delete(scope);
      this.#syncs.set(scope, kept);
      return kept.sync;
    }
    const error = new McpQueryError(
      'UNKNOWN_SERVER',
      `no server ${clip(JSON.stringify(scope), 80)} in the McpServersProvider above (removed, or not added yet), nor an McpProvider with that scope`,
    );
    const transport = (): Transport => ({
      start: () => Promise.reject(error),
      send: () => Promise.reject(error),
      close: () => Promise.resolve(),
    });
    const own = `${this.#prefix}?${scope}`;
    const sync = new McpCacheSync({ queryClient: this.#queryClient, scope: own, transport });
    // Failing at once is all it does: nothing is sent, and nothing is tried again.
    this.#syncs.set(scope, { sync, own, release: sync.mount() });
    for (const oldest of this.#syncs.keys()) {
      if (this.#syncs.size <= MAX_STAND_INS) break;
      this.#end(oldest);
    }
    return sync;
  };

  /** Every stand-in ends (the provider unmounts); asked again, a scope gets a new one. */
  dispose(): void {
    for (const scope of [...this.#syncs.keys()]) this.#end(scope);
  }

  #end(scope: string): void {
    const kept = this.#syncs.get(scope);
    if (!kept) return;
    this.#syncs.delete(scope);
    kept.release();
    removeScope(this.#queryClient, kept.own);
  }
}
