import { useSyncExternalStore } from 'react';
import type { McpDiagnostics } from '../core/diagnostics';
import { useMcpSync } from './context';

/** The four field checks (capabilities, exact URIs, stream alive, silent), live. */
export function useMcpDiagnostics(): McpDiagnostics {
  const sync = useMcpSync('useMcpDiagnostics');
  return useSyncExternalStore(sync.subscribeDiagnostics, sync.getDiagnostics, sync.getDiagnostics);
}
