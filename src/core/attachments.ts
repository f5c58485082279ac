import type { QueryClient, QueryFunctionContext } from '@tanstack/query-core';
import { McpQueryError } from './errors';

/** What a query function needs from the sync object serving a scope. */
export interface QueryRunner {
  runQuery(context: QueryFunctionContext): Promise<unknown>;
}

type Scoped = Map<string, QueryRunner>;

const attached = new WeakMap<QueryClient, Scoped>();
const waiting = new WeakMap<QueryClient, Set<() => void>>();

const scopeKey = (scope: string | undefined) => scope ?? '';

/** `runner` now serves `scope` on `client` (the most recent one wins). */
export function attach(client: QueryClient, scope: string | undefined, runner: QueryRunner): void {
  let scoped = attached.get(client);
  if (!scoped) {
    scoped = new Map();
    attached.set(client, scoped);
  }
  if (scoped.get(scopeKey(scope)) === runner) return;
  scoped.set(scopeKey(scope), runner);
  for (const wake of [...(waiting.get(client) ?? [])]) wake();
}

export function detach(client: QueryClient, scope: string | undefined, runner: QueryRunner): void {
  const scoped = attached.get(client);
  if (scoped?.get(scopeKey(scope)) === runner) scoped.delete(scopeKey(scope));
}

export function attachedRunner(
  client: QueryClient,
  scope: string | undefined,
): QueryRunner | undefined {
  return attached.get(client)?.get(scopeKey(scope));
}

/**
 * The query function behind every MCP key: finds the provider serving the
 * key's scope on the query's own QueryClient, waiting (bounded) for one to
 * mount. That is what lets `queryClient.prefetchQuery(resourceQueryOptions(uri))`
 * run in a route loader, before or without the hooks.
 */
export function routedQueryFn(scope: string | undefined, waitMs: number) {
  return async (context: QueryFunctionContext): Promise<unknown> => {
    const runner = await whenAttached(context.client, scope, context.signal, waitMs);
    return runner.runQuery(context);
  };
}

function whenAttached(
  client: QueryClient,
  scope: string | undefined,
  signal: AbortSignal,
  waitMs: number,
): Promise<QueryRunner> {
  const now = attachedRunner(client, scope);
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
      const runner = attachedRunner(client, scope);
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
          `no McpProvider${scope === undefined ? '' : ` with scope "${scope}"`} serves this QueryClient`,
        ),
      );
    }, waitMs);
    waiters.add(wake);
    signal.addEventListener('abort', onAbort);
  });
}
