import { useSyncExternalStore } from 'react';
import type { PendingElicitation } from '../core/serverRequests';
import { useMcpSync } from './context';

/**
 * The server's requests for user input, waiting to be answered: render a
 * form for each from `params.requestedSchema`, then `accept(content)`,
 * `decline()` or `cancel()`. While a component uses this hook, elicitations
 * wait for it; without one (and without `onElicitation`), they are declined
 * at once. Needs `elicitation` on the McpProvider.
 */
export function useElicitations(scope?: string): readonly PendingElicitation[] {
  const sync = useMcpSync('useElicitations', scope);
  return useSyncExternalStore(
    sync.subscribeElicitations,
    sync.getElicitations,
    sync.getElicitations,
  );
}
