import type { CallToolResult, Client, Progress } from '@modelcontextprotocol/client';
import type { QueryKey } from '@tanstack/query-core';
import { internalsOf } from './internals';
import type { McpKeys } from './keys';
import { toolsListed } from './lists';

/** What a tool call takes: the tool, its arguments, and optionally where progress goes. */
export interface CallToolVariables {
  name: string;
  arguments?: Record<string, unknown>;
  /** Progress notifications of this call (and, 2026-07-28, each round of input it needed). */
  onProgress?: (progress: Progress) => void;
  signal?: AbortSignal;
}

/**
 * Call a tool through an McpCacheSync: waits for the connection like a read
 * does (bounded by `requestTimeoutMs`); a refusal for want of credentials
 * makes the connection `unauthorized`.
 */
export async function callTool(
  sync: object,
  variables: CallToolVariables,
): Promise<CallToolResult> {
  const internals = internalsOf(sync);
  const remote = internals.remote();
  if (remote) return remote.callTool(variables);
  const session = await internals.session(variables.signal);
  try {
    return await callOn(session.client, variables, internals.options.toolTimeoutMs ?? 120_000);
  } catch (error) {
    internals.failed(session, error);
    throw error;
  }
}

/**
 * One tool call on a connected client. An `isError` result is data (the tool
 * ran and reports a failure); only the transport and the protocol throw.
 * The SDK validates structured output and builds 2026-07-28 tool headers
 * from its cached tool list, so that list is fetched once per client first.
 */
async function callOn(
  client: Client,
  variables: CallToolVariables,
  timeoutMs: number,
): Promise<CallToolResult> {
  if (!toolsListed.has(client) && client.getServerCapabilities()?.tools) {
    await client.listTools(undefined, { cacheMode: 'refresh', timeout: timeoutMs });
    toolsListed.add(client);
  }
  const result = await client.callTool(
    { name: variables.name, ...(variables.arguments && { arguments: variables.arguments }) },
    {
      timeout: timeoutMs,
      resetTimeoutOnProgress: true,
      ...(variables.signal && { signal: variables.signal }),
      ...(variables.onProgress && { onprogress: variables.onProgress }),
    },
  );
  return result as CallToolResult;
}

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
