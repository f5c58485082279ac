import type { Client, ServerCapabilities } from '@modelcontextprotocol/client';
import { initialStatus } from './channel';
import { type Clock, systemClock } from './clock';
import { McpQueryError } from './errors';
import type {
  ConnectionPhase,
  ConnectionSnapshot,
  Emit,
  Era,
  McpEvent,
  StreamStatus,
} from './events';

export type McpStatus = ConnectionPhase;

/**
 * What `useMcp()` returns: the connection as the host sees it. `client` is
 * the SDK client of the current connection, to call tools on; `status` also
 * reads `reconnecting` while the change stream is being re-established.
 */
export interface McpState {
  client: Client | undefined;
  status: McpStatus;
  era: Era | undefined;
  protocolVersion: string | undefined;
  capabilities: ServerCapabilities | undefined;
  error: Error | undefined;
  /** Consecutive failed attempts in the current outage. */
  attempt: number;
  nextRetryAt: number | undefined;
  /** Drop the connection and streams and establish them again now. */
  reconnect: () => void;
  /** Sign in (`status: 'unauthorized'`); the connection resumes once a token arrives. */
  authorize: () => void;
}

export const INITIAL_CONNECTION: ConnectionSnapshot = {
  phase: 'connecting',
  era: undefined,
  protocolVersion: undefined,
  capabilities: undefined,
  error: undefined,
  attempt: 0,
  nextRetryAt: undefined,
  reconnects: 0,
  lastLoss: undefined,
};

/** The one status rule: a ready connection whose change stream is being re-established is reconnecting. */
export function deriveStatus(connection: ConnectionSnapshot, stream: StreamStatus): McpStatus {
  return connection.phase === 'ready' && stream.state === 'reopening'
    ? 'reconnecting'
    : connection.phase;
}

/**
 * `useMcp()`'s state, folded from the event stream: the latest connection
 * and stream status. It emits a `status` event whenever the status it shows
 * changes.
 */
export class StateStore {
  readonly #client: () => Client | undefined;
  readonly #reconnect: () => void;
  readonly #authorize: () => void;
  readonly #emit: Emit;
  readonly #listeners = new Set<() => void>();
  #connection = INITIAL_CONNECTION;
  #stream: StreamStatus;
  #state: McpState;

  constructor(options: {
    client: () => Client | undefined;
    reconnect: () => void;
    authorize: () => void;
    emit: Emit;
    clock?: Clock;
  }) {
    this.#stream = initialStatus('none', (options.clock ?? systemClock).now());
    this.#client = options.client;
    this.#reconnect = options.reconnect;
    this.#authorize = options.authorize;
    this.#emit = options.emit;
    this.#state = this.#compute(undefined);
  }

  get = (): McpState => this.#state;

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  };

  apply = (event: McpEvent): void => {
    if (event.type === 'connection') this.#connection = event.state;
    else if (event.type === 'stream') this.#stream = event.status;
    else return;
    const previous = this.#state;
    const next = this.#compute(previous);
    if (next === previous) return;
    this.#state = next;
    if (next.status !== previous.status) this.#emit({ type: 'status', status: next.status });
    for (const listener of [...this.#listeners]) listener();
  };

  #compute(previous: McpState | undefined): McpState {
    const connection = this.#connection;
    const stream = this.#stream;
    const status = deriveStatus(connection, stream);
    let { attempt, nextRetryAt, error } = connection;
    if (status === 'reconnecting' && connection.phase === 'ready') {
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
      client: connection.phase === 'ready' ? this.#client() : undefined,
      status,
      era: connection.era,
      protocolVersion: connection.protocolVersion,
      capabilities: connection.capabilities,
      error,
      attempt,
      nextRetryAt,
      reconnect: this.#reconnect,
      authorize: this.#authorize,
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
