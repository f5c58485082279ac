import type { CallToolResult, Progress } from '@modelcontextprotocol/client';
import {
  type QueryClient,
  type QueryKey,
  type UseMutationOptions,
  type UseMutationResult,
  useMutation,
} from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { McpQueryError } from '../core/errors';
import type { CallToolVariables } from '../core/tools';

type Options = UseMutationOptions<CallToolResult, Error, CallToolVariables>;

/** What both call hooks return: TanStack's mutation, with the call's progress and its cancel. */
export type ToolCallMutation = UseMutationResult<CallToolResult, Error, CallToolVariables> & {
  /** The latest progress notification of the running call. */
  progress: Progress | undefined;
  /**
   * Cancel the running call: the server is told (`notifications/cancelled`; on 2026-07-28 the
   * request's stream is closed), and the mutation goes back to `idle` with `cancelled` set —
   * an outcome, not an error (`onError` is not called; `mutateAsync` rejects with `CANCELLED`).
   */
  cancel(): void;
  /** The latest call was cancelled (until the next one starts). */
  cancelled: boolean;
};

const isCancelled = (error: unknown) =>
  error instanceof McpQueryError && error.code === 'CANCELLED';

/**
 * The hook's `retry` (a count, `true`, or a function), never for a cancelled call, which would
 * run the tool again on the server, nor for one whose own options cannot work (rule 8).
 */
function callRetry(retry: Options['retry']): (count: number, error: Error) => boolean {
  return (count, error) =>
    !isCancelled(error) &&
    !(error instanceof McpQueryError && error.code === 'INVALID_OPTIONS') &&
    (typeof retry === 'function'
      ? retry(count, error)
      : retry === true || count < Number(retry ?? 0));
}

/**
 * A tool call as a TanStack mutation (`useCallTool`, `useCallServerTool`): `call` runs it with
 * the signal and progress callback given here; the hook's `retry`, else the QueryClient's for
 * `mutationKey`, never for a cancelled call (which would run the tool again on the server) nor
 * for one whose options cannot work; a cancelled call is no error.
 */
export function useToolCallMutation(
  queryClient: QueryClient,
  mutationKey: QueryKey,
  call: (variables: CallToolVariables) => Promise<CallToolResult>,
  options: Omit<Options, 'mutationFn' | 'mutationKey'> = {},
): ToolCallMutation {
  const { onError, onMutate, retry, ...mutationOptions } = options;
  const [progress, setProgress] = useState<Progress>();
  const [cancelled, setCancelled] = useState(false);
  const running = useRef<AbortController | undefined>(undefined);
  // One controller per call (mutate), shared by its attempts: a call cancelled while a retry
  // waits stays cancelled (the retry would run the tool again on the server).
  const calls = useRef(new WeakMap<CallToolVariables, AbortController>()).current;
  // The QueryClient's mutation defaults, for what the hook wraps (its own would hide them).
  const defaults = queryClient.defaultMutationOptions<Options>({ mutationKey });
  const retries = retry ?? defaults.retry;
  const started = onMutate ?? defaults.onMutate;
  const failed = onError ?? defaults.onError;
  const mutation = useMutation<CallToolResult, Error, CallToolVariables>(
    {
      ...mutationOptions,
      mutationKey,
      onMutate: (variables, ...rest) => {
        calls.set(variables, new AbortController());
        return started?.(variables, ...rest);
      },
      mutationFn: (variables) => {
        const own = calls.get(variables) ?? new AbortController();
        if (own.signal.aborted) return Promise.reject(own.signal.reason);
        calls.set(variables, own);
        setProgress(undefined);
        setCancelled(false);
        running.current = own;
        return call({
          ...variables,
          signal: variables.signal ? AbortSignal.any([own.signal, variables.signal]) : own.signal,
          onProgress: (next) => {
            // A call that a later one superseded still reports to its own onProgress only.
            if (running.current === own) setProgress(next);
            variables.onProgress?.(next);
          },
        }).catch((error) => {
          // Its own signal aborted: the call ends as cancel() ends it, an outcome, not an error.
          if (isCancelled(error) && running.current === own) api.cancel();
          throw error;
        });
      },
      retry: callRetry(retries),
      ...(failed && {
        onError: (error, ...rest) => (isCancelled(error) ? undefined : failed(error, ...rest)),
      }),
    },
    queryClient,
  );
  const latest = useRef(mutation);
  latest.current = mutation;
  // Made once, so stable as TanStack's own reset is (a host's `useEffect(() => call.cancel,
  // [call.cancel])` cancels when its component goes, not at each render), and reading the
  // latest render (one taken before the call started still reaches it).
  const [api] = useState(() => {
    // This observer lets go of the call (TanStack's reset; a running call runs on): a
    // notification of it still on its way does not show, and cancel() no longer reaches it.
    const reset = () => {
      running.current = undefined;
      latest.current.reset();
      setProgress(undefined);
      setCancelled(false);
    };
    const cancel = () => {
      const call = running.current;
      if (!call || call.signal.aborted || !latest.current.isPending) return;
      call.abort(new McpQueryError('CANCELLED', 'the call was cancelled'));
      // The call settles as cancelled: this observer lets go of it, so it shows no error.
      reset();
      setCancelled(true);
    };
    return { reset, cancel };
  });
  // Progress belongs to a call the observer follows (none once reset or cancelled).
  return {
    ...mutation,
    ...api,
    progress: mutation.isIdle ? undefined : progress,
    cancelled,
  };
}
