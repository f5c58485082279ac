import { useSyncExternalStore } from 'react';
import type { McpDiagnostics } from '../core/checks';
import { mcpDiagnostics } from '../core/mcpDiagnostics';
import { useMcpSync } from './context';

/** The four field checks (capabilities, exact URIs, stream alive, silent), live. */
export function useMcpDiagnostics(scope?: string): McpDiagnostics {
  const diagnostics = mcpDiagnostics(useMcpSync('useMcpDiagnostics', scope));
  return useSyncExternalStore(
    diagnostics.subscribe,
    diagnostics.getSnapshot,
    diagnostics.getSnapshot,
  );
}
