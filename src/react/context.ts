import { createContext, useContext } from 'react';
import type { McpCacheSync } from '../core/mcpCacheSync';

export const McpContext = createContext<McpCacheSync | undefined>(undefined);

/** The provider's sync object; a clear error outside `<McpProvider>`. */
export function useMcpSync(hook: string): McpCacheSync {
  const sync = useContext(McpContext);
  if (!sync) throw new Error(`${hook} must be used inside <McpProvider>`);
  return sync;
}
