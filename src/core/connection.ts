import type { Client } from '@modelcontextprotocol/client';
import { type BackoffOptions, backoffDelay } from './backoff';
import { type ClientSource, watchClose } from './clientSource';
import type { Clock } from './clock';
import { McpQueryError } from './errors';
import type { ConnectionSnapshot, Emit } from './events';
import { classifyFailure, connectionLost, notConnected } from './failure';
import type { TransportObserver } from './httpTransport';
import { whileAlive, within } from './lifetime';
import { RetryTimer } from './retryTimer';
import type { SessionControl } from './session';
import { INITIAL_CONNECTION } from './state';
import { settleWithin, Waiters } from './waiters';

/** What the connection needs of a session: open before the first request, disposed after. */
export interface SessionLike {
  readonly client: Client;
  /** Aborted once the session is disposed. */
  readonly signal: AbortSignal;
  readonly transportObserver: TransportObserver;
  ready(): void;
  dispose(shutdown: boolean): Promise<void>;
}

export interface ConnectionOptions<S extends SessionLike> {
  source: ClientSource;
  /** What to call the server in messages (its URL, or how the client was given). */
  label: string;
  backoff: BackoffOptions;
  requestTimeoutMs: number;
  /** A session for a fresh client, before its first request; it reports (while it lives) to `control`. */
  open(client: Client, observed: boolean, control: SessionControl): S;
  emit: Emit;
  clock: Clock;
}

/** How long `dispose()` lets a handshake in flight finish before cutting it off. */
const DISPOSE_GRACE_MS = 2000;
/**
 * Attempts that fail the same permanent way (a 404, an HTML page…) before
 * the connection gives up with `error`: one more than one, in case a deploy
 * was swapping the endpoint.
 */
const PERMANENT_ATTEMPTS = 2;

/**
 * Connects, and on loss connects again with capped, jittered backoff:
 * connecting → ready, and reconnecting → ready after a loss. Each connected
 * client lives in a session the connection opens and disposes; whatever a
 * disposed session's client still says reaches nothing. Only one attempt
 * runs at a time, and `dispose()` waits for it, so a handshake still in
 * flight when the provider goes away is ended on the server, not abandoned.
 */
export class Connection<S extends SessionLike> {
  readonly #options: ConnectionOptions<S>;
  #state: ConnectionSnapshot = INITIAL_CONNECTION;
  /** The ready session, if any. */
  #session: S | undefined;
  /** The attempt in flight, if any, and its client once made. */
  #attempt: Promise<void> | undefined;
  #connecting: Client | undefined;
  /** Ends at `dispose()`. */
  readonly #life = new AbortController();
  /**
   * From `start()` to `stop()`: only an attempt made in the current run may
   * become the session.
   */
  #run: AbortController | undefined;
  readonly #retry = new RetryTimer(this.#life.signal);
  readonly #waiters = new Waiters();
  #restoreOnclose: (() => void) | undefined;
  /**
   * Backoff position. Unlike the displayed `attempt` it survives a connection
   * that came up and died soon after, so a server that accepts and then
   * drops every session is retried ever more slowly, not hammered.
   */
  #backoffAttempt = 0;
  /** Consecutive attempts that failed in a way retrying does not fix. */
  #permanentFailures = 0;
  #readyAt = 0;
  #disposed: Promise<void> | undefined;

  constructor(options: ConnectionOptions<S>) {
    this.#options = options;
  }

  get state(): ConnectionSnapshot {
    return this.#state;
  }

  /** The session of the connected client, when ready. */
  get session(): S | undefined {
    return this.#session;
  }

  get started(): boolean {
    return this.#run !== undefined;
  }

