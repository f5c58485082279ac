import {
  Client,
  type Implementation,
  type ServerCapabilities,
  StreamableHTTPClientTransport,
  type Transport,
} from '@modelcontextprotocol/client';
import { type BackoffOptions, backoffDelay } from './backoff';
import { McpQueryError } from './errors';
import { observedFetch } from './observedFetch';
import { RetryTimer } from './retryTimer';
import { Store } from './store';
import type { LegacyStreamState } from './subscribeChannel';

export type ProtocolChoice = 'auto' | '2026-07-28' | 'legacy';
export type Era = 'modern' | 'legacy';

/** Where the connection comes from. Only what this package creates, it closes. */
export type ConnectionSource =
  | { url: string | URL; fetch?: typeof fetch }
  | { client: Client }
  | { transport: () => Transport };

export type ConnectionPhase = 'connecting' | 'ready' | 'reconnecting' | 'error' | 'closed';

export interface ConnectionState {
  phase: ConnectionPhase;
  client: Client | undefined;
  era: Era | undefined;
  protocolVersion: string | undefined;
  capabilities: ServerCapabilities | undefined;
  error: Error | undefined;
  /** Consecutive failed attempts in the current outage. */
  attempt: number;
  nextRetryAt: number | undefined;
  /** Bumped for every client; callbacks of an older generation are ignored. */
  generation: number;
  /** Connections re-established after a loss. */
  reconnects: number;
  lastLoss: string | undefined;
}

export interface ConnectionHooks {
  /** A fresh connection, before any request of ours: install the dispatcher here. */
  prepare(client: Client, generation: number): void;
  ready(client: Client, generation: number): void;
  /** The connection of `generation` is over (lost, replaced or disposed). */
  lost(generation: number): void;
  legacyStream(generation: number, state: LegacyStreamState): void;
}

export interface ConnectionOptions {
  source: ConnectionSource;
  clientInfo: Implementation;
  protocol: ProtocolChoice;
  backoff: BackoffOptions;
  requestTimeoutMs: number;
  random?: () => number;
}

const negotiation = (protocol: ProtocolChoice) =>
  protocol === 'auto'
    ? { mode: 'auto' as const }
    : protocol === 'legacy'
      ? { mode: 'legacy' as const }
      : { mode: { pin: protocol } };

/**
 * The MCP connection as an explicit state machine: connecting → ready, and
 * on loss reconnecting (capped backoff with full jitter) → ready again.
 * Every connection gets a generation number; anything that reports back from
 * an older generation is ignored, so a late callback of a closed client can
 * never write into the cache.
 */
export class Connection {
  readonly state: Store<ConnectionState>;
  readonly #options: ConnectionOptions;
  readonly #hooks: ConnectionHooks;
  #owned: Client | undefined;
  #restoreOnclose: (() => void) | undefined;
  readonly #retry = new RetryTimer();
  /**
   * Backoff position. Unlike the displayed `attempt` it survives a connection
   * that came up and died soon after, so a server that accepts and then
   * drops every session is retried ever more slowly, not hammered.
   */
  #backoffAttempt = 0;
  #readyAt = 0;
  #waiters = new Set<() => void>();
  #started = false;

  constructor(options: ConnectionOptions, hooks: ConnectionHooks) {
    this.#options = options;
    this.#hooks = hooks;
    this.state = new Store<ConnectionState>({
      phase: 'connecting',
      client: undefined,
      era: undefined,
      protocolVersion: undefined,
      capabilities: undefined,
      error: undefined,
      attempt: 0,
      nextRetryAt: undefined,
      generation: 0,
      reconnects: 0,
      lastLoss: undefined,
    });
  }

