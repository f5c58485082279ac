import type { McpDiagnostics } from '../../src/core/checks';
import type { McpCacheSync } from '../../src/core/mcpCacheSync';
import { mcpDiagnostics } from '../../src/core/mcpDiagnostics';

/** The diagnostics snapshot of `sync` now (undefined for no sync). */
export function diagnosticsOf(sync: McpCacheSync): McpDiagnostics;
export function diagnosticsOf(sync: McpCacheSync | undefined): McpDiagnostics | undefined;
export function diagnosticsOf(sync: McpCacheSync | undefined): McpDiagnostics | undefined {
  return sync && mcpDiagnostics(sync).getSnapshot();
}
