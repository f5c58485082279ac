import { createContext, useContext } from 'react';
import type { McpCacheSync } from '../core/mcpCacheSync';

export interface McpContextValue {
  /** The nearest provider. */
  nearest: McpCacheSync;
  /** Every provider above, by scope (several servers in one app). */
  byScope: ReadonlyMap<string | undefined, McpCacheSync>;
}

export const McpContext = createContext<McpContextValue | undefined>(undefined);

/** The sync object of the nearest provider, or of the one with `scope`; a clear error otherwise. */
export function useMcpSync(hook: string, scope?: string): McpCacheSync {
  const value = useContext(McpContext);
  if (!value) throw new Error(`${hook} must be used inside <McpProvider>`);
  if (scope === undefined) return value.nearest;
  const sync = value.byScope.get(scope);
  if (!sync) throw new Error(`${hook}: no <McpProvider scope="${scope}"> above this component`);
  return sync;
}
