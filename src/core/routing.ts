import type { QueryClient, QueryFunctionContext, QueryKey } from '@tanstack/query-core';
import { McpQueryError } from './errors';
import { perScope } from './keys';
import { onEnd } from './lifetime';

/** What serves the queries of one QueryClient scope: an McpCacheSync's upstream. */
export interface QueryRunner {
  query(key: QueryKey, signal: AbortSignal): Promise<unknown>;
}

/** One McpCacheSync's upstream serving a scope, until its attachment is aborted. */
interface Serving {
  runner: QueryRunner;
  attachment: AbortController;
}

/** How long a query waits for an McpCacheSync to serve its QueryClient and scope. */
export const ATTACH_WAIT_MS = 30_000;

/** Keyed by the scope as given: `''` is a scope of its own, apart from none (`undefined`). */
const attached = new WeakMap<QueryClient, Map<string | undefined, Serving>>();
const waiting = new WeakMap<QueryClient, Set<() => void>>();
/** Per scope, who serves it again once nobody does (`standBy`). */
const standing = new WeakMap<QueryClient, Map<string | undefined, Set<() => boolean>>>();

/** What `map` holds for `key`, made now if it held nothing. */
function entry<K extends object | string, V>(
  map: { get(key: K): V | undefined; set(key: K, value: V): unknown },
  key: K,
  make: () => V,
): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/**
 * `runner` serves `scope` on `client` from now on (the most recent one
 * wins). The signal returned is aborted when it stops serving: replaced,
 * detached, or attached again (another identity): what was read under it
 * may then not be written (rule 12), and reads still in flight go to what
 * serves the scope then.
 */
export function attach(
  client: QueryClient,
  scope: string | undefined,
  runner: QueryRunner,
): AbortSignal {
  const scoped = entry(attached, client, () => new Map<string | undefined, Serving>());
  const attachment = new AbortController();
  scoped.get(scope)?.attachment.abort();
  scoped.set(scope, { runner, attachment });
  for (const wake of [...(waiting.get(client) ?? [])]) wake();
  return attachment.signal;
}

/** Whether an McpCacheSync serves `scope` on `client` now. */
export const isServed = (client: QueryClient, scope: string | undefined): boolean =>
  attached.get(client)?.has(scope) === true;

/** The attachment that returned `signal` stops serving (if it still was). */
export function detach(client: QueryClient, scope: string | undefined, signal: AbortSignal): void {
  const scoped = attached.get(client);
  const serving = scoped?.get(scope);
  if (serving?.attachment.signal !== signal) return;
  serving.attachment.abort();
  scoped?.delete(scope);
  for (const retake of [...(standing.get(client)?.get(scope) ?? [])].reverse()) {
    if (retake()) break;
  }
}

/**
 * `retake` serves `scope` on `client` again, if it will (says true), whenever the scope is left
 * unserved: two providers of one server on one scope take turns, the latest first, so the one
 * mounted first serves again once the other unmounts. The returned function stands down.
 */
export function standBy(
  client: QueryClient,
  scope: string | undefined,
  retake: () => boolean,
): () => void {
  const retakes = entry(
    entry(standing, client, () => new Map()),
    scope,
    () => new Set(),
  );
  retakes.add(retake);
  return () => retakes.delete(retake);
}

/**
 * The query function behind every MCP key: runs the query on whatever
 * serves the key's scope on the query's own QueryClient, waiting (bounded)
 * for something to attach. That is what lets
 * `queryClient.prefetchQuery(resourceQueryOptions(uri))` run in a route
 * loader, before or without the hooks. A read whose server stopped serving
 * meanwhile (replaced, or another identity signed in) is cancelled and goes
 * to whatever serves the scope now.
 */
export function routedQueryFn(scope: string | undefined) {
  return perScope(queryFns, scope, routeScope);
}

const queryFns = new Map<string | undefined, ReturnType<typeof routeScope>>();

function routeScope(scope: string | undefined) {
  return async ({ client, queryKey, signal }: QueryFunctionContext): Promise<unknown> => {
    for (;;) {
      const { runner, attachment } = await whenAttached(client, scope, signal);
      // Either ending aborts the read. Followed by hand and let go after it:
      // AbortSignal.any would leave a reference per read on the attachment.
      const both = new AbortController();
      const forget = [signal, attachment.signal].map((one) =>
        onEnd(one, () => both.abort(one.reason)),
      );
      try {
        return await runner.query(queryKey, both.signal);
      } catch (error) {
        if (!attachment.signal.aborted || signal.aborted) throw error;
        if (!attached.get(client)?.has(scope)) {
          throw new McpQueryError('DISPOSED', 'the McpCacheSync of this query was disposed');
        }
      } finally {
        for (const stop of forget) stop();
      }
    }
  };
}

function whenAttached(
  client: QueryClient,
  scope: string | undefined,
  signal: AbortSignal,
): Promise<Serving> {
  const now = attached.get(client)?.get(scope);
  if (now) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    const waiters = entry(waiting, client, () => new Set<() => void>());
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      waiters.delete(wake);
    };
    const wake = () => {
      const serving = attached.get(client)?.get(scope);
      if (!serving) return;
      done();
      resolve(serving);
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
