import { McpQueryError } from '../core/errors';
import { TIMER_MAX_MS } from '../core/timerMs';
import type { CallToolVariables, McpAction, Upstream } from '../core/upstream';
import type { TabMessage } from './protocol';

/** A follower's request on its way to the leader (requests.ts): what it is, how its wait ends. */

export type Request = Extract<TabMessage, { type: 'read' | 'call' }>;

export interface Pending {
  /** As sent: its `id` is new each time it is sent to another leader. */
  request: Request;
  /**
   * The leader it was sent to (undefined: not sent to the current one yet); kept when refused as
   * one too many, since the refusal may be another script's and it may run there all the same.
   */
  sentTo: string | undefined;
  /** A call, as given (to run it elsewhere if it never left this tab). */
  call: CallToolVariables | undefined;
  /** A task request (`Upstream.request`), as given, likewise. */
  action: { method: McpAction; params: Record<string, unknown> } | undefined;
  /** What cancels it (a read's query signal, a call's own). */
  signal: AbortSignal | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Stop the timeout and the abort listener. */
  done(): void;
  /** The leader works on it (it was just sent, says it still runs it, sent progress): `#patience`. */
  heard(): void;
}

/** Runs `run` once `ms` have passed, however long that is (chained timers); returns the stop. */
export function after(ms: number, run: () => void): () => void {
  let timer: ReturnType<typeof setTimeout>;
  const arm = (left: number) => {
    const next = left > TIMER_MAX_MS ? () => arm(left - TIMER_MAX_MS) : run;
    timer = setTimeout(next, Math.min(left, TIMER_MAX_MS));
  };
  arm(ms);
  return () => clearTimeout(timer);
}

/** A call sent to a leader that went away: it may have run there. */
export function lostCall(): McpQueryError {
  return new McpQueryError(
    'CONNECTION_LOST',
    'the tab holding the connection went away during the call; it may or may not have run',
  );
}

/**
 * Where a request goes when this tab leads or leaves (Requests.handOver): a read runs again
 * through `to`, or fails; a call or task request never sent runs through `to` unless `unsent`
 * says why it may not (or, without `to`, fails as not run); one sent may have run, and fails.
 */
export function handOverOne(
  pending: Pending,
  to: Pick<Upstream, 'query' | 'callTool' | 'request'> | undefined,
  why: string,
  unsent: (() => Error) | undefined,
): void {
  const { request, call, action, signal, resolve, reject } = pending;
  if (request.type === 'read') {
    if (to && signal) to.query(request.key, signal).then(resolve, reject);
    else reject(new McpQueryError('SUPERSEDED', why));
  } else if (pending.sentTo !== undefined) reject(lostCall());
  else if (!to)
    reject(new McpQueryError('NOT_CONNECTED', `${why}; the call was not sent: it was not run`));
  else if (unsent) reject(unsent());
  else if (call) to.callTool(call).then(resolve, reject);
  else if (action) to.request(action.method, action.params, signal).then(resolve, reject);
  else reject(lostCall());
}
