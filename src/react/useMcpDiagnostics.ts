import { useSyncExternalStore } from 'react';
import type { McpDiagnostics } from '../core/checks';
import { useMcpSync } from './context';

/** The four field checks (capabilities, exact URIs, stream alive, silent), live. */
export function useMcpDiagnostics(scope?: string): McpDiagnostics {
  const sync = useMcpSync('useMcpDiagnostics', scope);
  return useSyncExternalStore(sync.subscribeDiagnostics, sync.getDiagnostics, sync.getDiagnostics);
}
