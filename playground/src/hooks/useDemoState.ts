import { useQuery } from '@tanstack/react-query';
import type { DemoState } from '../../shared/demo';
import { demoRequest } from '../api';

export const demoStateKey = ['demo', 'state'] as const;

/** The server's own view (what it thinks is subscribed, outages, the failing toggle), polled. */
export function useDemoState() {
  return useQuery({
    queryKey: demoStateKey,
    queryFn: () => demoRequest<DemoState>('GET', '/demo/state'),
    refetchInterval: 1000,
  });
}
