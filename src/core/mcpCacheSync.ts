import type { Client } from '@modelcontextprotocol/client';
import type { Query, QueryClient } from '@tanstack/query-core';
import { CacheBridge } from './cacheBridge';
import { systemClock } from './clock';
import { invalidDurations } from './durations';
import { McpQueryError } from './errors';
import { EventBus, type McpEvent, type McpEventInput } from './events';
import { Holds } from './holds';
import { InterestRegistry } from './interest';
import { registerInternals } from './internals';
import { createMcpKeys, type McpKeys } from './keys';
import { delay, onEnd, whileAlive } from './lifetime';
import { LocalUpstream } from './local';
import { DEFAULTS, type McpCacheSyncOptions } from './options';
import { adoptPartition, identityOf, type PartitionIdentity } from './partition';
import { resourceListQueryOptions, resourceQueryOptions } from './queryOptions';
import { attach, detach, routedQueryFn, standBy } from './routing';
import type { AuthAware } from './signIn';
import { type McpState, StateStore } from './state';
import type { Upstream } from './upstream';

export type { McpCacheSyncOptions };

/**
 * Who starts the connection: the first query that needs it, or the owner's `mount()`; with
 * `'on-render'` (a provider built while rendering), also a query that needs it while no mount
 * came: a tree that suspends on that query above its provider never mounts it.
 */
export type StartPolicy = 'on-use' | 'on-mount' | 'on-render';

/** How long a query waits for a mount before an `'on-render'` McpCacheSync starts without it. */
const UNMOUNTED_START_MS = 50;

/**
 * Keeps one MCP server's resources live in a TanStack QueryClient. The React provider owns one;
 * it works the same from plain code:
 *
 * ```ts
 * const sync = new McpCacheSync({ queryClient, url });
 * await queryClient.fetchQuery(sync.resourceQueryOptions('config://app'));
 * ```
 *
 * Flow (docs/design.md): observers of MCP keys hold URIs in the interest registry → the
 * session's channel subscribes (listen stream or resources/subscribe) → notifications reach the
 * session's sink → the cache bridge re-reads exactly what changed, once, through the upstream.
 */
export class McpCacheSync {
  readonly queryClient: QueryClient;
  readonly keys: McpKeys;
  #identity: PartitionIdentity;
  /** Ends at `dispose()`: everything this object hands out is bound to it. */
  readonly #life = new AbortController();
  #disposing: Promise<void> | undefined;
  readonly #bus: EventBus;
  readonly #state: StateStore;
  readonly #interest: InterestRegistry;
  readonly #bridge: CacheBridge;
  readonly #local: LocalUpstream;
  /** Where reads, calls and coverage come from: chosen once, here. */
  readonly #upstream: Upstream;
  readonly #options: McpCacheSyncOptions;
  readonly #startPolicy: StartPolicy;
  /** This object's attachment to its QueryClient scope (routing.ts). */
  #serving: AbortSignal;
  #reset: Query[];
  #authorize: (() => void) | undefined;
  readonly #identityListeners: Array<() => void> = [];
  readonly #facts: Array<() => McpEventInput[]> = [];
  readonly #holds = new Holds(() => void this.dispose());
  #started = false;
  /** Stops serving the scope again when a provider mounted later lets go of it. */
  #standDown: (() => void) | undefined;