  start(): void {
    if (this.#run || this.#life.signal.aborted) return;
    this.#run = within(this.#life.signal);
    this.#emitState();
    this.#waiters.recheck();
    this.#connect();
  }

  /**
   * Let go of the connection but stay startable: a tab handing the
   * connection over to another tab (tab sharing) keeps its cache and state.
   */
  stop(): Promise<void> {
    if (!this.#run) return Promise.resolve();
    this.#run.abort();
    this.#run = undefined;
    this.#retry.cancel();
    this.#backoffAttempt = 0;
    this.#permanentFailures = 0;
    const ending = this.#end(true);
    this.#set({ phase: 'connecting', error: undefined, attempt: 0, nextRetryAt: undefined });
    return ending;
  }

  /** Drop the current connection and connect again now, skipping any backoff wait. */
  reconnect(): void {
    if (!this.#run) return;
    this.#retry.cancel();
    this.#backoffAttempt = 0;
    this.#permanentFailures = 0;
    this.#end(true);
    this.#set({ phase: 'reconnecting', attempt: 0, nextRetryAt: undefined });
    if (!this.#attempt) this.#connect();
  }

  /**
   * The ready session; waits through connecting and reconnecting, at most
   * `timeoutMs`. Rejects at once when the connection is in `error`,
   * `unauthorized` or `closed`, and with the connection's last error when
   * the wait runs out, so a read never waits for a server that is not coming.
   */
  async whenReady(signal: AbortSignal | undefined, timeoutMs: number): Promise<S> {
    const settled = () => this.#session !== undefined || this.#final() || signal?.aborted === true;
    if (!settled()) await this.#waiters.wait(settled, { timeoutMs, signal });
    signal?.throwIfAborted();
    if (this.#session) return this.#session;
    throw notConnected(this.#state, this.started);
  }

  /**
   * Close what this connection opened and stop. Resolves once the client is
   * closed and a 2025 session ended on the server, including one whose
   * handshake was still in flight.
   */
  dispose(): Promise<void> {
    this.#disposed ??= this.#dispose();
    return this.#disposed;
  }

  async #dispose(): Promise<void> {
    this.#life.abort();
    this.#run = undefined;
    const ending = this.#end(true, true);
    this.#set({ phase: 'closed', nextRetryAt: undefined });
    // A handshake in flight finishes, so the session it creates can be ended
    // on the server; one that hangs is cut off after a grace period.
    const attempt = this.#attempt;
    const settled = attempt
      ? settleWithin(
          attempt,
          DISPOSE_GRACE_MS,
          () => void this.#connecting?.close().catch(() => {}),
        )
      : undefined;
    await Promise.all([settled, ending]);
  }

  /** The ready session can no longer deliver: replace it (only it can say so, while alive). */
  #lost(reason: string, endSession: boolean): void {
    const { clock, backoff } = this.#options;
    if (clock.now() - this.#readyAt >= backoff.maxDelayMs) this.#backoffAttempt = 0;
    this.#end(endSession);
    const { reconnectable } = this.#options.source;
    const error = connectionLost(reason, reconnectable);
    if (!reconnectable) {
      this.#set({ phase: 'error', lastLoss: reason, error });
      return;
    }
    this.#set({ lastLoss: reason, reconnects: this.#state.reconnects + 1 });
    this.#scheduleRetry(error);
  }

  /** Signing in failed: `error` if it cannot work as configured, else still unauthorized. */
  signInFailed(error: unknown): void {
    const failure = classifyFailure(error, this.#options.label);
    this.#set({
      phase: failure.kind === 'permanent' ? 'error' : 'unauthorized',
      error: failure.error,
      nextRetryAt: undefined,
    });
  }

  /**
   * A request on the ready session failed: if it was refused for want of
   * credentials (the token expired and could not be refreshed), wait for
   * the user.
   */
  #requestFailed(error: unknown): void {
    const failure = classifyFailure(error, this.#options.label);
    if (failure.kind !== 'unauthorized') return;
    this.#end(false);
    this.#set({ phase: 'unauthorized', error: failure.error, nextRetryAt: undefined });
  }

  #final(): boolean {
    const { phase } = this.#state;
    return phase === 'error' || phase === 'closed' || phase === 'unauthorized';
  }

  #connect(): void {
    const run = this.#run?.signal;
    if (!run) return;
    const attempt = this.#try(run).finally(() => {
      if (this.#attempt === attempt) this.#attempt = undefined;
    });
    this.#attempt = attempt;
  }

  /** One attempt, made in `run`: it becomes the session only if `run` is still current. */
  async #try(run: AbortSignal): Promise<void> {
    const { source, open, requestTimeoutMs } = this.#options;
    const control: SessionControl = {
      lost: (reason, end) => this.#lost(reason, end),
      failed: (error) => this.#requestFailed(error),
    };
    let session: S | undefined;
    let client: Client | undefined;
    let failure: { error: unknown } | undefined;
    try {
      client = await source.connect((fresh, observed) => {
        this.#connecting = fresh;
        session = open(fresh, observed, control);
        return session.transportObserver;
      }, requestTimeoutMs);
    } catch (error) {
      failure = { error };
    }
    this.#connecting = undefined;
    // Stopped or disposed meanwhile: what the attempt made is closed, not used.
    if (run.aborted) {
      await Promise.all([session?.dispose(true), client && source.release(client, true)]);
      return;
    }
    if (failure) {
      this.#failed(failure.error);
      await session?.dispose(false);
      return;
    }
    const ready = session as S;
    const connected = client as Client;
    this.#restoreOnclose = watchClose(
      connected,
      whileAlive(ready.signal, () => this.#lost('the transport closed', false)),
    );
    this.#session = ready;
    this.#readyAt = this.#options.clock.now();
    this.#permanentFailures = 0;
    this.#set({
      phase: 'ready',
      era: connected.getProtocolEra(),
      protocolVersion: connected.getNegotiatedProtocolVersion(),
      capabilities: connected.getServerCapabilities(),
      error: undefined,
      attempt: 0,
      nextRetryAt: undefined,
    });
    ready.ready();
  }

  /**
   * Rule 13: a failure ends in a state that says what to do. Credentials
   * wanted → `unauthorized` (until `authorize()` or `reconnect()`); not an
   * endpoint we can talk to → `error` after PERMANENT_ATTEMPTS; anything
   * else → `reconnecting` with backoff.
   */
  #failed(error: unknown): void {
    const { kind, error: failure } = classifyFailure(error, this.#options.label);
    if (kind === 'unauthorized') {
      this.#set({ phase: 'unauthorized', error: failure, nextRetryAt: undefined });
      return;
    }
    if (kind === 'permanent') this.#permanentFailures += 1;
    const invalidOptions = error instanceof McpQueryError && error.code === 'INVALID_OPTIONS';
    if (
      !this.#options.source.reconnectable ||
      invalidOptions ||
      this.#permanentFailures >= PERMANENT_ATTEMPTS
    ) {
      this.#set({
        phase: 'error',
        error: invalidOptions ? (error as Error) : failure,
        nextRetryAt: undefined,
      });
      return;
    }
    this.#scheduleRetry(failure);
  }

  /** End the ready session, if any: dispose it, then let its client go. */
  #end(endSession: boolean, shutdown = false): Promise<void> {
    const session = this.#session;
    this.#session = undefined;
    this.#restoreOnclose?.();
    this.#restoreOnclose = undefined;
    if (!session) return Promise.resolve();
    return Promise.all([
      session.dispose(shutdown),
      this.#options.source.release(session.client, endSession),
    ]).then(() => {});
  }

  #scheduleRetry(error: Error): void {
    const { clock, backoff } = this.#options;
    const delay = backoffDelay(this.#backoffAttempt, backoff, clock.random);
    this.#backoffAttempt += 1;
    const offline = this.#retry.schedule(delay, () => {
      this.#set({ nextRetryAt: undefined });
      this.#connect();
    });
    this.#set({
      phase: 'reconnecting',
      error,
      attempt: Math.max(this.#state.attempt + 1, this.#backoffAttempt),
      // Offline: no time is set; the attempt runs when the network returns.
      nextRetryAt: offline ? undefined : clock.now() + delay,
    });
  }

  #set(patch: Partial<ConnectionSnapshot>): void {
    this.#state = { ...this.#state, ...patch };
    this.#emitState();
    this.#waiters.recheck();
  }

  #emitState(): void {
    this.#options.emit({ type: 'connection', state: this.#state });
  }
}
