import type { CallToolResult } from '@modelcontextprotocol/client';
import type { UseMutationOptions } from '@tanstack/react-query';
import type { CallToolVariables } from '../../core/tools';
import { type ToolCallMutation, useToolCallMutation } from '../../react/toolCallMutation';
import { useServerManager } from './context';

export type UseCallServerToolOptions = Omit<
  UseMutationOptions<CallToolResult, Error, CallToolVariables>,
  'mutationFn' | 'mutationKey'
>;

/** TanStack's mutation, with the running call's `progress`, `cancel()` and `cancelled`. */
export type UseCallServerToolResult = ToolCallMutation;

const MUTATION_KEY = ['mcp-servers', 'callTool'];

/**
 * `useCallTool` across servers: `mutate({ name: qualifiedName, arguments })`
 * calls the tool on the server the qualified name belongs to (an unknown
 * one fails with `UNKNOWN_SERVER`). Removing that server cancels the call;
 * `cancel()` stops it as `useCallTool`'s does.
 */
export function useCallServerTool(options?: UseCallServerToolOptions): UseCallServerToolResult {
  const manager = useServerManager('useCallServerTool');
  return useToolCallMutation(
    manager.queryClient,
    MUTATION_KEY,
    (variables) => manager.callTool(variables),
    options,
  );
}
