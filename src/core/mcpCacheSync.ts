import type {
  Client,
  Implementation,
  ReadResourceResult,
  Resource,
  Transport,
} from '@modelcontextprotocol/client';
import type {
  Query,
  QueryCacheNotifyEvent,
  QueryClient,
  QueryFunctionContext,
  QueryKey,
} from '@tanstack/query-core';
import { attach, attachedRunner, detach, type QueryRunner, routedQueryFn } from './attachments';
import { adoptAuthContext, isCurrentAuthContext } from './authContext';
import { defaultBackoff } from './backoff';
import {
  type ChangeChannel,
  type ChannelEvents,
  type Coverage,
  initialStatus,
  noCoverage,
  type StreamStatus,
} from './channel';
import { Connection, type ConnectionState, type ProtocolChoice } from './connection';
import { Diagnostics, type McpDiagnostics } from './diagnostics';
import { errorMessage, invalidUriError, isValidUri, McpQueryError } from './errors';
import { EventHub, type McpEvent } from './events';
import { createMcpKeys, type McpKeys } from './keys';
import { canonical, diffLists, fingerprintList, type ListFingerprint } from './listDiff';
import { ListenChannel } from './listenChannel';
import { fetchList, LIST_KINDS, type ListKind, type NotifiedList, notifiedBy } from './lists';
import { installDispatcher, type NotificationSink } from './notificationRouter';
import {
  ATTACH_WAIT_MS,
  listQueryOptions,
  resourceListQueryOptions,
  resourceQueryOptions,
} from './queryOptions';
import { checkContents, retryUnlessPermanent, ttlOf } from './readResult';
import { RefetchCoordinator } from './refetchCoordinator';
import { Store } from './store';
import { type LegacyStreamState, SubscribeChannel } from './subscribeChannel';
import { SubscriptionRegistry } from './subscriptionRegistry';

export type McpStatus = ConnectionState['phase'];

/**
 * What `useMcp()` returns: the connection as the host sees it (`client` is the
 * SDK client of the current connection, to call tools on; `status` also turns
 * `reconnecting` while the change stream is being re-established).
 */
export type McpState = Pick<
  ConnectionState,
  'client' | 'era' | 'protocolVersion' | 'capabilities' | 'error' | 'attempt' | 'nextRetryAt'
> & {
  status: McpStatus;
  /** Drop the connection and streams and establish them again now. */
  reconnect: () => void;
};

export interface McpCacheSyncOptions {
  queryClient: QueryClient;
  /** Streamable HTTP endpoint. Exactly one of `url`, `client`, `transport`. */
  url?: string | URL;
  /** A connected SDK client owned by the host (never closed by us). */
  client?: Client;
  /** Creates a fresh transport for each (re)connection. */
  transport?: () => Transport;
  /** fetch used with `url` (defaults to the global one). */
  fetch?: typeof fetch;
  clientInfo?: Implementation;
  protocol?: ProtocolChoice;
  /** Prefix every key with `['mcp', scope]` (several servers, one QueryClient). */
  scope?: string;
  /**
   * Identity of the authorisation context. Data read with `cacheScope:
   * 'private'` under one context is removed when another one starts.
   */
  authContext?: string;
  /** How long a released URI stays subscribed (ms). */
  lingerMs?: number;
  /** Reconnect and re-listen backoff (ms). */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /** Bound on waiting for a listen acknowledgement (ms). */
  ackTimeoutMs?: number;
  /** Bound on every request (ms). */
  requestTimeoutMs?: number;
  /** Minimum interval between diagnostics updates to subscribers (ms). */
  diagnosticsIntervalMs?: number;
  /**
   * Off by default. When set, a subscribed, acknowledged resource that has
   * been quiet (no notification, no read) this long is read once to check:
   * new content found that way is counted in the diagnostics as a silent
   * change — how a server that publishes on another process or instance
   * shows up. Costs one read per quiet resource per period.
   */
  silenceProbeMs?: number;
}

const defaults = {
  clientInfo: { name: 'mcp-react-query', version: '0.1.0' },
  lingerMs: 1000,
  ackTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
};

