import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { hashKey, type QueryClient, type QueryKey } from '@tanstack/query-core';
import type { CacheBridge } from './cacheBridge';
import type { Connection } from './connection';
import { errorMessage, invalidUriError, isValidUri, McpQueryError } from './errors';
import type { Emit } from './events';
import type { InterestRegistry } from './interest';
import type { McpKeys } from './keys';
import { canonical } from './listDiff';
import { fetchList, type ListKind, type NotifiedList, notifiedBy } from './lists';
import { checkContents } from './readResult';
import type { Session } from './session';

/** How long a first load nobody observed keeps its URI held after the read. */
const FIRST_LOAD_GRACE_MS = 5000;

export interface ReaderOptions {
  queryClient: QueryClient;
  keys: McpKeys;
  connection: Connection<Session>;
  interest: InterestRegistry;
  bridge: CacheBridge;
  emit: Emit;
  /** Throws when what was read may no longer be written (disposed, superseded, other partition). */
  fence(): void;
  requestTimeoutMs: number;
  /** Whether a successful read of this URI should say if its content changed (diagnostics). */
  compare(): ((uri: string) => boolean) | undefined;
}

/**
 * Runs reads and list fetches for the query functions: on the ready
 * session, after the coverage being set up for the target (one read, not
 * two: rule 4), with the SDK's own cache bypassed (rule 7), checking what
 * comes back (rule 8) and that it may still be written.
 */
export class Reader {
  readonly #options: ReaderOptions;

  constructor(options: ReaderOptions) {
    this.#options = options;
  }

  /** The query function of every MCP key on this scope: a list or one resource. */
  query(key: QueryKey, signal: AbortSignal): Promise<unknown> {
    const { keys } = this.#options;
    const list = keys.listOf(key);
    if (list) return this.list(list, key, signal);
    const prefix = keys.resourcePrefix();
    if (key.length === prefix.length + 1 && prefix.every((part, i) => key[i] === part)) {
      return this.read(key[prefix.length], key, signal);
    }
    throw new McpQueryError('UNKNOWN_KEY', `not an MCP query key: ${JSON.stringify(key)}`);
  }

  async read(uri: unknown, key: QueryKey, signal: AbortSignal): Promise<ReadResourceResult> {
    if (!isValidUri(uri)) throw invalidUriError(uri);
    const { bridge, emit, queryClient, requestTimeoutMs } = this.#options;
    const release = this.#holdForFirstLoad(uri, key);
    try {
      const session = await this.#session({ uri }, signal);
      bridge.readStarted(key, session.isCovered(uri));
      emit({ type: 'read', phase: 'start', uri });
      try {
        // TanStack Query is the only cache: the SDK's own TTL cache could
        // answer a post-notification read with the content it replaces.
        const result = await session.client.readResource(
          { uri },
          { cacheMode: 'bypass', signal, timeout: requestTimeoutMs },
        );
        checkContents(uri, result);
        this.#options.fence();
        let changed: boolean | undefined;
        if (this.#options.compare()?.(uri)) {
          const before = queryClient.getQueryData<ReadResourceResult>(key);
          changed =
            before !== undefined && canonical(before.contents) !== canonical(result.contents);
        }
        emit({ type: 'read', phase: 'success', uri, ...(changed !== undefined && { changed }) });
        return result;
      } catch (error) {
        if (!signal.aborted) {
          emit({ type: 'read', phase: 'error', uri, error: errorMessage(error) });
          this.#options.connection.unauthorizedIf(session, error);
        }
        throw error;
      }
    } finally {
      if (release) {
        const timer = setTimeout(release, FIRST_LOAD_GRACE_MS);
        (timer as { unref?: () => void }).unref?.();
      }
    }
  }

  async list(kind: ListKind, key: QueryKey, signal: AbortSignal): Promise<unknown[]> {
    const { bridge, emit, requestTimeoutMs } = this.#options;
    const notified = notifiedBy[kind];
    const session = await this.#session({ list: notified }, signal);
    bridge.readStarted(key, session.isListCovered(notified));
    emit({ type: 'list', list: kind, phase: 'start' });
    try {
      const page = await fetchList(session.client, kind, { signal, timeout: requestTimeoutMs });
      this.#options.fence();
      bridge.listFetched(kind, page.ttlMs);
      emit({ type: 'list', list: kind, phase: 'success', count: page.items.length });
      return page.items;
    } catch (error) {
      if (!signal.aborted) {
        emit({ type: 'list', list: kind, phase: 'error', error: errorMessage(error) });
        this.#options.connection.unauthorizedIf(session, error);
      }
      throw error;
    }
  }

  /**
   * The session to read on, once the coverage being set up for `target` is
   * acknowledged. If the connection was replaced meanwhile, the read goes to
   * the new one without waiting again (a server whose streams keep dying
   * must still be readable; coverage, if it ever comes, re-reads anyway).
   */
  async #session(
    target: { uri: string } | { list: NotifiedList },
    signal: AbortSignal,
  ): Promise<Session> {
    const { connection, requestTimeoutMs } = this.#options;
    const session = connection.session ?? (await connection.whenReady(signal, requestTimeoutMs));
    const waiting = session.whenCovered(target, signal);
    if (!waiting) return session;
    await waiting;
    // Cancelled while waiting (unmounted, StrictMode): no read starts, none is reported.
    signal.throwIfAborted();
    if (connection.session === session) return session;
    return connection.session ?? connection.whenReady(signal, requestTimeoutMs);
  }

  /**
   * A first load nobody observes yet — a prefetch, a loader, a suspended
   * render (which mounts its observer only once the data is there, and React
   * may hold back revealing it for a few hundred ms) — holds its URI while
   * it reads and for a grace period after, so it waits for the subscription
   * like any other read (one read, not two) and the observer that mounts
   * next finds it still covered. One that never comes lets go.
   */
  #holdForFirstLoad(uri: string, key: QueryKey): (() => void) | undefined {
    const { queryClient, interest } = this.#options;
    const query = queryClient.getQueryCache().get(hashKey(key));
    if (!query || query.state.data !== undefined || query.observers.length > 0) return undefined;
    if (interest.wants(uri)) return undefined;
    return interest.holdUri(uri);
  }
}
