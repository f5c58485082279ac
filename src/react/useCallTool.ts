import type { CallToolResult } from '@modelcontextprotocol/client';
import type { UseMutationOptions } from '@tanstack/react-query';
import { type CallToolVariables, callToolMutationOptions } from '../core/tools';
import { useMcpSync } from './context';
import { type ToolCallMutation, useToolCallMutation } from './toolCallMutation';

// TanStack's own `scope` (serial mutations) is left out: here `scope` names the provider.
export type UseCallToolOptions = Omit<
  UseMutationOptions<CallToolResult, Error, CallToolVariables>,
  'mutationFn' | 'mutationKey' | 'scope'
> & {
  /** Call through the `<McpProvider scope>` of that name instead of the nearest one. */
  scope?: string;
};

/** TanStack's mutation, with the running call's `progress`, `cancel()` and `cancelled`. */
export type UseCallToolResult = ToolCallMutation;

/**
 * Call tools with TanStack's `useMutation`: `mutate({ name, arguments })`.
 * `data.isError` is the tool reporting a failure (it ran); `error` is the
 * call itself failing. `progress` is the latest progress notification of the
 * running call; `cancel()` stops it.
 */
export function useCallTool(options?: UseCallToolOptions): UseCallToolResult {
  const { scope, ...mutationOptions } = options ?? {};
  const sync = useMcpSync('useCallTool', scope);
  const { mutationKey, mutationFn } = callToolMutationOptions(sync);
  return useToolCallMutation(sync.queryClient, mutationKey, mutationFn, mutationOptions);
}
