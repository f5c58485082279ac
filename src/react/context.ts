import { createContext, useContext } from 'react';
import type { McpCacheSync } from '../core/mcpCacheSync';

export interface McpContextValue {
  /** The nearest provider (none under an `McpServersProvider` alone: its servers go by scope). */
  nearest: McpCacheSync | undefined;
  /** Every provider above, by scope (several servers in one app). */
  byScope: ReadonlyMap<string | undefined, McpCacheSync>;
  /**
   * Under an `McpServersProvider`: what stands for a scope no provider or server has (a server
   * the user removed, while the host still shows it), one that fails with `UNKNOWN_SERVER`.
   */
  missing?: ((scope: string) => McpCacheSync) | undefined;
}

export const McpContext = createContext<McpContextValue | undefined>(undefined);

/** The sync object of the nearest provider, or of the one with `scope`; a clear error otherwise. */
export function useMcpSync(hook: string, scope?: string): McpCacheSync {
  const value = useContext(McpContext);
  if (scope === undefined) {
    if (!value?.nearest)
      throw new Error(`${hook} must be used inside <McpProvider> (or given a scope)`);
    return value.nearest;
  }
  if (!value) throw new Error(`${hook} must be used inside <McpProvider>`);
  const sync = value.byScope.get(scope) ?? value.missing?.(scope);
  if (!sync) throw new Error(`${hook}: no McpProvider or server with scope "${scope}" above`);
  return sync;
}
