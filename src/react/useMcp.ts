import { useSyncExternalStore } from 'react';
import type { McpState } from '../core/state';
import { useMcpSync } from './context';

/** The SDK client, connection status, era, capabilities and `reconnect()` (of `scope`, or the nearest provider). */
export function useMcp(scope?: string): McpState {
  const sync = useMcpSync('useMcp', scope);
  return useSyncExternalStore(sync.subscribeState, sync.getState, sync.getState);
}
