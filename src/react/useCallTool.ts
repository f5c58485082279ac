import type { CallToolResult, Progress } from '@modelcontextprotocol/client';
import {
  type UseMutationOptions,
  type UseMutationResult,
  useMutation,
} from '@tanstack/react-query';
import { useState } from 'react';
import { type CallToolVariables, callToolMutationOptions } from '../core/tools';
import { useMcpSync } from './context';

// TanStack's own `scope` (serial mutations) is left out: here `scope` names the provider.
export type UseCallToolOptions = Omit<
  UseMutationOptions<CallToolResult, Error, CallToolVariables>,
  'mutationFn' | 'mutationKey' | 'scope'
> & {
  /** Call through the `<McpProvider scope>` of that name instead of the nearest one. */
  scope?: string;
};

/**
 * Call tools with TanStack's `useMutation`: `mutate({ name, arguments })`.
 * `data.isError` is the tool reporting a failure (it ran); `error` is the
 * call itself failing. `progress` is the latest progress notification of the
 * running call.
 */
export function useCallTool(options?: UseCallToolOptions): UseMutationResult<
  CallToolResult,
  Error,
  CallToolVariables
> & {
  progress: Progress | undefined;
} {
  const { scope, ...mutationOptions } = options ?? {};
  const sync = useMcpSync('useCallTool', scope);
  const [progress, setProgress] = useState<Progress>();
  const base = callToolMutationOptions(sync);
  const mutation = useMutation(
    {
      ...mutationOptions,
      mutationKey: base.mutationKey,
      mutationFn: (variables) => {
        setProgress(undefined);
        return base.mutationFn({
          ...variables,
          onProgress: (next) => {
            setProgress(next);
            variables.onProgress?.(next);
          },
        });
      },
    },
    sync.queryClient,
  );
  return { ...mutation, progress };
}