  get generation(): number {
    return this.state.get().generation;
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    for (const waiter of [...this.#waiters]) waiter();
    void this.#connect();
  }

  /** Drop the current connection and connect again now, skipping any backoff wait. */
  reconnect(): void {
    const { phase } = this.state.get();
    if (phase === 'closed') return;
    this.#retry.cancel();
    this.#endGeneration(true);
    this.#backoffAttempt = 0;
    this.state.update({ phase: 'reconnecting', attempt: 0, nextRetryAt: undefined });
    void this.#connect();
  }

  /**
   * Resolves with the ready client; waits through connecting and
   * reconnecting. A connection that is never started (a provider rendered on
   * the server, never mounted) gives up after the request timeout instead of
   * holding the query forever.
   */
  whenReady(signal?: AbortSignal): Promise<Client> {
    return new Promise<Client>((resolve, reject) => {
      let unstarted: ReturnType<typeof setTimeout> | undefined;
      const check = (): boolean => {
        const { phase, client, error } = this.state.get();
        if (phase === 'ready' && client) {
          resolve(client);
          return true;
        }
        if (phase === 'closed' || phase === 'error') {
          reject(
            error ??
              new McpQueryError('NOT_CONNECTED', `the MCP connection is ${phase}`, {
                cause: error,
              }),
          );
          return true;
        }
        if (signal?.aborted) {
          reject(signal.reason);
          return true;
        }
        if (this.#started) clearTimeout(unstarted);
        return false;
      };
      if (check()) return;
      const waiter = () => {
        if (check()) cleanup();
      };
      const cleanup = () => {
        clearTimeout(unstarted);
        this.#waiters.delete(waiter);
        signal?.removeEventListener('abort', waiter);
      };
      if (!this.#started) {
        unstarted = setTimeout(() => {
          cleanup();
          reject(
            new McpQueryError(
              'NOT_STARTED',
              'the MCP connection was never started (is the McpProvider mounted, or rendered on the server?)',
            ),
          );
        }, this.#options.requestTimeoutMs);
      }
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', waiter);
    });
  }

  async dispose(): Promise<void> {
    if (this.state.get().phase === 'closed') return;
    this.#retry.cancel();
    this.#endGeneration(true);
    this.#set({ phase: 'closed', client: undefined, nextRetryAt: undefined });
  }

  #set(patch: Partial<ConnectionState>): void {
    this.state.update(patch);
    for (const waiter of [...this.#waiters]) waiter();
  }

  /**
   * Close what this generation owns and tell the hooks it is over. Unless the
   * server already forgot it, a 2025 session is also ended on the server
   * (DELETE), so it does not keep our subscriptions after we are gone.
   */
  #endGeneration(endSession: boolean): void {
    const { generation } = this.state.get();
    this.state.update({ generation: generation + 1, client: undefined });
    this.#hooks.lost(generation);
    this.#restoreOnclose?.();
    this.#restoreOnclose = undefined;
    const owned = this.#owned;
    this.#owned = undefined;
    if (!owned) return;
    const transport = owned.transport as { terminateSession?: () => Promise<void> } | undefined;
    const ending =
      endSession && owned.getProtocolEra() === 'legacy' && transport?.terminateSession
        ? transport.terminateSession().catch(() => {})
        : Promise.resolve();
    void ending.then(() => owned.close()).catch(() => {});
  }

  async #connect(): Promise<void> {
    const generation = this.state.get().generation;
    const source = this.#options.source;
    const current = () =>
      this.state.get().generation === generation && this.state.get().phase !== 'closed';
    try {
      let client: Client;
      if ('client' in source) {
        client = source.client;
        if (client.getProtocolEra() === undefined) {
          throw new McpQueryError(
            'NOT_CONNECTED',
            'the client passed to McpProvider is not connected: call client.connect(transport) first',
          );
        }
        this.#hooks.prepare(client, generation);
      } else {
        client = new Client(this.#options.clientInfo, {
          versionNegotiation: negotiation(this.#options.protocol),
        });
        this.#owned = client;
        this.#hooks.prepare(client, generation);
        await client.connect(this.#transport(source, generation), {
          timeout: this.#options.requestTimeoutMs,
        });
      }
      if (!current()) return;
      // Chain, don't replace: a client passed in may carry the host's own handler.
      const previous = client.onclose;
      const onclose = () => {
        previous?.();
        if (current()) this.#lost('the transport closed', false);
      };
      client.onclose = onclose;
      this.#restoreOnclose = () => {
        if (client.onclose === onclose) client.onclose = previous;
      };
      const era = client.getProtocolEra();
      this.#readyAt = Date.now();
      this.#set({
        phase: 'ready',
        client,
        era,
        protocolVersion: client.getNegotiatedProtocolVersion(),
        capabilities: client.getServerCapabilities(),
        error: undefined,
        attempt: 0,
        nextRetryAt: undefined,
      });
      this.#hooks.ready(client, generation);
    } catch (error) {
      if (!current()) return;
      const failure = error instanceof Error ? error : new Error(String(error));
      if ('client' in source) {
        this.#set({ phase: 'error', error: failure });
        return;
      }
      this.#endGeneration(false);
      this.#scheduleRetry(failure);
    }
  }

  #transport(source: Exclude<ConnectionSource, { client: Client }>, generation: number): Transport {
    if ('transport' in source) return source.transport();
    const current = () => this.state.get().generation === generation;
    return new StreamableHTTPClientTransport(new URL(source.url), {
      fetch: observedFetch(
        {
          stream: (state) => {
            if (!current()) return;
            this.#hooks.legacyStream(generation, state);
            if (state === 'closed' && this.state.get().phase === 'ready') {
              // The session may well be alive (a proxy cut the stream): end it,
              // or it keeps our subscriptions and receives for nobody.
              this.#lost('the SSE stream ended', true);
            }
          },
          sessionLost: () => {
            if (current() && this.state.get().phase === 'ready') {
              this.#lost('the server no longer knows the session', false);
            }
          },
        },
        source.fetch,
      ),
      // The transport would quietly re-open the SSE stream in the same
      // session; notifications sent during the gap would be lost without
      // anyone knowing. We reconnect ourselves instead, and re-read.
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1000,
        maxReconnectionDelay: 30_000,
        reconnectionDelayGrowFactor: 1.5,
      },
    });
  }

  #lost(reason: string, sessionMayLive: boolean): void {
    if (Date.now() - this.#readyAt >= this.#options.backoff.maxDelayMs) this.#backoffAttempt = 0;
    const source = this.#options.source;
    const reconnects = this.state.get().reconnects;
    this.#endGeneration(sessionMayLive);
    if ('client' in source) {
      this.#set({
        phase: 'error',
        lastLoss: reason,
        error: new McpQueryError(
          'CONNECTION_LOST',
          `${reason}; the client was passed in, so reconnect it and call reconnect()`,
        ),
      });
      return;
    }
    this.state.update({ lastLoss: reason, reconnects: reconnects + 1 });
    this.#scheduleRetry(new McpQueryError('CONNECTION_LOST', reason));
  }

  #scheduleRetry(error: Error): void {
    const { attempt } = this.state.get();
    const delay = backoffDelay(this.#backoffAttempt, this.#options.backoff, this.#options.random);
    this.#backoffAttempt += 1;
    const offline = this.#retry.schedule(delay, () => {
      this.state.update({ nextRetryAt: undefined });
      void this.#connect();
    });
    this.#set({
      phase: 'reconnecting',
      error,
      attempt: Math.max(attempt + 1, this.#backoffAttempt),
      // Offline: no time is set; the attempt runs when the network returns.
      nextRetryAt: offline ? undefined : Date.now() + delay,
    });
  }
}
