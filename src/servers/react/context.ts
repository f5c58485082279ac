import { createContext, useContext } from 'react';
import type { McpServerManager } from '../manager';

export const ServersContext = createContext<McpServerManager | undefined>(undefined);

/** The manager of the nearest `<McpServersProvider>`; a clear error outside one. */
export function useServerManager(hook: string): McpServerManager {
  const manager = useContext(ServersContext);
  if (!manager) throw new Error(`${hook} must be used inside <McpServersProvider>`);
  return manager;
}
