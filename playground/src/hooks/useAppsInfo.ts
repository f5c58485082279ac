import { useQuery } from '@tanstack/react-query';
import type { AppsInfo, ExampleServers } from '../../shared/demo';
import { demoRequest } from '../api';

/** Where views run: the sandbox proxy's URL. */
export function useAppsInfo() {
  return useQuery({
    queryKey: ['demo', 'apps'],
    queryFn: () => demoRequest<AppsInfo>('GET', '/demo/apps'),
    staleTime: Number.POSITIVE_INFINITY,
  });
}

/** The example app servers (started by the first ask), once `enabled`. */
export function useExampleServers(enabled: boolean) {
  return useQuery({
    queryKey: ['demo', 'apps', 'examples'],
    queryFn: () => demoRequest<ExampleServers>('GET', '/demo/apps/examples'),
    staleTime: Number.POSITIVE_INFINITY,
    enabled,
  });
}
