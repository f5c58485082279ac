import type { CallToolResult, Client, Root } from '@modelcontextprotocol/client';
import type { Query, QueryClient, QueryFunctionContext } from '@tanstack/query-core';
import { defaultBackoff } from './backoff';
import { CacheBridge } from './cacheBridge';
import { borrowedSource, ownedSource } from './clientSource';
import { Connection } from './connection';
import { McpQueryError } from './errors';
import { EventBus, type McpEvent } from './events';
import { type InteractiveAuth, interactive } from './interactiveAuth';
import { InterestRegistry } from './interest';
import { registerInternals } from './internals';
import { createMcpKeys, type McpKeys } from './keys';
import { DEFAULTS, type McpCacheSyncOptions } from './options';

export type { McpCacheSyncOptions };

import {
  adoptPartition,
  identityOf,
  isCurrentPartition,
  type PartitionIdentity,
} from './partition';
import { resourceListQueryOptions, resourceQueryOptions } from './queryOptions';
import { Reader } from './reader';
import { Retention } from './retention';
import { attach, detach, hasRunner, isAttached, routedQueryFn } from './routing';
import { type PendingElicitation, ServerRequests } from './serverRequests';
import { Session, type SessionHost } from './session';
import { type McpState, StateStore } from './state';
import { type CallToolVariables, callTool } from './tools';
import { Waiters } from './waiters';

/** Engines started by their owner's lifecycle (a provider's mount), never by a query. */
const startedByOwner = new WeakSet<McpCacheSync>();

/**
 * For McpProvider: start only when mounted. A query that runs first (a
 * child's effect runs before its parent's) waits for the mount; on the
 * server, where nothing mounts, it fails at once instead of connecting.
 */
