import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import type { QueryKey } from '@tanstack/query-core';
import { invalidDurationsOf } from './durations';
import { cancelled } from './errors';
import { internalsOf } from './internals';
import type { McpKeys } from './keys';
import { toolsListed } from './lists';
import { defineCalls, type LogMeta } from './requests';
import type { CallToolVariables } from './upstream';

export type { CallToolVariables };

/**
 * Call a tool through an McpCacheSync: waits for the connection like a read
 * does (bounded by `requestTimeoutMs`); a refusal for want of credentials
 * makes the connection `unauthorized`. With tab sharing it runs in the tab
 * that holds the connection. A `timeoutMs` or `maxTotalTimeoutMs` no timer can
 * take fails at once with `INVALID_OPTIONS` (rule 8), before anything is sent.
 */
export function callTool(sync: object, variables: CallToolVariables): Promise<CallToolResult> {
  // Every call enters here, whichever tab runs it: checked before the connection is demanded or
  // a message goes to the leading tab.
  const { timeoutMs, maxTotalTimeoutMs } = variables;
  const invalid = invalidDurationsOf({ timeoutMs, maxTotalTimeoutMs });
  return invalid ? Promise.reject(invalid) : internalsOf(sync).upstream.callTool(variables);
}

/**
 * One tool call on a connected client. An `isError` result is data (the tool
 * ran and reports a failure); only the transport and the protocol throw.
 * The SDK validates structured output and builds 2026-07-28 tool headers
 * from its cached tool list, so that list is fetched once per client first.
 * Only as a best effort: without it the SDK skips the validation (as before
 * any list) and sends no headers, which a server that requires them refuses
 * before the tool runs (the SDK then lists and retries once). A list that
 * fails (an error, a malformed answer, more than 64 pages) stops no call and
 * is not asked again; only the call's own cancellation ends it there.
 */
export async function callOn(
  client: Client,
  variables: CallToolVariables,
  timeouts: { timeoutMs: number; maxTotalTimeoutMs: number },
  meta?: LogMeta,
): Promise<CallToolResult> {
  const { signal } = variables;
  const maxTotalTimeout = variables.maxTotalTimeoutMs ?? timeouts.maxTotalTimeoutMs;
  // The SDK checks the total only when progress comes: the first wait is bounded by it too.
  const timeout = Math.min(variables.timeoutMs ?? timeouts.timeoutMs, maxTotalTimeout);
  try {
    if (!toolsListed.has(client) && client.getServerCapabilities()?.tools) {
      await client
        .listTools(undefined, { cacheMode: 'refresh', timeout, ...(signal && { signal }) })
        .catch(() => signal?.throwIfAborted());
      toolsListed.add(client);
    }
    const result = await client.callTool(
      {
        name: variables.name,
        ...(variables.arguments && { arguments: variables.arguments }),
        ...meta,
      },
      {
        timeout,
        // Progress restarts the timeout, up to a bound (a server's progress is not a promise).
        resetTimeoutOnProgress: true,
        maxTotalTimeout,
        ...(signal && { signal }),
        ...(variables.onProgress && { onprogress: variables.onProgress }),
      },
    );
    return result as CallToolResult;
  } catch (error) {
    // The SDK rejects a cancelled call with a timeout of its own making: say what it was.
    if (signal?.aborted) throw cancelled(signal.reason);
    throw error;
  }
}

/** Makes tool calls runnable (defineCalls); tab sharing calls it too, for other tabs' calls. */
export function defineToolCalls(): void {
  defineCalls(callOn);
}

defineToolCalls();

/**
 * Options for TanStack's `useMutation` / `MutationObserver` that call a tool
 * through an McpCacheSync (the React `useCallTool` uses them).
 */
export function callToolMutationOptions(sync: { keys: McpKeys }): {
  mutationKey: QueryKey;
  mutationFn: (variables: CallToolVariables) => Promise<CallToolResult>;
} {
  return {
    mutationKey: sync.keys.callTool(),
    mutationFn: (variables) => callTool(sync, variables),
  };
}