/**
 * Keeps one MCP server's resources live in a TanStack QueryClient. The React
 * provider owns one of these; it works the same from plain code.
 *
 * Flow: components hold URIs in the registry → the era's channel subscribes
 * (listen stream or resources/subscribe) → the server's notifications reach
 * the one dispatcher → the coordinator re-reads exactly what changed, once.
 */
export class McpCacheSync implements QueryRunner {
  readonly queryClient: QueryClient;
  readonly keys: McpKeys;
  readonly #options: McpCacheSyncOptions;
  readonly #connection: Connection;
  readonly #uris: SubscriptionRegistry;
  readonly #lists: SubscriptionRegistry;
  readonly #coordinator: RefetchCoordinator;
  readonly #diagnostics: Diagnostics;
  readonly #state: Store<McpState>;
  readonly #events = new EventHub();
  #channel: ChangeChannel | undefined;
  #legacyStream: LegacyStreamState = 'unknown';
  #coverage: Coverage = noCoverage;
  #declined: ReadonlyMap<string, string> = new Map();
  #stream: StreamStatus = initialStatus('none', Date.now());
  #desirePending = false;
  #listFingerprint: ListFingerprint | undefined;
  #listData: unknown;
  readonly #listTtl = new Map<ListKind, number>();
  readonly #changeWaiters = new Set<() => void>();
  #unsubscribeCache: (() => void) | undefined;
  #holders = 0;
  #teardownTimer: ReturnType<typeof setTimeout> | undefined;
  #probeTimer: ReturnType<typeof setInterval> | undefined;
  #started = false;
  #disposed = false;

