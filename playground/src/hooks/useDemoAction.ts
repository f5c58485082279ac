import { type QueryClient, useMutation, useQueryClient } from '@tanstack/react-query';
import { demoRequest } from '../api';
import { demoStateKey } from './useDemoState';

/** A control API call; the server view refreshes right after it instead of on the next poll. */
export function useDemoAction<TVariables = void>(
  request: (variables: TVariables) => { method: 'POST' | 'DELETE'; path: string; body?: unknown },
  onSuccess?: (queryClient: QueryClient, variables: TVariables) => void,
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (variables: TVariables) => {
      const { method, path, body } = request(variables);
      return demoRequest(method, path, body);
    },
    onSuccess: (_data, variables) => onSuccess?.(queryClient, variables),
    onSettled: () => queryClient.invalidateQueries({ queryKey: demoStateKey }),
  });
}
