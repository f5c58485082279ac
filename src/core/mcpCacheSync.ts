import type { Client } from '@modelcontextprotocol/client';
import type { Query, QueryClient, QueryFunctionContext } from '@tanstack/query-core';
import { defaultBackoff } from './backoff';
import { CacheBridge } from './cacheBridge';
import { createConnection } from './connect';
import type { Connection } from './connection';
import { McpQueryError } from './errors';
import { EventBus, type McpEvent, type McpEventInput } from './events';
import { InterestRegistry } from './interest';
import {
  type AuthAware,
  type Remote,
  registerInternals,
  type SyncInternals,
  startedByOwner,
  startOnMount,
} from './internals';
import { createMcpKeys, type McpKeys } from './keys';
import { DEFAULTS, type McpCacheSyncOptions } from './options';
import {
  adoptPartition,
  identityOf,
  isCurrentPartition,
  type PartitionIdentity,
} from './partition';
import { resourceListQueryOptions, resourceQueryOptions } from './queryOptions';
import { Reader } from './reader';
import { attach, detach, hasRunner, isAttached, routedQueryFn } from './routing';
import type { Session } from './session';
import { type McpState, StateStore } from './state';
import { Waiters } from './waiters';

export type { McpCacheSyncOptions };
export { startOnMount };

/**
 * Keeps one MCP server's resources live in a TanStack QueryClient. The React
 * provider owns one; it works the same from plain code:
 *
 * ```ts
 * const sync = new McpCacheSync({ queryClient, url });
 * await queryClient.fetchQuery(sync.resourceQueryOptions('config://app'));
 * ```
 *
 * Flow (docs/design.md): observers of MCP keys hold URIs in the interest
 * registry → the session's channel subscribes (listen stream or
 * resources/subscribe) → notifications reach the session's sink → the cache
 * bridge re-reads exactly what changed, once, through the reader.
 */
