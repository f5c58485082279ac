import { useSyncExternalStore } from 'react';
import type { McpState } from '../core/mcpCacheSync';
import { useMcpSync } from './context';

/** The SDK client, connection status, era, capabilities and `reconnect()`. */
export function useMcp(): McpState {
  const sync = useMcpSync('useMcp');
  return useSyncExternalStore(sync.subscribeState, sync.getState, sync.getState);
}
