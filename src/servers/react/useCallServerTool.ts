import type { CallToolResult, Progress } from '@modelcontextprotocol/client';
import {
  type UseMutationOptions,
  type UseMutationResult,
  useMutation,
} from '@tanstack/react-query';
import { useState } from 'react';
import { type CallToolVariables, callRetry } from '../../core/tools';
import { useServerManager } from './context';

export type UseCallServerToolOptions = Omit<
  UseMutationOptions<CallToolResult, Error, CallToolVariables>,
  'mutationFn' | 'mutationKey'
>;

const MUTATION_KEY = ['mcp-servers', 'callTool'];

type Options = UseMutationOptions<CallToolResult, Error, CallToolVariables>;

/**
 * `useCallTool` across servers: `mutate({ name: qualifiedName, arguments })`
 * calls the tool on the server the qualified name belongs to (an unknown
 * one fails with `UNKNOWN_SERVER`). Removing that server cancels the call.
 */
export function useCallServerTool(options?: UseCallServerToolOptions): UseMutationResult<
  CallToolResult,
  Error,
  CallToolVariables
> & {
  progress: Progress | undefined;
} {
  const manager = useServerManager('useCallServerTool');
  const [progress, setProgress] = useState<Progress>();
  // The hook's retry, else the QueryClient's for this key: never for a cancelled call, which
  // would run the tool again on the server, nor for one whose options cannot work (callRetry).
  const retry =
    options?.retry ??
    manager.queryClient.defaultMutationOptions<Options>({ mutationKey: MUTATION_KEY }).retry;
  const mutation = useMutation(
    {
      ...options,
      mutationKey: MUTATION_KEY,
      retry: callRetry(retry),
      mutationFn: (variables) => {
        setProgress(undefined);
        return manager.callTool({
          ...variables,
          onProgress: (next) => {
            setProgress(next);
            variables.onProgress?.(next);
          },
        });
      },
    },
    manager.queryClient,
  );
  return { ...mutation, progress };
}
