import type { CallToolResult, Client, Progress } from '@modelcontextprotocol/client';
import type { QueryKey } from '@tanstack/query-core';
import type { McpKeys } from './keys';

/** What a tool call takes: the tool, its arguments, and optionally where progress goes. */
export interface CallToolVariables {
  name: string;
  arguments?: Record<string, unknown>;
  /** Progress notifications of this call (and, 2026-07-28, each round of input it needed). */
  onProgress?: (progress: Progress) => void;
  signal?: AbortSignal;
}

/** Clients whose tool list the SDK has cached (it validates outputs and builds headers from it). */
const listed = new WeakSet<Client>();

/**
 * One tool call on a connected client. An `isError` result is data (the tool
 * ran and reports a failure); only the transport and the protocol throw.
 * The SDK validates structured output and builds 2026-07-28 tool headers
 * from its cached tool list, so that list is fetched once per client first.
 */
export async function callTool(
  client: Client,
  variables: CallToolVariables,
  timeoutMs: number,
): Promise<CallToolResult> {
  if (!listed.has(client) && client.getServerCapabilities()?.tools) {
    await client.listTools(undefined, { cacheMode: 'refresh', timeout: timeoutMs });
    listed.add(client);
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
export function callToolMutationOptions(sync: {
  keys: McpKeys;
  callTool(variables: CallToolVariables): Promise<CallToolResult>;
}): {
  mutationKey: QueryKey;
  mutationFn: (variables: CallToolVariables) => Promise<CallToolResult>;
} {
  return {
    mutationKey: sync.keys.callTool(),
    mutationFn: (variables) => sync.callTool(variables),
  };
}
