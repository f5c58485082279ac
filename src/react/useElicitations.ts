import { useSyncExternalStore } from 'react';
import { internalsOf } from '../core/internals';
import type { PendingElicitation } from '../core/serverRequests';
import { useMcpSync } from './context';

/**
 * The server's requests for user input, waiting to be answered: render a
 * form for each from `params.requestedSchema`, then `accept(content)`,
 * `decline()` or `cancel()`. While a component uses this hook, elicitations
 * wait for it; without one (and without `onElicitation`), they are declined
 * at once, and those still waiting when the last one unmounts are declined
 * then. Needs `serverRequests={createServerRequests({ elicitation: true })}`
 * on the McpProvider.
 */
export function useElicitations(scope?: string): readonly PendingElicitation[] {
  const requests = internalsOf(useMcpSync('useElicitations', scope)).serverRequests;
  if (!requests) {
    throw new Error(
      'useElicitations needs serverRequests={createServerRequests(…)} on McpProvider',
    );
  }
  return useSyncExternalStore(
    requests.subscribeElicitations,
    requests.getElicitations,
    requests.getElicitations,
  );
}