  /**
   * `startPolicy`: `'on-use'` (default) connects when a query or call first
   * needs it; the React provider passes `'on-render'`, so nothing connects
   * while rendering, and a query that runs before the provider's mount
   * waits for it (or, rendering on the server, fails at once) — briefly: one
   * that suspends the provider's own render starts it (`#startUnmounted`).
   */
  constructor(options: McpCacheSyncOptions, startPolicy: StartPolicy = 'on-use') {
    const { queryClient, authContext } = options;
    this.queryClient = queryClient;
    this.keys = createMcpKeys(options.scope);
    this.#options = options;
    this.#startPolicy = startPolicy;
    const clock = options.clock ?? systemClock;
    const auth = options.authProvider as AuthAware | undefined;
    this.#identity = identityOf({ ...options, authContext: authContext ?? auth?.identity?.() });
    this.#bus = new EventBus(clock);
    const emit = this.#bus.emit;

    this.#state = new StateStore({
      client: () => this.#upstream.readyClient(),
      reconnect: this.reconnect,
      authorize: this.authorize,
      emit,
      clock,
    });
    this.#bus.subscribe(this.#state.apply);
    const interest = new InterestRegistry({
      lingerMs: options.lingerMs ?? DEFAULTS.lingerMs,
      emit,
      onFlush: (desire) => this.#upstream.interest(desire),
      signal: this.#life.signal,
    });
    this.#interest = interest;
    const bridge = new CacheBridge({
      queryClient,
      keys: this.keys,
      interest,
      isCovered: (uri) => this.#upstream.isCovered(uri),
      isListCovered: (list) => this.#upstream.isListCovered(list),
    });
    this.#bridge = bridge;
    let asked = false;
    const demand = () => {
      if (this.#startPolicy === 'on-use') this.#start();
      else if (this.#startPolicy === 'on-render' && !asked && typeof document !== 'undefined') {
        asked = true;
        setTimeout(this.#startUnmounted, UNMOUNTED_START_MS);
      }
    };
    this.#local = new LocalUpstream(options, {
      queryClient,
      keys: this.keys,
      interest,
      bridge,
      emit,
      clock,
      demand,
      identity: () => this.#identity,
    });
    // Options that cannot work join no tab group: this tab's own connection ends in error (rule 8).
    this.#upstream =
      (invalidDurations(options) ? undefined : options.shareAcrossTabs)?.upstream(this.#local, {
        queryClient,
        keys: this.keys,
        bus: this.#bus,
        facts: () => this.#allFacts(),
        addFacts: (facts) => this.#facts.push(facts),
        identity: () => this.#identity,
        onIdentity: (run) => this.#identityListeners.push(run),
        desire: () => interest.desire(),
        wants: (uri) => interest.wants(uri),
        serverRequests: options.serverRequests,
        requestTimeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
        toolMaxTotalTimeoutMs: options.toolMaxTotalTimeoutMs ?? DEFAULTS.toolMaxTotalTimeoutMs,
        clock,
        demand,
        signal: this.#life.signal,
      }) ?? this.#local;

    // Serve this scope from now on: the previous server's data, or another identity's, is gone.
    this.#serving = attach(queryClient, this.keys.scope, this.#upstream);
    bridge.registerDefaults(routedQueryFn(this.keys.scope));
    this.#reset = adoptPartition(queryClient, this.keys, this.#identity);
    registerInternals(this, {
      events: { bus: this.#bus, facts: () => this.#allFacts() },
      upstream: this.#upstream,
      identity: () => this.#identity,
      serverRequests: options.serverRequests,
      diagnostics: {
        intervalMs: options.diagnosticsIntervalMs,
        silenceProbeMs: options.silenceProbeMs,
        reread: (uri) => bridge.changed(uri),
        digestReads: (digest) => this.#local.digestReads(digest),
      },
      signal: this.#life.signal,
    });
  }

  // ── lifecycle ────────────────────────────────────────────────────────────

  /**
   * Hold the connection open; the returned function lets go. The last holder
   * letting go tears down on the next macrotask, so React StrictMode's
   * mount → unmount → mount keeps one connection and one stream.
   */
  mount(): () => void {
    this.#start();
    return this.#holds.take();
  }

  /**
   * Close everything this object opened. Resolves once the transport is closed and a 2025
   * session has ended on the server; every call returns the same promise, so awaiting it after
   * an unmount waits for the real teardown. A client passed in stays open.
   */
  dispose(): Promise<void> {
    this.#disposing ??= this.#dispose();
    return this.#disposing;
  }

  async #dispose(): Promise<void> {
    this.#standDown?.();
    this.#holds.cancel();
    detach(this.queryClient, this.keys.scope, this.#serving);
    this.#bridge.dispose();
    await this.#upstream.dispose();
    // Last, so the optional parts (diagnostics, sign-in) see the connection close.
    this.#life.abort();
  }

  /** Drop the connection and streams and establish them again now. */
  reconnect = (): void => {
    this.#local.connection.reconnect();
  };

  /**
   * Sign in: an `authProvider` from `mcp-react-query/auth` navigates or opens a popup, and the
   * connection resumes by itself once a token arrives. With any other, connect again.
   */
  authorize = (): void => {
    (this.#authorize ?? this.reconnect)();
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
  whenReady(signal?: AbortSignal): Promise<Client> {
    return this.#upstream.client(signal);
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

  /** Connect (once). A disposed McpCacheSync cannot be used again. */
  #start(): void {
    if (this.#disposing) throw new McpQueryError('DISPOSED', 'this McpCacheSync was disposed');
    if (this.#started) return;
    this.#started = true;
    // The one that starts serves: of two built for one provider (React may
    // render twice and keep either), the mounted one takes the scope back.
    this.#serve();
    // Another provider of this scope mounted later serves it; once it lets go, this one does again.
    this.#standDown = standBy(this.queryClient, this.keys.scope, () => {
      if (!this.#serving.aborted) return false;
      this.#serve();
      const reset = new Set(this.#reset.splice(0));
      this.#refetch((query) => reset.has(query));
      return true;
    });
    this.#bridge.start();
    const signal = this.#life.signal;
    const unbind = (this.#options.authProvider as AuthAware | undefined)?.bind?.({
      signedIn: whileAlive(signal, (identity, hasToken, renew) =>
        this.#signedIn(identity, hasToken, renew),
      ),
      setAuthorize: (start) => {
        this.#authorize = start;
      },
      failed: whileAlive(signal, (error) => this.#local.connection.signInFailed(error)),
    });
    if (unbind) signal.addEventListener('abort', unbind, { once: true });
    this.#upstream.start();
    // Entries reset when this identity took over, and queries that ran into
    // a not-yet-started connection, load now.
    const reset = new Set(this.#reset);
    this.#reset = [];
    this.#refetch(
      (query) =>
        reset.has(query) ||
        (query.state.status === 'pending' &&
          query.state.fetchStatus === 'idle' &&
          this.keys.owns(query.queryKey)),
    );
  }

  /**
   * A query needs the connection and nothing mounted this McpCacheSync: a provider whose render
   * suspends on that query (a Suspense boundary above it) commits only once it has data. Still
   * unmounted and serving (not a twin React threw away), it starts, held until another
   * McpCacheSync serves its scope (serving again under another identity is still this one) or,
   * checked every requestTimeoutMs, no query of its scope is fetching.
   */
  #startUnmounted = (): void => {
    if (this.#started || this.#disposing || this.#serving.aborted) return;
    const release = this.mount();
    const follow = (): unknown =>
      onEnd(this.#serving, () =>
        queueMicrotask(() => (this.#serving.aborted ? release() : follow())),
      );
    follow();
    const ms = this.#options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
    const check = () => {
      const fetching = this.queryClient.isFetching({
        predicate: (query) => this.keys.owns(query.queryKey),
      });
      if (fetching) delay(this.#life.signal, ms, check);
      else release();
    };
    delay(this.#life.signal, ms, check);
  };

  /** Take the scope (again), under the current identity: older reads may no longer write. */
  #serve(): void {
    this.#serving = attach(this.queryClient, this.keys.scope, this.#upstream);
    this.#reset.push(...adoptPartition(this.queryClient, this.keys, this.#identity));
  }

  #allFacts(): McpEventInput[] {
    return [
      { type: 'connection', state: this.#local.connection.state },
      ...(this.#local.connection.session?.facts() ?? []),
      ...this.#interest.facts(),
      ...this.#facts.flatMap((facts) => facts()),
    ];
  }

  #refetch(predicate: (query: Query) => boolean): void {
    void this.queryClient.refetchQueries({ type: 'active', predicate }).catch(() => {});
  }

  /**
   * Tokens changed. Someone else or nobody signed in: a new connection (`renew`), and the previous
   * user's private data goes (rule 12). Signed in at all: connect, if waiting for it.
   */
  #signedIn(identity: string | undefined, hasToken: boolean, renew = false): void {
    if (renew || (hasToken && this.#local.connection.state.phase === 'unauthorized')) {
      this.reconnect();
    }
    const auth = this.#options.authContext ?? identity;
    if (auth !== this.#identity.auth) {
      this.#identity = { ...this.#identity, auth };
      this.#serve();
      for (const run of this.#identityListeners) run();
      const reset = new Set(this.#reset.splice(0));
      this.#refetch((query) => reset.has(query));
    }
  }
}
