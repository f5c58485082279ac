import type {
  CallToolResult,
  Client,
  LoggingLevel,
  ReadResourceResult,
} from '@modelcontextprotocol/client';
import { hashKey, type QueryClient, type QueryKey } from '@tanstack/query-core';
import type { CacheBridge } from './cacheBridge';
import type { Clock } from './clock';
import { createConnection } from './connect';
import type { Connection } from './connection';
import {
  errorMessage,
  identityChanged,
  invalidUriError,
  isValidUri,
  McpQueryError,
} from './errors';
import type { Emit } from './events';
import type { Desire, InterestRegistry } from './interest';
import type { McpKeys } from './keys';
import { whileAlive } from './lifetime';
import { fetchList, type ListKind, type NotifiedList, notifiedBy } from './lists';
import { DEFAULTS, type McpCacheSyncOptions } from './options';
import type { PartitionIdentity } from './partition';
import { checkContents } from './readResult';
import {
  type CallRunner,
  callRunner,
  logMeta,
  type RequestHandler,
  requestHandler,
} from './requests';
import type { Session } from './session';
import { anything } from './shapes';
import { Turns } from './turns';
import type { CallToolVariables, LocalUpstreamControl, McpAction } from './upstream';

/** How long a first load nobody observed keeps its URI held after the read. */
const FIRST_LOAD_GRACE_MS = 5000;
/** Reads and list fetches in flight at once per connection (the rest wait their turn). */
export const REQUESTS_AT_ONCE = 64;

export interface LocalUpstreamParts {
  queryClient: QueryClient;
  keys: McpKeys;
  interest: InterestRegistry;
  bridge: CacheBridge;
  emit: Emit;
  clock: Clock;
  /** Called when something needs the connection: starts it, unless a provider's mount does. */
  demand(): void;
  /** Who signed in now: a new object whenever that changes. */
  identity(): PartitionIdentity;
}

type Target = { uri: string } | { list: NotifiedList };

/**
 * This tab's own connection as an upstream: reads and list fetches (the
 * query functions), tool calls and coverage, on the ready session. A read
 * waits for the coverage being set up for its target (one read, not two:
 * rule 4), bypasses the SDK's own cache (rule 7), checks what comes back
 * (rule 8), and is fenced by its signal: the query's own, combined with the
 * serving McpCacheSync's (routing.ts).
 */
export class LocalUpstream implements LocalUpstreamControl {
  readonly #parts: LocalUpstreamParts;
  readonly #connection: Connection<Session>;
  readonly #timeoutMs: number;
  readonly #toolTimeouts: { timeoutMs: number; maxTotalTimeoutMs: number };
  /** The log level asked for (`useServerLog`), if any. */
  #logLevel: LoggingLevel | undefined;
  readonly #turns = new Turns(REQUESTS_AT_ONCE);
  /** What fingerprints a read's contents for its event, once the diagnostics installed it. */
  #digest: ((contents: unknown) => string) | undefined;

