import type { CompleteResult } from '@modelcontextprotocol/client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type CompletionRequest, completionQueryOptions } from '../core/completions';
import { useMcpSync } from './context';
import { useDebounced } from './useDebounced';
import { useMcp } from './useMcp';

export interface UseCompletionOptions extends CompletionRequest {
  /** Wait this long after the last keystroke before asking (default 150 ms). */
  debounceMs?: number;
  /** Ask nothing while false (e.g. until the field has focus). */
  enabled?: boolean;
  scope?: string;
}

export interface UseCompletionResult {
  /** The server's suggestions for the latest value asked about (the previous ones meanwhile). */
  values: string[];
  total: number | undefined;
  hasMore: boolean;
  isFetching: boolean;
  error: Error | null;
  /** Whether the server declared `completions` (undefined until connected). */
  supported: boolean | undefined;
}

const NONE: string[] = [];

/**
 * Suggestions for a prompt argument or a resource-template variable as the user types
 * (`completion/complete`): asked `debounceMs` after the last change; a request the next
 * keystroke made useless is cancelled (its AbortSignal reaches the SDK, which tells the
 * server), and only the latest answer shows. Answers are cached a short while per (ref,
 * argument, value, context). Nothing is sent to a server that declared no `completions`.
 */
export function useCompletion(options: UseCompletionOptions): UseCompletionResult {
  const { debounceMs = 150, enabled = true, scope, value, ...request } = options;
  const sync = useMcpSync('useCompletion', scope);
  const { capabilities } = useMcp(scope);
  const asked = useDebounced(value, debounceMs);
  const supported = capabilities && capabilities.completions !== undefined;
  const query = useQuery(
    {
      ...completionQueryOptions({ ...request, value: asked }, { scope: sync.keys.scope }),
      enabled: enabled && supported === true,
      placeholderData: keepPreviousData,
    },
    sync.queryClient,
  );
  const completion: Partial<CompleteResult['completion']> = query.data?.completion ?? {};
  return {
    values: completion.values ?? NONE,
    total: completion.total,
    hasMore: completion.hasMore === true,
    isFetching: query.isFetching,
    error: query.error,
    supported,
  };
}
