import type { QueryClient, QueryFunctionContext } from '@tanstack/query-core';
import { McpQueryError } from './errors';

/** What a query function needs from the McpCacheSync serving a scope. */
export interface QueryRunner {
  run(context: QueryFunctionContext): Promise<unknown>;
  /** Another runner took over this runner's QueryClient and scope. */
  superseded(): void;
}

/** How long a query waits for an McpCacheSync to serve its QueryClient and scope. */
export const ATTACH_WAIT_MS = 30_000;

const attached = new WeakMap<QueryClient, Map<string, QueryRunner>>();
const waiting = new WeakMap<QueryClient, Set<() => void>>();

const scopeKey = (scope: string | undefined) => scope ?? '';

/** `runner` now serves `scope` on `client` (the most recent one wins). */
export function attach(client: QueryClient, scope: string | undefined, runner: QueryRunner): void {
  let scoped = attached.get(client);
  if (!scoped) {
    scoped = new Map();
    attached.set(client, scoped);
  }
  const previous = scoped.get(scopeKey(scope));
  scoped.set(scopeKey(scope), runner);
  if (previous && previous !== runner) previous.superseded();
  for (const wake of [...(waiting.get(client) ?? [])]) wake();
}

export function detach(client: QueryClient, scope: string | undefined, runner: QueryRunner): void {
  const scoped = attached.get(client);
  if (scoped?.get(scopeKey(scope)) === runner) scoped.delete(scopeKey(scope));
}

export function hasRunner(client: QueryClient, scope: string | undefined): boolean {
  return attached.get(client)?.has(scopeKey(scope)) ?? false;
}

export function isAttached(
  client: QueryClient,
  scope: string | undefined,
  runner: QueryRunner,
): boolean {
  return attached.get(client)?.get(scopeKey(scope)) === runner;
}

/**
 * The query function behind every MCP key: runs the query on whichever
 * McpCacheSync serves the key's scope on the query's own QueryClient,
 * waiting (bounded) for one to attach. That is what lets
 * `queryClient.prefetchQuery(resourceQueryOptions(uri))` run in a route
 * loader, before or without the hooks. A runner that is replaced while the
 * query waits hands the query over to its successor.
 */
export function routedQueryFn(scope: string | undefined) {
  return async (context: QueryFunctionContext): Promise<unknown> => {
    for (;;) {
      const runner = await whenAttached(context.client, scope, context.signal);
      try {
        return await runner.run(context);
      } catch (error) {
        if (error instanceof McpQueryError && error.code === 'SUPERSEDED') continue;
        throw error;
      }
    }
  };
}

function whenAttached(
  client: QueryClient,
  scope: string | undefined,
  signal: AbortSignal,
): Promise<QueryRunner> {
  const now = attached.get(client)?.get(scopeKey(scope));
  if (now) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    let set = waiting.get(client);
    if (!set) {
      set = new Set();
      waiting.set(client, set);
    }
    const waiters = set;
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      waiters.delete(wake);
    };
    const wake = () => {
      const runner = attached.get(client)?.get(scopeKey(scope));
      if (!runner) return;
      done();
      resolve(runner);
    };
    const onAbort = () => {
      done();
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      done();
      reject(
        new McpQueryError(
          'NOT_ATTACHED',
          `no McpCacheSync${scope === undefined ? '' : ` with scope "${scope}"`} serves this QueryClient`,
        ),
      );
    }, ATTACH_WAIT_MS);
    waiters.add(wake);
    signal.addEventListener('abort', onAbort);
  });
}