  constructor(options: McpCacheSyncOptions, parts: LocalUpstreamParts) {
    this.#parts = parts;
    this.#timeoutMs = options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
    this.#toolTimeouts = {
      timeoutMs: options.toolTimeoutMs ?? DEFAULTS.toolTimeoutMs,
      maxTotalTimeoutMs: options.toolMaxTotalTimeoutMs ?? DEFAULTS.toolMaxTotalTimeoutMs,
    };
    this.#connection = createConnection(options, { ...parts, logLevel: () => this.#logLevel });
  }

  /** From now on, each read's success event carries `digest(contents)`. */
  digestReads(digest: (contents: unknown) => string): void {
    this.#digest = digest;
  }

  /** The connection itself, for the McpCacheSync's state, reconnect and sign-in. */
  get connection(): Connection<Session> {
    return this.#connection;
  }

  query(key: QueryKey, signal: AbortSignal): Promise<unknown> {
    const { keys } = this.#parts;
    const list = keys.listOf(key);
    if (list) return this.#list(list, signal);
    if (isResourceKey(keys, key)) return this.#read(key[key.length - 1], key, signal);
    const request = keys.requestOf(key);
    const handler = requestHandler(request?.kind);
    if (request && handler) return this.#ask(handler, request.parts, key, signal);
    return Promise.reject(
      new McpQueryError('UNKNOWN_KEY', `not an MCP query key: ${JSON.stringify(key)}`),
    );
  }

  callTool(variables: CallToolVariables): Promise<CallToolResult> {
    // Registered by every way a call is made (tools.ts, tab sharing): see defineCalls.
    const run = callRunner() as CallRunner;
    return this.#send(variables.signal, (client) =>
      run(client, variables, this.#toolTimeouts, logMeta(client, this.#logLevel)),
    );
  }

  request(method: McpAction, params: Record<string, unknown>, signal?: AbortSignal) {
    return this.#send(signal, (client) =>
      client.request({ method, params }, anything, {
        timeout: this.#timeoutMs,
        ...(signal && { signal }),
      }),
    );
  }

  interest(desire: Desire): void {
    this.#connection.session?.update(desire);
  }

  setLogLevel(level: LoggingLevel | undefined): void {
    this.#logLevel = level;
    this.#connection.session?.logAt(level);
  }

  isCovered(uri: string): boolean {
    return this.#connection.session?.isCovered(uri) ?? false;
  }

  isListCovered(list: NotifiedList): boolean {
    return this.#connection.session?.isListCovered(list) ?? false;
  }

  async client(signal?: AbortSignal): Promise<Client> {
    return (await this.#ready(signal)).client;
  }

  readyClient(): Client | undefined {
    return this.#connection.session?.client;
  }

  start(): void {
    this.#connection.start();
  }

  stop(): Promise<void> {
    return this.#connection.stop();
  }

  dispose(): Promise<void> {
    return this.#connection.dispose();
  }

  async #read(uri: unknown, key: QueryKey, signal: AbortSignal): Promise<ReadResourceResult> {
    if (!isValidUri(uri)) throw invalidUriError(uri);
    const release = this.#holdForFirstLoad(uri, key);
    try {
      return await this.#request({ uri }, signal, {
        event: { type: 'read', uri },
        // TanStack Query is the only cache: the SDK's own TTL cache could
        // answer a post-notification read with the content it replaces.
        run: (client) =>
          client.readResource(
            { uri, ...logMeta(client, this.#logLevel) },
            { cacheMode: 'bypass', signal, timeout: this.#timeoutMs },
          ),
        check: (result) => checkContents(uri, result),
        success: (result) => ({ digest: this.#digest?.(result.contents) }),
      });
    } finally {
      if (release) {
        const timer = setTimeout(release, FIRST_LOAD_GRACE_MS);
        (timer as { unref?: () => void }).unref?.();
      }
    }
  }

  /**
   * A prompt, a completion, a task: its registered handler runs it. One kept fresh by a list
   * (a prompt) waits for that list's coverage like a list does (rule 4).
   */
  async #ask(
    handler: RequestHandler,
    parts: readonly unknown[],
    key: QueryKey,
    signal: AbortSignal,
  ) {
    const { list } = handler;
    const session = list ? await this.#covered({ list }, signal) : await this.#ready(signal);
    const { client } = session;
    try {
      const result = await handler.run(client, parts, {
        signal,
        timeout: this.#timeoutMs,
        meta: logMeta(client, this.#logLevel),
        cached: this.#parts.queryClient.getQueryData(key),
      });
      signal.throwIfAborted();
      return result;
    } catch (error) {
      if (!signal.aborted) session.failed(error);
      throw error;
    }
  }

  async #list(kind: ListKind, signal: AbortSignal): Promise<unknown[]> {
    const page = await this.#request({ list: notifiedBy[kind] }, signal, {
      event: { type: 'list', list: kind },
      run: (client) => fetchList(client, kind, { signal, timeout: this.#timeoutMs }),
      success: (fetched) => ({ count: fetched.items.length }),
    });
    this.#parts.bridge.listFetched(kind, page.ttlMs);
    return page.items;
  }

  /**
   * One request for a query, on the session that covers (or will not
   * cover) `target`, reported as `event`s of each phase (a success with what
   * `success` says of the result). Its signal is the query's and the
   * serving McpCacheSync's: what comes back after it was aborted (replaced,
   * disposed, another identity) is not ours to write, and a cancelled
   * request reports nothing.
   */
  async #request<T>(
    target: Target,
    signal: AbortSignal,
    request: {
      event: { type: 'read'; uri: string } | { type: 'list'; list: ListKind };
      run(client: Client): Promise<T>;
      check?(result: T): void;
      success(result: T): { digest?: string; count?: number };
    },
  ): Promise<T> {
    const { emit } = this.#parts;
    let session = await this.#covered(target, signal);
    const turn = this.#turns.take(signal, this.#timeoutMs);
    if (turn) await turn;
    try {
      // A connection that replaced this one while the request waited takes it (as in #covered).
      session = this.#connection.session ?? session;
      const { event } = request;
      const failed = whileAlive(signal, (error: unknown) => {
        emit({ ...event, phase: 'error', error: errorMessage(error) });
        session.failed(error);
      });
      emit({ ...event, phase: 'start' });
      try {
        const result = await request.run(session.client);
        request.check?.(result);
        signal.throwIfAborted();
        emit({ ...event, phase: 'success', ...request.success(result) });
        return result;
      } catch (error) {
        failed(error);
        throw error;
      }
    } finally {
      this.#turns.giveBack();
    }
  }

  /**
   * The ready session, waiting (bounded) through connecting. A provider that
   * has not mounted yet is waited for, except while rendering on the server,
   * where nothing mounts.
   */
  #ready(signal: AbortSignal | undefined): Promise<Session> {
    this.#parts.demand();
    const connection = this.#connection;
    if (connection.session) return Promise.resolve(connection.session);
    if (!connection.started && typeof document === 'undefined') {
      return Promise.reject(
        new McpQueryError(
          'NOT_STARTED',
          'McpProvider does not connect while rendering on the server',
        ),
      );
    }
    return connection.whenReady(signal, this.#timeoutMs);
  }

  /**
   * A call or task request made now, which runs as whoever is signed in now or not at all: when
   * someone else (or nobody) signed in while it waited for the session, it fails. The session
   * learns of its failure.
   */
  async #send<T>(signal: AbortSignal | undefined, run: (client: Client) => Promise<T>): Promise<T> {
    const asked = this.#parts.identity();
    const session = await this.#ready(signal);
    if (this.#parts.identity() !== asked) throw identityChanged();
    try {
      return await run(session.client);
    } catch (error) {
      session.failed(error);
      throw error;
    }
  }

  /**
   * The session to read on, once the coverage being set up for `target` is
   * acknowledged. If the connection was replaced meanwhile, the read goes to
   * the new one without waiting again (a server whose streams keep dying
   * must still be readable; coverage, if it ever comes, re-reads anyway).
   */
  async #covered(target: Target, signal: AbortSignal): Promise<Session> {
    const session = await this.#ready(signal);
    const waiting = session.whenCovered(target, signal);
    if (!waiting) return session;
    await waiting;
    // Cancelled while waiting (unmounted, StrictMode): no read starts, none is reported.
    signal.throwIfAborted();
    return this.#connection.session ?? this.#ready(signal);
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
    const { queryClient, interest } = this.#parts;
    const query = queryClient.getQueryCache().get(hashKey(key));
    if (!query || query.state.data !== undefined || query.observers.length > 0) return undefined;
    if (interest.wants(uri)) return undefined;
    return interest.holdUri(uri);
  }
}

/** A resource key of this scope, whatever its URI (an invalid one is an error with no request, rule 8). */
function isResourceKey(keys: McpKeys, key: QueryKey): boolean {
  const prefix = keys.resourcePrefix();
  return key.length === prefix.length + 1 && prefix.every((part, i) => key[i] === part);
}