export class McpCacheSync {
  readonly queryClient: QueryClient;
  readonly keys: McpKeys;
  #identity: PartitionIdentity;
  readonly #bus = new EventBus();
  readonly #state: StateStore;
  readonly #interest: InterestRegistry;
  readonly #bridge: CacheBridge;
  readonly #connection: Connection<Session>;
  readonly #runner = {
    run: (context: QueryFunctionContext) => this.#run(context),
    superseded: () => this.#waiters.recheck(),
  };
  readonly #waiters = new Waiters();
  readonly #internals: SyncInternals;
  readonly #reader: Reader;
  readonly #timeoutMs: number;
  #reset: Query[];
  #compare: ((uri: string) => boolean) | undefined;
  #authorize: (() => void) | undefined;
  /** Set while another tab holds the connection (tab sharing). */
  #remote: Remote | undefined;
  readonly #disposers: Array<(() => void) | undefined> = [];
  readonly #identityListeners: Array<() => void> = [];
  readonly #facts: Array<() => McpEventInput[]> = [];
  #holders = 0;
  #teardown: ReturnType<typeof setTimeout> | undefined;
  #started = false;
  #disposed = false;

  constructor(options: McpCacheSyncOptions) {
    const { queryClient, authContext } = options;
    this.queryClient = queryClient;
    this.keys = createMcpKeys(options.scope);
    const auth = options.authProvider as AuthAware | undefined;
    this.#identity = identityOf({ ...options, authContext: authContext ?? auth?.identity?.() });
    const emit = this.#bus.emit;
    const timeoutMs = options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
    this.#timeoutMs = timeoutMs;
    const lingerMs = options.lingerMs ?? DEFAULTS.lingerMs;

    this.#state = new StateStore({
      client: () => this.#connection.session?.client,
      reconnect: this.reconnect,
      authorize: this.authorize,
      emit,
    });
    this.#bus.subscribe(this.#state.apply);
    const interest = new InterestRegistry({
      lingerMs,
      emit,
      onFlush: (desire) =>
        this.#remote ? this.#remote.interest(desire) : this.#connection.session?.update(desire),
    });
    this.#interest = interest;
    const session = () => this.#connection.session;
    const bridge = new CacheBridge({
      queryClient,
      keys: this.keys,
      interest,
      isCovered: (uri) => (this.#remote ?? session())?.isCovered(uri) ?? false,
      isListCovered: (list) => (this.#remote ?? session())?.isListCovered(list) ?? false,
    });
    this.#bridge = bridge;
    this.#connection = createConnection(options, {
      emit,
      interest,
      bridge,
      backoff: { ...defaultBackoff, ...options.reconnect },
      timeoutMs,
      lingerMs,
    });
    this.#reader = new Reader({
      queryClient,
      keys: this.keys,
      connection: this.#connection,
      interest,
      bridge,
      emit,
      fence: () => this.#fence(),
      requestTimeoutMs: timeoutMs,
      compare: () => this.#compare,
    });

    // Serve this scope from now on: the previous server's data, or another
    // identity's private data, is gone before anything renders with it.
    attach(queryClient, this.keys.scope, this.#runner);
    bridge.registerDefaults(routedQueryFn(this.keys.scope));
    this.#reset = adoptPartition(queryClient, this.keys, this.#identity);
    this.#internals = {
      bus: this.#bus,
      facts: () => [
        { type: 'connection', state: this.#connection.state },
        ...(session()?.facts() ?? []),
        ...interest.facts(),
        ...this.#facts.flatMap((facts) => facts()),
      ],
      addFacts: (facts) => this.#facts.push(facts),
      reread: (uri) => bridge.changed(uri),
      setCompare: (compare) => {
        this.#compare = compare;
      },
      session: async (signal) => {
        if (!startedByOwner(this)) this.#start();
        await this.#remote?.leading(signal, timeoutMs);
        return this.#connection.whenReady(signal, timeoutMs);
      },
      failed: (failed, error) => this.#connection.unauthorizedIf(failed as Session, error),
      options,
      onDispose: (run) => this.#disposers.push(run),
      queryClient,
      keys: this.keys,
      identity: () => this.#identity,
      desire: () => interest.desire(),
      remote: () => this.#remote,
      setRemote: (remote) => {
        this.#remote = remote;
        if (remote) void this.#connection.stop();
        else if (this.#started) this.#connection.start();
      },
      onIdentity: (run) => this.#identityListeners.push(run),
    };
    registerInternals(this, this.#internals);
  }

  // ── lifecycle ────────────────────────────────────────────────────────────

  /**
   * Hold the connection open; the returned function lets go. The last holder
   * letting go tears down on the next macrotask, so React StrictMode's
   * mount → unmount → mount keeps one connection and one stream.
   */
  mount(): () => void {
    if (this.#disposed) throw new McpQueryError('DISPOSED', 'this McpCacheSync was disposed');
    this.#holders += 1;
    clearTimeout(this.#teardown);
    this.#start();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holders -= 1;
      if (this.#holders === 0) this.#teardown = setTimeout(() => void this.dispose(), 0);
    };
  }

  /**
   * Close everything this object opened. Resolves once the transport is
   * closed and a 2025 session has ended on the server. A client passed in
   * stays open.
   */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    clearTimeout(this.#teardown);
    detach(this.queryClient, this.keys.scope, this.#runner);
    this.#waiters.releaseAll();
    this.#bridge.dispose();
    this.#interest.dispose();
    await this.#connection.dispose();
    for (const run of this.#disposers.splice(0)) run?.();
  }

  /** Drop the connection and streams and establish them again now. */
  reconnect = (): void => {
    if (!this.#disposed) this.#connection.reconnect();
  };

  /**
   * Sign in: an `authProvider` from `mcp-react-query/auth` navigates or opens
   * a popup, and the connection resumes by itself once a token arrives. With
   * any other provider, connect again (after the app signed in).
   */
  authorize = (): void => {
    if (!this.#disposed) (this.#authorize ?? this.reconnect)();
  };

  // ── public state ─────────────────────────────────────────────────────────

  getState = (): McpState => this.#state.get();
  subscribeState = (listener: () => void): (() => void) => this.#state.subscribe(listener);
  /** Every notification, read, stream and status change as it happens (logs, devtools). */
  subscribeEvents = (listener: (event: McpEvent) => void): (() => void) =>
    this.#bus.subscribe(listener);

  /**
   * Resolves with the connected client (waits through connecting/reconnecting, bounded). With
   * `shareAcrossTabs`, only the leading tab has one: elsewhere this fails with `OTHER_TAB`.
   */
  async whenReady(signal?: AbortSignal): Promise<Client> {
    return (await this.#internals.session(signal)).client;
  }

  /** Key and query function of one resource on this scope. */
  resourceQueryOptions(uri: string) {
    return resourceQueryOptions(uri, { scope: this.keys.scope });
  }

  /** Key and query function of the full resource list on this scope. */
  resourceListQueryOptions() {
    return resourceListQueryOptions({ scope: this.keys.scope });
  }

  // ── internals ────────────────────────────────────────────────────────────

  #start(): void {
    if (this.#started || this.#disposed) return;
    this.#started = true;
    // The one that starts serves: of two built for one provider (React may
    // render twice and keep either), the mounted one takes the scope back.
    attach(this.queryClient, this.keys.scope, this.#runner);
    this.#reset.push(...adoptPartition(this.queryClient, this.keys, this.#identity));
    this.#waiters.recheck();
    this.#bridge.start();
    this.#disposers.push(
      (this.#internals.options.authProvider as AuthAware | undefined)?.bind?.({
        signedIn: (identity, hasToken, renew) => this.#signedIn(identity, hasToken, renew),
        setAuthorize: (start) => {
          this.#authorize = start;
        },
        failed: (error) => this.#connection.signInFailed(error),
      }),
    );
    // With tab sharing every tab starts as a follower; the elected one connects.
    this.#internals.options.shareAcrossTabs?.attach(this, this.#internals);
    if (!this.#remote) this.#connection.start();
    // Entries reset when this identity took over, and queries that ran into
    // a not-yet-started connection, load now.
    const reset = new Set(this.#reset);
    this.#reset = [];
    this.#refetch(
      (query) =>
        reset.has(query) ||
        (query.state.status === 'pending' &&
          query.state.fetchStatus === 'idle' &&
          (this.keys.uriOf(query.queryKey) ?? this.keys.listOf(query.queryKey)) !== undefined),
    );
  }

  #refetch(predicate: (query: Query) => boolean): void {
    void this.queryClient.refetchQueries({ type: 'active', predicate }).catch(() => {});
  }

  /**
   * Tokens changed. Someone else or nobody signed in: a new connection (`renew`), and the previous
   * user's private data goes (rule 12). Signed in at all: connect, if waiting for it.
   */
  #signedIn(identity: string | undefined, hasToken: boolean, renew = false): void {
    if (this.#disposed) return;
    if (renew || (hasToken && this.#connection.state.phase === 'unauthorized')) this.reconnect();
    const auth = this.#internals.options.authContext ?? identity;
    if (auth !== this.#identity.auth) {
      this.#identity = { ...this.#identity, auth };
      const reset = adoptPartition(this.queryClient, this.keys, this.#identity);
      for (const run of this.#identityListeners) run();
      this.#refetch((query) => reset.includes(query));
    }
  }

  async #run({ queryKey, signal }: QueryFunctionContext): Promise<unknown> {
    if (!startedByOwner(this)) this.#start();
    if (!this.#started) {
      if (typeof document === 'undefined') {
        throw new McpQueryError(
          'NOT_STARTED',
          'McpProvider does not connect while rendering on the server',
        );
      }
      // A child's query runs before its provider's mount effect: wait for it.
      await this.#waiters.wait(() => this.#started || !this.#serving(), {
        timeoutMs: this.#timeoutMs,
        signal,
      });
      signal.throwIfAborted();
    }
    this.#fence();
    if (!this.#started) throw new McpQueryError('NOT_STARTED', 'the McpProvider never mounted');
    if (this.#remote) return this.#remote.read(queryKey, signal);
    return this.#reader.query(queryKey, signal);
  }

  /**
   * Nothing read through a disposed or replaced McpCacheSync, or under an
   * identity that is no longer current, may write into the cache. A query
   * whose McpCacheSync was replaced goes to the successor.
   */
  #fence(): void {
    if (this.#serving()) return;
    throw hasRunner(this.queryClient, this.keys.scope)
      ? new McpQueryError('SUPERSEDED', 'another McpCacheSync serves this QueryClient now')
      : new McpQueryError('DISPOSED', 'the McpCacheSync of this query was disposed');
  }

  #serving(): boolean {
    return (
      !this.#disposed &&
      isAttached(this.queryClient, this.keys.scope, this.#runner) &&
      isCurrentPartition(this.queryClient, this.keys, this.#identity)
    );
  }
}