  constructor(options: McpCacheSyncOptions) {
    const sources = [options.url, options.client, options.transport].filter((s) => s !== undefined);
    if (sources.length !== 1) {
      throw new McpQueryError(
        'INVALID_OPTIONS',
        'McpProvider needs exactly one of `url`, `client` or `transport`',
      );
    }
    this.#options = options;
    this.queryClient = options.queryClient;
    this.keys = createMcpKeys(options.scope);
    const linger = { lingerMs: options.lingerMs ?? defaults.lingerMs };
    this.#uris = new SubscriptionRegistry(linger, () => this.#desireChanged());
    this.#lists = new SubscriptionRegistry(linger, () => this.#desireChanged());
    this.#coordinator = new RefetchCoordinator(this.queryClient);
    this.#connection = new Connection(
      {
        source: options.client
          ? { client: options.client }
          : options.transport
            ? { transport: options.transport }
            : { url: options.url as string | URL, ...(options.fetch && { fetch: options.fetch }) },
        clientInfo: options.clientInfo ?? defaults.clientInfo,
        protocol: options.protocol ?? 'auto',
        backoff: { ...defaultBackoff, ...options.reconnect },
        requestTimeoutMs: this.#requestTimeoutMs,
      },
      {
        prepare: (client, generation) => this.#prepare(client, generation),
        ready: (client, generation) => this.#ready(client, generation),
        lost: () => this.#lost(),
        legacyStream: (generation, state) => this.#legacyStreamChanged(generation, state),
      },
    );
    this.#diagnostics = new Diagnostics(
      {
        connection: () => this.#connection.state.get(),
        stream: () => this.#stream,
        refs: (uri) => this.#uris.refs(uri),
        subscribed: () => this.#uris.keys(),
        covered: () => this.#coverage.uris,
        listsCovered: () => this.#coverage.lists,
        declined: () => this.#declined,
      },
      options.diagnosticsIntervalMs === undefined
        ? undefined
        : { emitEveryMs: options.diagnosticsIntervalMs },
    );
    this.#state = new Store(this.#computeState(undefined));
    this.#connection.state.subscribe(() => this.#stateChanged());
  }

  /** Server-side subscriptions nobody wants any more are dropped this long after the linger. */
  get #narrowAfterMs(): number {
    return 10 * (this.#options.lingerMs ?? defaults.lingerMs);
  }

  get #requestTimeoutMs(): number {
    return this.#options.requestTimeoutMs ?? defaults.requestTimeoutMs;
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
    clearTimeout(this.#teardownTimer);
    this.#teardownTimer = undefined;
    this.#start();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holders -= 1;
      if (this.#holders > 0) return;
      this.#teardownTimer = setTimeout(() => void this.dispose(), 0);
    };
  }

  /** Close everything this object opened. A client passed in stays open. */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    clearTimeout(this.#teardownTimer);
    clearInterval(this.#probeTimer);
    detach(this.queryClient, this.keys.scope, this);
    this.#unsubscribeCache?.();
    this.#uris.dispose();
    this.#lists.dispose();
    this.#coordinator.stop();
    const channel = this.#channel;
    this.#channel = undefined;
    this.#bump();
    await Promise.all([channel?.dispose(), this.#connection.dispose()]);
    this.#diagnostics.dispose();
  }

  reconnect = (): void => {
    if (!this.#disposed) this.#connection.reconnect();
  };

  /**
   * Serve this scope's keys on the QueryClient: query functions route here,
   * and the query defaults carry this connection's freshness (fresh until
   * notified while covered, else the server's TTL) and retry policy. The
   * provider calls this while rendering, before its children query.
   * Idempotent.
   */
  attach(): void {
    if (this.#disposed || attachedRunner(this.queryClient, this.keys.scope) === this) return;
    this.adoptAuthContext();
    attach(this.queryClient, this.keys.scope, this);
    const queryFn = routedQueryFn(this.keys.scope, ATTACH_WAIT_MS);
    const retry = retryUnlessPermanent;
    this.queryClient.setQueryDefaults(this.keys.resourcePrefix(), {
      queryFn,
      retry,
      staleTime: (query: Query) => {
        const uri = this.keys.uriOf(query.queryKey);
        return uri !== undefined && this.#coverage.uris.has(uri)
          ? Number.POSITIVE_INFINITY
          : ttlOf(query.state.data);
      },
    });
    for (const kind of LIST_KINDS) {
      this.queryClient.setQueryDefaults(this.keys.list(kind), {
        queryFn,
        retry,
        staleTime: () =>
          this.#coverage.lists.has(notifiedBy[kind])
            ? Number.POSITIVE_INFINITY
            : (this.#listTtl.get(kind) ?? 0),
      });
    }
  }

  #start(): void {
    if (this.#started) return;
    this.#started = true;
    this.attach();
    this.#coordinator.start();
    this.#unsubscribeCache = this.queryClient
      .getQueryCache()
      .subscribe((event) => this.#onCacheEvent(event));
    this.#connection.start();
    const probeMs = this.#options.silenceProbeMs;
    if (probeMs !== undefined && probeMs > 0) {
      this.#probeTimer = setInterval(() => this.#probeSilence(probeMs), probeMs / 2);
    }
  }

  #probeSilence(probeMs: number): void {
    const now = Date.now();
    for (const uri of this.#coverage.uris) {
      const last = this.#diagnostics.lastActivity(uri);
      if (last !== undefined && now - last >= probeMs) {
        this.#coordinator.signal(this.keys.resource(uri));
      }
    }
  }

  // ── public state ─────────────────────────────────────────────────────────

  getState = (): McpState => this.#state.get();
  subscribeState = (listener: () => void): (() => void) => this.#state.subscribe(listener);
  getDiagnostics = (): McpDiagnostics => this.#diagnostics.getSnapshot();
  subscribeDiagnostics = (listener: () => void): (() => void) =>
    this.#diagnostics.subscribe(listener);
  /** Every notification, read, stream and status change as it happens (for logs and devtools). */
  subscribeEvents = (listener: (event: McpEvent) => void): (() => void) =>
    this.#events.subscribe(listener);

  /** Resolves with the connected client (waits through connecting/reconnecting). */
  whenReady(signal?: AbortSignal): Promise<Client> {
    return this.#connection.whenReady(signal);
  }

  /**
   * Want notifications for `uri` until the returned function is called. Many
   * holders of one URI share one server-side subscription.
   */
  acquire(uri: string): () => void {
    if (this.#disposed || !isValidUri(uri)) return () => {};
    return this.#uris.acquire(uri);
  }

  /**
   * Hold `uri` for a bounded while without a component: a suspended render
   * runs no effects until its data arrives, yet its first read should wait
   * for the subscription like any other (one read, not two). The mounted
   * component's own hold takes over; an abandoned render's hold expires.
   */
  prime(uri: string): void {
    if (this.#disposed || !isValidUri(uri)) return;
    const release = this.#uris.acquire(uri);
    const timer = setTimeout(release, this.#requestTimeoutMs);
    (timer as { unref?: () => void }).unref?.();
  }

  /**
   * Want `list_changed` of the tools or prompts list until the returned
   * function is called (the resources list is always wanted).
   */
  acquireList(list: NotifiedList): () => void {
    if (this.#disposed || list === 'resources') return () => {};
    return this.#lists.acquire(list);
  }

  /** Key and query function of one resource on this provider's scope. */
  resourceQueryOptions(uri: string) {
    return resourceQueryOptions(uri, { scope: this.keys.scope });
  }

  /** Key and query function of the full resource list on this provider's scope. */
  resourceListQueryOptions() {
    return resourceListQueryOptions({ scope: this.keys.scope });
  }

  // ── reads ────────────────────────────────────────────────────────────────

  /** Runs the query behind any key of this scope (the routed query function lands here). */
  runQuery(context: QueryFunctionContext): Promise<unknown> {
    const { queryKey, signal } = context;
    const list = this.keys.listOf(queryKey);
    if (list) return this.#list(list, queryKey, signal);
    const prefix = this.keys.resourcePrefix();
    if (queryKey.length === prefix.length + 1 && prefix.every((part, i) => queryKey[i] === part)) {
      return this.#read(queryKey[prefix.length], queryKey, signal);
    }
    return Promise.reject(
      new McpQueryError('UNKNOWN_KEY', `not an MCP query key: ${JSON.stringify(queryKey)}`),
    );
  }

  async #read(uri: unknown, key: QueryKey, signal: AbortSignal): Promise<ReadResourceResult> {
    if (!isValidUri(uri)) throw invalidUriError(uri);
    const client = await this.#readyAfter({ uri }, signal);
    const previous = this.#diagnostics.previousReadMarkers(uri);
    this.#coordinator.readStarted(key, this.#coverage.uris.has(uri));
    this.#diagnostics.readStarted(uri);
    this.#events.emit(() => ({ type: 'read', phase: 'start', uri, at: Date.now() }));
    try {
      const result = await client.readResource(
        { uri },
        // TanStack Query is the only cache: the SDK's own TTL cache could
        // answer a post-notification read with the content it replaces.
        { cacheMode: 'bypass', signal, timeout: this.#requestTimeoutMs },
      );
      checkContents(uri, result);
      this.#assertLive();
      this.#diagnostics.readSucceeded(
        uri,
        () => {
          const before = this.queryClient.getQueryData<ReadResourceResult>(key);
          return before !== undefined && canonical(before.contents) !== canonical(result.contents);
        },
        previous,
      );
      this.#events.emit(() => ({ type: 'read', phase: 'success', uri, at: Date.now() }));
      return result;
    } catch (error) {
      if (!signal.aborted) {
        const message = errorMessage(error);
        this.#diagnostics.readFailed(uri, message);
        this.#events.emit(() => ({
          type: 'read',
          phase: 'error',
          uri,
          error: message,
          at: Date.now(),
        }));
      }
      throw error;
    }
  }

  async #list(kind: ListKind, key: QueryKey, signal: AbortSignal): Promise<unknown[]> {
    const notified = notifiedBy[kind];
    const client = await this.#readyAfter({ list: notified }, signal);
    this.#coordinator.readStarted(key, this.#coverage.lists.has(notified));
    this.#events.emit(() => ({ type: 'list', list: kind, phase: 'start', at: Date.now() }));
    try {
      const page = await fetchList(client, kind, { signal, timeout: this.#requestTimeoutMs });
      this.#assertLive();
      this.#listTtl.set(kind, ttlOf(page));
      const count = page.items.length;
      this.#events.emit(() => ({
        type: 'list',
        list: kind,
        phase: 'success',
        count,
        at: Date.now(),
      }));
      return page.items;
    } catch (error) {
      const message = errorMessage(error);
      this.#events.emit(() => ({
        type: 'list',
        list: kind,
        phase: 'error',
        error: message,
        at: Date.now(),
      }));
      throw error;
    }
  }

  /**
   * Nothing read through a disposed sync object, or under an authorisation
   * context that is no longer current, may write into the cache.
   */
  #assertLive(): void {
    if (this.#disposed) {
      throw new McpQueryError('DISPOSED', 'the McpProvider that started this read is gone');
    }
    if (!isCurrentAuthContext(this.queryClient, this.keys, this.#options.authContext)) {
      throw new McpQueryError(
        'STALE_AUTH_CONTEXT',
        'this read was made under an authorisation context that is no longer current',
      );
    }
  }

  /**
   * The client to read with, once any coverage being set up for the target
   * is acknowledged. If the connection was replaced meanwhile (lost and
   * re-established), the read goes to the new one, never to a closed client.
   */
  async #readyAfter(
    target: { uri: string } | { list: NotifiedList },
    signal: AbortSignal,
  ): Promise<Client> {
    const client = await this.#connection.whenReady(signal);
    await this.#waitForCoverage(target, signal);
    // Cancelled while waiting (unmounted, StrictMode): no read starts, none is reported.
    signal.throwIfAborted();
    if (this.#connection.state.get().client === client) return client;
    // Lost meanwhile: read on the next connection without waiting again (a
    // server whose streams keep dying must still be readable); coverage, if
    // it ever comes, re-reads anyway.
    return this.#connection.whenReady(signal);
  }

  /**
   * Rule 4 without the extra read: if the subscription covering this URI or
   * list is being established right now, read after its acknowledgement
   * instead of before it. Bounded: a slow or declined subscription never
   * holds a read for longer than the ack timeout.
   */
  async #waitForCoverage(
    target: { uri: string } | { list: NotifiedList },
    signal: AbortSignal,
  ): Promise<void> {
    const deadline = Date.now() + (this.#options.ackTimeoutMs ?? defaults.ackTimeoutMs);
    while (!signal.aborted && !this.#disposed) {
      const pending =
        'uri' in target ? this.#uriPending(target.uri) : this.#listPending(target.list);
      const remaining = deadline - Date.now();
      if (!pending || remaining <= 0) return;
      await this.#nextChange(remaining, signal);
    }
  }

  #uriPending(uri: string): boolean {
    if (!this.#uris.has(uri) || this.#coverage.uris.has(uri) || this.#declined.has(uri)) {
      return false;
    }
    return this.#flushPending() || (this.#channel?.isEstablishing(uri) ?? false);
  }

  #listPending(list: NotifiedList): boolean {
    if (this.#coverage.lists.has(list)) return false;
    return this.#flushPending() || (this.#channel?.isEstablishingList(list) ?? false);
  }

  #flushPending(): boolean {
    return this.#desirePending || this.#uris.flushPending || this.#lists.flushPending;
  }

  #nextChange(timeoutMs: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#changeWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done);
      this.#changeWaiters.add(done);
    });
  }

  /** Wake reads waiting for coverage: something they depend on changed. */
  #bump(): void {
    for (const waiter of [...this.#changeWaiters]) waiter();
  }

  // ── connection hooks ─────────────────────────────────────────────────────

  #prepare(client: Client, generation: number): void {
    this.#legacyStream = this.#options.url === undefined ? 'unknown' : 'opening';
    installDispatcher(client, this.#sink(generation));
  }

  #ready(client: Client, generation: number): void {
    if (this.#disposed) return;
    const capabilities = client.getServerCapabilities();
    const events = this.#channelEvents(generation);
    const state = this.#connection.state.get();
    this.#channel =
      client.getProtocolEra() === 'modern'
        ? new ListenChannel(client, events, {
            backoff: { ...defaultBackoff, ...this.#options.reconnect },
            ackTimeoutMs: this.#options.ackTimeoutMs ?? defaults.ackTimeoutMs,
            capabilities,
            narrowAfterMs: this.#narrowAfterMs,
          })
        : new SubscribeChannel(
            client,
            events,
            {
              capabilities,
              requestTimeoutMs: this.#requestTimeoutMs,
              backoff: { ...defaultBackoff, ...this.#options.reconnect },
              narrowAfterMs: this.#narrowAfterMs,
              history: {
                reopenCount: state.reconnects,
                lastCloseReason: state.lastLoss === undefined ? undefined : 'remote',
              },
            },
            this.#legacyStream,
          );
    this.#channel.update(this.#desire());
    this.#stateChanged();
  }

  #lost(): void {
    const channel = this.#channel;
    this.#channel = undefined;
    void channel?.dispose();
    this.#setCoverage(noCoverage);
    this.#declined = new Map();
    if (this.#stream.state !== 'closed') {
      this.#stream = { ...this.#stream, state: this.#disposed ? 'closed' : 'reopening' };
    }
    this.#stateChanged();
  }

  #legacyStreamChanged(generation: number, state: LegacyStreamState): void {
    if (generation !== this.#connection.generation) return;
    this.#legacyStream = state;
    if (this.#channel instanceof SubscribeChannel) this.#channel.setStream(state);
  }

  #channelEvents(generation: number): ChannelEvents {
    const current = () => !this.#disposed && generation === this.#connection.generation;
    return {
      coverage: (next) => {
        if (current()) this.#setCoverage(next);
      },
      declined: (next) => {
        if (!current()) return;
        this.#declined = next;
        this.#diagnostics.changed();
        this.#bump();
      },
      status: (next) => {
        if (!current()) return;
        if (next.state !== this.#stream.state || next.kind !== this.#stream.kind) {
          this.#events.emit(() => ({
            type: 'stream',
            kind: next.kind,
            state: next.state,
            reason: next.state === 'reopening' ? next.lastCloseReason : undefined,
            at: Date.now(),
          }));
        }
        this.#stream = next;
        this.#stateChanged();
      },
    };
  }

  // ── notifications ────────────────────────────────────────────────────────

  #sink(generation: number): NotificationSink {
    const current = () => !this.#disposed && generation === this.#connection.generation;
    return {
      updated: (uri) => {
        if (!current()) return;
        // Exact string equality only (rule 2): a server that notifies a
        // different spelling is a bug the diagnostics must show, not hide.
        const matched = this.#uris.has(uri) || this.#coverage.uris.has(uri);
        this.#events.emit(() => ({ type: 'updated', uri, matched, at: Date.now() }));
        if (matched) {
          this.#diagnostics.notified(uri);
          this.#coordinator.signal(this.keys.resource(uri));
        } else {
          this.#diagnostics.unmatched(uri);
        }
      },
      listChanged: (list) => {
        if (!current()) return;
        this.#diagnostics.listChanged(list);
        this.#events.emit(() => ({ type: 'list_changed', list, at: Date.now() }));
        for (const kind of LIST_KINDS) {
          if (notifiedBy[kind] === list) this.#refreshList(kind);
        }
      },
      malformed: (method, reason) => {
        if (!current()) return;
        this.#diagnostics.malformed(method, reason);
        this.#events.emit(() => ({
          type: 'malformed',
          method: method.slice(0, 200),
          reason,
          at: Date.now(),
        }));
      },
    };
  }

  /**
   * One refetch of a list, coalesced like any read. The resource list is
   * fetched even when nobody shows it, since its diff decides which cached
   * resources to re-read.
   */
  #refreshList(kind: ListKind): void {
    const key = this.keys.list(kind);
    const isResources = kind === 'resources';
    const outcome = this.#coordinator.signal(key, { evenIfInactive: isResources });
    if (outcome === 'absent' && isResources && this.#cachedResourceUris().length > 0) {
      void this.queryClient
        .fetchQuery(listQueryOptions('resources', this.keys.scope))
        .catch(() => {});
    }
  }

  #cachedResourceUris(): string[] {
    const uris: string[] = [];
    for (const query of this.queryClient.getQueryCache().getAll()) {
      const uri = this.keys.uriOf(query.queryKey);
      if (uri !== undefined && query.state.data !== undefined) uris.push(uri);
    }
    return uris;
  }

  #onCacheEvent(event: QueryCacheNotifyEvent): void {
    if (event.type === 'removed') {
      const uri = this.keys.uriOf(event.query.queryKey);
      if (uri !== undefined && !this.#uris.has(uri)) this.#diagnostics.forget(uri);
      return;
    }
    if (event.type !== 'updated' || event.action.type !== 'success') return;
    if (this.keys.isList(event.query.queryKey)) this.#listUpdated(event.query.state.data);
  }

  /**
   * The list changed: re-read the cached resources whose entry changed,
   * disappeared, or appeared (a cached read of a URI that was not listed is
   * at best a not-found error), and nothing else. With no earlier list to
   * compare against, only disappearance is certain.
   */
  #listUpdated(data: unknown): void {
    if (!Array.isArray(data) || data === this.#listData) return;
    this.#listData = data;
    const next = fingerprintList(data as Resource[]);
    const previous = this.#listFingerprint;
    this.#listFingerprint = next;
    const affected = previous
      ? (({ changed, removed, added }) => [...changed, ...removed, ...added])(
          diffLists(previous, next),
        )
      : this.#cachedResourceUris().filter((uri) => !next.has(uri));
    for (const uri of affected) this.#coordinator.signal(this.keys.resource(uri));
  }

  // ── coverage and desire ──────────────────────────────────────────────────

  #setCoverage(next: Coverage): void {
    const previous = this.#coverage;
    const gained = [...next.uris].filter((uri) => !previous.uris.has(uri));
    const lost = [...previous.uris].filter((uri) => !next.uris.has(uri));
    const listsGained = [...next.lists].filter((list) => !previous.lists.has(list));
    const listsLost = [...previous.lists].filter((list) => !next.lists.has(list));
    if (gained.length + lost.length + listsGained.length + listsLost.length === 0) return;
    this.#coverage = next;
    this.#events.emit(() => ({
      type: 'coverage',
      acknowledged: gained,
      lost,
      lists: [...next.lists],
      at: Date.now(),
    }));
    const listKeys = (lists: NotifiedList[]) =>
      LIST_KINDS.filter((kind) => lists.includes(notifiedBy[kind])).map((kind) =>
        this.keys.list(kind),
      );
    this.#coordinator.uncovered([
      ...lost.map((uri) => this.keys.resource(uri)),
      ...listKeys(listsLost),
    ]);
    this.#diagnostics.coverageChanged(next.uris, lost);
    this.#coordinator.covered([
      ...gained.map((uri) => this.keys.resource(uri)),
      ...listKeys(listsGained),
    ]);
    this.#bump();
  }

  #desire() {
    return {
      uris: this.#uris.keys(),
      lists: new Set<NotifiedList>(['resources', ...(this.#lists.keys() as NotifiedList[])]),
    };
  }

  /** URI and list holds of one tick reach the channel as one change (one new stream). */
  #desireChanged(): void {
    if (this.#desirePending) return;
    this.#desirePending = true;
    queueMicrotask(() => {
      this.#desirePending = false;
      if (this.#disposed) return;
      this.#channel?.update(this.#desire());
      this.#diagnostics.changed();
      this.#bump();
    });
  }

  // ── private data ─────────────────────────────────────────────────────────

  /**
   * Make this object's `authContext` the current one for its QueryClient and
   * scope. `cacheScope: 'private'` data (and data without a scope, which the
   * SDK also treats as private) read under another context is removed, and
   * reads still in flight under it will not write. The provider calls this
   * while rendering, before its children render, so they never show it.
   * Idempotent.
   */
  adoptAuthContext(): void {
    adoptAuthContext(this.queryClient, this.keys, this.#options.authContext);
  }

  // ── state for useMcp ─────────────────────────────────────────────────────

  #stateChanged(): void {
    const previous = this.#state.get();
    this.#state.set(this.#computeState(previous));
    const { status } = this.#state.get();
    if (status !== previous.status) {
      this.#events.emit(() => ({ type: 'status', status, at: Date.now() }));
    }
    this.#diagnostics.changed();
    this.#bump();
  }

  #computeState(previous: McpState | undefined): McpState {
    const connection = this.#connection.state.get();
    const stream = this.#stream;
    let status: McpStatus = connection.phase;
    let { attempt, nextRetryAt, error } = connection;
    if (connection.phase === 'ready' && stream.state === 'reopening') {
      status = 'reconnecting';
      attempt = stream.attempt;
      nextRetryAt = stream.nextRetryAt;
      error =
        stream.lastError === undefined
          ? undefined
          : previous?.error?.message === stream.lastError
            ? previous.error
            : new McpQueryError('STREAM_LOST', stream.lastError);
    }
    const next: McpState = {
      client: connection.client,
      status,
      era: connection.era,
      protocolVersion: connection.protocolVersion,
      capabilities: connection.capabilities,
      error,
      attempt,
      nextRetryAt,
      reconnect: this.reconnect,
    };
    if (
      previous &&
      (Object.keys(next) as (keyof McpState)[]).every((key) => previous[key] === next[key])
    ) {
      return previous;
    }
    return next;
  }
}
