import type { Progress } from '@modelcontextprotocol/client';
import { isCancelledError, type QueryKey } from '@tanstack/query-core';
import { invalidDurationsOf } from '../core/durations';
import { McpQueryError } from '../core/errors';
import { MAX_RETRIES } from '../core/readResult';
import type { McpAction } from '../core/upstream';
import { type GroupLink, isGroupKey } from './link';
import type { WireCall } from './protocol';

/** What the leader runs for another tab: its reads and its calls. */

/**
 * How often a read for another tab starts again when TanStack cancels the flight it joined (the
 * leader's own component that started it unmounted): the other tab still wants the content.
 */
const READ_ATTEMPTS = 3;

/**
 * The longest a read for another tab may take here, every wait in it bounded: READ_ATTEMPTS
 * flights; a flight may be one of this tab's own, which TanStack tries 1 + MAX_RETRIES times
 * (1, 2 and 4 s apart); each try waits for the connection, for coverage, for the connection
 * again if it was replaced meanwhile, for a turn (64 in flight), then reads: five
 * `requestTimeoutMs` (60 of them in all, 30 min by default). The follower waits no longer, and
 * only while this tab says it still runs the read. (A paginated list, or retry options of the
 * app's own, can take longer: the follower's query then tries again.)
 */
export function readBoundMs(requestTimeoutMs: number): number {
  // TanStack's default delay before a retry: 1 s, doubled each time, at most 30 s.
  let retryDelays = 0;
  for (let retry = 0; retry < MAX_RETRIES; retry++) {
    retryDelays += Math.min(1000 * 2 ** retry, 30_000);
  }
  return READ_ATTEMPTS * ((1 + MAX_RETRIES) * 5 * requestTimeoutMs + retryDelays);
}

/**
 * A read for another tab: one flight per key for every tab; fresh cached content is answered as
 * is. A flight TanStack cancelled (its last observer, a component of the leading tab, went) is
 * started again, a few times at most: the other tab's read is not cancelled with it. `signal`:
 * the leader no longer serves the read (it stopped leading, the tab left).
 */
export async function readFor(
  link: GroupLink,
  key: QueryKey,
  fresh: boolean,
  signal: AbortSignal,
): Promise<{ value: unknown; updatedAt?: number }> {
  const { queryClient, keys } = link.context;
  if (!isGroupKey(keys, key)) {
    throw new McpQueryError('UNKNOWN_KEY', `not an MCP key of this group: ${JSON.stringify(key)}`);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      const value = await queryClient.fetchQuery({
        queryKey: key,
        retry: false,
        ...(fresh && { staleTime: 0 }),
      });
      return { value, updatedAt: queryClient.getQueryState(key)?.dataUpdatedAt };
    } catch (error) {
      if (!isCancelledError(error) || signal.aborted) throw error;
      if (attempt >= READ_ATTEMPTS) {
        throw new McpQueryError(
          'CANCELLED',
          `the leading tab's read of ${JSON.stringify(key)} was cancelled ${attempt} times`,
        );
      }
    }
  }
}

/** A tool call (or, marked `action`, a task request) for another tab, its progress sent to it. */
export async function callFor(
  link: GroupLink,
  tab: string,
  id: number,
  variables: WireCall,
  signal: AbortSignal,
): Promise<{ value: unknown }> {
  const { name, arguments: args, timeoutMs, maxTotalTimeoutMs } = variables;
  // A tab of this version checked them before sending (tools.ts); any script of the origin may
  // send a call, and a whole number past what a timer holds is of the right shape (validate.ts).
  const invalid = invalidDurationsOf({ timeoutMs, maxTotalTimeoutMs });
  if (invalid) throw invalid;
  if (variables.action) {
    return { value: await link.local.request(name as McpAction, args ?? {}, signal) };
  }
  const value = await link.local.callTool({
    name,
    ...(args && { arguments: args }),
    ...(timeoutMs !== undefined && { timeoutMs }),
    ...(maxTotalTimeoutMs !== undefined && { maxTotalTimeoutMs }),
    signal,
    ...(variables.progress && {
      onProgress: (progress: Progress) => link.send({ type: 'progress', to: tab, id, progress }),
    }),
  });
  return { value };
}
