import type { McpSubscription, ServerCapabilities } from '@modelcontextprotocol/client';
import type { BackoffOptions } from './backoff';
import type { Clock } from './clock';
import type { AcknowledgedStream, Plan } from './listenPlan';
import type { Retention } from './retention';

/** The shapes of the 2026-07-28 channel (`listenChannel.ts`); types only. */
export interface ListenChannelOptions {
  /** The channel's lifetime (its session's): once aborted, nothing it started reports. */
  signal: AbortSignal;
  backoff: BackoffOptions;
  /** Bound on the wait for `notifications/subscriptions/acknowledged`. */
  ackTimeoutMs: number;
  capabilities: ServerCapabilities | undefined;
  /** Which released URIs stay in the filter (shared across connections: it learns the app). */
  retention: Retention;
  /** Released URIs still in a filter go once nothing has changed for this long. */
  releaseAfterMs: number;
  clock: Clock;
}

export interface Stream extends AcknowledgedStream {
  subscription: McpSubscription;
  openedAt: number;
}

/** A request; a probe only tests whether the server refuses what it asks (`listenRefusals.ts`). */
export type Opening = Extract<Plan<Stream>, { kind: 'open' }> & { probe?: true };