export function startOnMount(sync: McpCacheSync): void {
  startedByOwner.add(sync);
}

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
  readonly #authContext: string | undefined;
  readonly #auth: InteractiveAuth | undefined;
  #stopAuth: (() => void) | undefined;
  readonly #serverRequests: ServerRequests;
  readonly #toolTimeoutMs: number;
  readonly #bus = new EventBus();
  readonly #state: StateStore;
  readonly #interest: InterestRegistry;
  readonly #bridge: CacheBridge;
  readonly #connection: Connection<Session>;
  readonly #reader: Reader;
  readonly #runner = {
    run: (context: QueryFunctionContext) => this.#run(context),
    superseded: () => this.#startWaiters.recheck(),
  };
  readonly #startWaiters = new Waiters();
  readonly #requestTimeoutMs: number;
  #resetQueries: Query[];
  #compare: ((uri: string) => boolean) | undefined;
  readonly #onDispose: Array<() => void> = [];
  #holders = 0;
  #teardown: ReturnType<typeof setTimeout> | undefined;
  #started = false;
  #disposed = false;

  constructor(options: McpCacheSyncOptions) {
    const sources = [options.url, options.client, options.transport].filter((s) => s !== undefined);
    if (sources.length !== 1) {
      throw new McpQueryError(
        'INVALID_OPTIONS',
        `McpCacheSync needs exactly one of \`url\`, \`client\` or \`transport\` (got ${sources.length})`,
      );
    }
    const { queryClient } = options;
    this.queryClient = queryClient;
    this.keys = createMcpKeys(options.scope);
    this.#authContext = options.authContext;
    this.#auth = interactive(options.authProvider);
    this.#identity = identityOf({
      ...options,
      authContext: options.authContext ?? this.#auth?.identity(),
    });
    this.#serverRequests = new ServerRequests(options);
    this.#toolTimeoutMs = options.toolTimeoutMs ?? DEFAULTS.toolTimeoutMs;
    const emit = this.#bus.emit;
    const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
    this.#requestTimeoutMs = requestTimeoutMs;
    const backoff = { ...defaultBackoff, ...options.reconnect };
    const lingerMs = options.lingerMs ?? DEFAULTS.lingerMs;

    this.#state = new StateStore({
      client: () => this.#connection.session?.client,
      reconnect: this.reconnect,
      authorize: this.authorize,
      emit,
    });
    this.#bus.subscribe(this.#state.apply);

    this.#interest = new InterestRegistry({
      lingerMs,
      emit,
      onFlush: (desire) => this.#connection.session?.update(desire),
    });
    this.#bridge = new CacheBridge({
      queryClient,
      keys: this.keys,
      interest: this.#interest,
      isCovered: (uri) => this.#connection.session?.isCovered(uri) ?? false,
      isListCovered: (list) => this.#connection.session?.isListCovered(list) ?? false,
    });
    const retention = new Retention();
    const host: SessionHost = {
      emit,
      desire: () => this.#interest.desire(),
      wants: (uri) => this.#interest.wants(uri),
      wantsList: (list) => this.#interest.wantsList(list),
      changed: (uri) => this.#bridge.changed(uri),
      listChanged: (list) => this.#bridge.listChanged(list),
      coverageChanged: (change) => this.#bridge.coverageChanged(change),
      lost: (session, reason, endSession) => this.#connection.lost(session, reason, endSession),
    };
    this.#connection = new Connection<Session>({
      label: options.client
        ? 'the MCP client passed in'
        : options.transport
          ? 'the MCP server behind the transport factory'
          : String(options.url),
      source: options.client
        ? borrowedSource(options.client)
        : ownedSource({
            target: options.transport
              ? { transport: options.transport }
              : {
                  url: options.url as string | URL,
                  ...(options.fetch && { fetch: options.fetch }),
                },
            clientInfo: options.clientInfo ?? DEFAULTS.clientInfo,
            protocol: options.protocol ?? 'auto',
            backoff,
            ...(options.authProvider && { authProvider: options.authProvider }),
            capabilities: this.#serverRequests.capabilities(),
            install: (client) => this.#serverRequests.install(client),
          }),
      backoff,
      requestTimeoutMs,
      emit,
      open: (client, observed) => {
        const { reconnects, lastLoss } = this.#connection.state;
        return new Session(
          client,
          host,
          {
            backoff,
            ackTimeoutMs: options.ackTimeoutMs ?? DEFAULTS.ackTimeoutMs,
            requestTimeoutMs,
            retention,
            releaseAfterMs: 10 * lingerMs,
            history: {
              reopenCount: reconnects,
              lastCloseReason: lastLoss === undefined ? undefined : 'remote',
            },
          },
          observed,
        );
      },
    });
    this.#reader = new Reader({
      queryClient,
      connection: this.#connection,
      interest: this.#interest,
      bridge: this.#bridge,
      emit,
      fence: () => this.#fence(),
      requestTimeoutMs,
      compare: () => this.#compare,
    });

    // Serve this scope from now on: the previous server's data, or another
    // identity's private data, is gone before anything renders with it.
    attach(queryClient, this.keys.scope, this.#runner);
    this.#bridge.registerDefaults(routedQueryFn(this.keys.scope));
    this.#resetQueries = adoptPartition(queryClient, this.keys, this.#identity);
    registerInternals(this, {
      bus: this.#bus,
      facts: () => [
        { type: 'connection', state: this.#connection.state },
        ...(this.#connection.session?.facts() ?? []),
        ...this.#interest.facts(),
      ],
      reread: (uri) => this.#bridge.changed(uri),
      setCompare: (compare) => {
        this.#compare = compare;
      },
      options: {
        silenceProbeMs: options.silenceProbeMs,
        diagnosticsIntervalMs: options.diagnosticsIntervalMs,
      },
      onDispose: (run) => this.#onDispose.push(run),
    });
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
    this.#teardown = undefined;
    this.#start();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holders -= 1;
      if (this.#holders > 0) return;
      this.#teardown = setTimeout(() => void this.dispose(), 0);
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
    this.#stopAuth?.();
    this.#startWaiters.releaseAll();
    this.#bridge.dispose();
    this.#interest.dispose();
    await this.#connection.dispose();
    for (const run of this.#onDispose.splice(0)) run();
  }

  /** Drop the connection and streams and establish them again now. */
  reconnect = (): void => {
    if (!this.#disposed) this.#connection.reconnect();
  };

  /**
   * Sign in (the `authProvider` from `mcp-react-query/auth` navigates or
   * opens a popup); the connection resumes by itself once a token arrives.
   * With any other provider, connect again (after the app signed in).
   */
  authorize = (): void => {
    if (this.#disposed) return;
    if (this.#auth) void this.#auth.authorize().catch(() => {});
    else this.reconnect();
  };

  /**
   * Call a tool. `isError` results are returned (the tool ran and failed);
   * transport and protocol failures throw. Waits for the connection like a
   * read does (bounded by `requestTimeoutMs`).
   */
  async callTool(variables: CallToolVariables): Promise<CallToolResult> {
    if (!startedByOwner.has(this)) this.#start();
    const session = await this.#connection.whenReady(variables.signal, this.#requestTimeoutMs);
    try {
      return await callTool(session.client, variables, this.#toolTimeoutMs);
    } catch (error) {
      this.#connection.unauthorizedIf(session, error);
      throw error;
    }
  }

  /** New roots for the server (`roots/list`); a 2025 server is told they changed. */
  setRoots(roots: Root[]): void {
    this.#serverRequests.setRoots(roots, this.#connection.session?.client);
  }

  /** Elicitations waiting for the user, for a UI to render and answer. */
  getElicitations = (): readonly PendingElicitation[] => this.#serverRequests.pending.get();
  /**
   * Listen to the pending elicitations. While anyone listens, elicitations
   * wait to be answered; with no listener (and no `onElicitation`) they are
   * declined at once.
   */
  subscribeElicitations = (listener: () => void): (() => void) => {
    const stopAnswering = this.#serverRequests.answer();
    const unsubscribe = this.#serverRequests.pending.subscribe(listener);
    return () => {
      unsubscribe();
      stopAnswering();
    };
  };

  // ── public state ─────────────────────────────────────────────────────────

  getState = (): McpState => this.#state.get();
  subscribeState = (listener: () => void): (() => void) => this.#state.subscribe(listener);
  /** Every notification, read, stream and status change as it happens (logs, devtools). */
  subscribeEvents = (listener: (event: McpEvent) => void): (() => void) =>
    this.#bus.subscribe(listener);

  /** Resolves with the connected client (waits through connecting/reconnecting, bounded). */
  async whenReady(signal?: AbortSignal): Promise<Client> {
    if (!startedByOwner.has(this)) this.#start();
    const session = await this.#connection.whenReady(signal, this.#requestTimeoutMs);
    return session.client;
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
    this.#resetQueries.push(...adoptPartition(this.queryClient, this.keys, this.#identity));
    this.#startWaiters.recheck();
    this.#bridge.start();
    this.#stopAuth = this.#auth?.subscribe(() => this.#authChanged());
    this.#connection.start();
    // Entries reset when this identity took over, and queries that ran into
    // a not-yet-started connection, load now.
    const reset = new Set(this.#resetQueries);
    this.#resetQueries = [];
    void this.queryClient
      .refetchQueries({
        type: 'active',
        predicate: (query) =>
          reset.has(query) ||
          (query.state.status === 'pending' &&
            query.state.fetchStatus === 'idle' &&
            (this.keys.uriOf(query.queryKey) !== undefined ||
              this.keys.listOf(query.queryKey) !== undefined)),
      })
      .catch(() => {});
  }

  /**
   * Tokens changed. Someone else signed in: their private data is not the
   * previous user's (rule 12). Signed in at all: connect, if waiting for it.
   */
  #authChanged(): void {
    if (this.#disposed || !this.#auth) return;
    const identity = this.#authContext ?? this.#auth.identity();
    if (identity !== this.#identity.auth) {
      this.#identity = { ...this.#identity, auth: identity };
      const reset = adoptPartition(this.queryClient, this.keys, this.#identity);
      void this.queryClient
        .refetchQueries({ type: 'active', predicate: (query) => reset.includes(query) })
        .catch(() => {});
    }
    if (identity !== undefined && this.#connection.state.phase === 'unauthorized') {
      this.#connection.reconnect();
    }
  }

  async #run(context: QueryFunctionContext): Promise<unknown> {
    const { queryKey, signal } = context;
    if (!this.#started && !startedByOwner.has(this)) this.#start();
    if (!this.#started) {
      if (typeof document === 'undefined') {
        throw new McpQueryError(
          'NOT_STARTED',
          'McpProvider opens no connection while rendering on the server; this query runs in the browser',
        );
      }
      // A child's query runs before its provider's mount effect: wait for it.
      await this.#startWaiters.wait(() => this.#started || !this.#serving(), {
        timeoutMs: this.#requestTimeoutMs,
        signal,
      });
      signal.throwIfAborted();
    }
    this.#fence();
    if (!this.#started) {
      throw new McpQueryError('NOT_STARTED', 'the McpProvider serving this query never mounted');
    }
    const list = this.keys.listOf(queryKey);
    if (list) return this.#reader.list(list, queryKey, signal);
    const prefix = this.keys.resourcePrefix();
    if (queryKey.length === prefix.length + 1 && prefix.every((part, i) => queryKey[i] === part)) {
      return this.#reader.read(queryKey[prefix.length], queryKey, signal);
    }
    throw new McpQueryError('UNKNOWN_KEY', `not an MCP query key: ${JSON.stringify(queryKey)}`);
  }

  /**
   * Nothing read through a disposed or replaced McpCacheSync, or under an
   * identity that is no longer current, may write into the cache. A query
   * whose McpCacheSync was replaced goes to the successor.
   */
  #fence(): void {
    if (this.#serving()) return;
    if (hasRunner(this.queryClient, this.keys.scope)) {
      throw new McpQueryError('SUPERSEDED', 'another McpCacheSync serves this QueryClient now');
    }
    throw new McpQueryError('DISPOSED', 'the McpCacheSync that started this query was disposed');
  }

  #serving(): boolean {
    return (
      !this.#disposed &&
      isAttached(this.queryClient, this.keys.scope, this.#runner) &&
      isCurrentPartition(this.queryClient, this.keys, this.#identity)
    );
  }
}
