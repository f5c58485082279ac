import { useSyncExternalStore } from 'react';
import type { AddServerResult, McpServer, McpServerManager } from '../manager';
import { useServerManager } from './context';

export interface UseMcpServersResult {
  /** In the order they were added, each with its status, sign-in and actions. */
  servers: readonly McpServer[];
  add: McpServerManager['add'];
  update: McpServerManager['update'];
  remove: McpServerManager['remove'];
}

/**
 * The servers of the nearest `<McpServersProvider>`, live, and what changes
 * them. `add` and `update` answer at once with `{ ok: false, problem,
 * message }` when the input cannot be used: call them from event handlers.
 */
export function useMcpServers(): UseMcpServersResult {
  const manager = useServerManager('useMcpServers');
  const servers = useSyncExternalStore(manager.subscribe, manager.getServers, manager.getServers);
  return { servers, add: manager.add, update: manager.update, remove: manager.remove };
}

export type { AddServerResult };
