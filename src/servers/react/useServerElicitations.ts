import { useSyncExternalStore } from 'react';
import type { ServerElicitation } from '../elicitations';
import { useServerManager } from './context';

/**
 * Every server's questions for the user, each saying which server asks
 * (`serverId`, `serverName`): answer with `accept(content)`, `decline()` or
 * `cancel()`. While a component uses this hook, every server's questions
 * wait for it. Needs `serverRequests={{ elicitation: true }}` on the
 * McpServersProvider.
 */
export function useServerElicitations(): readonly ServerElicitation[] {
  const manager = useServerManager('useServerElicitations');
  if (!manager.asksUser) {
    throw new Error(
      'useServerElicitations needs serverRequests={{ elicitation: true }} on McpServersProvider',
    );
  }
  return useSyncExternalStore(
    manager.subscribeElicitations,
    manager.getElicitations,
    manager.getElicitations,
  );
}
