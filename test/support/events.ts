import type { McpEvent } from '../../src/core/events';

/**
 * The events of an McpCacheSync from now on (its public `subscribeEvents`): the client's own log,
 * for checks that something did not happen once the event that would come first has been seen.
 */
export function recordEvents(sync: {
  subscribeEvents(listener: (event: McpEvent) => void): () => void;
}) {
  const events: McpEvent[] = [];
  const stop = sync.subscribeEvents((event) => events.push(event));
  return {
    events,
    stop,
    /** Whether `uri` stopped being wanted (its linger ended with no holder). */
    released: (uri: string) =>
      events.some((event) => event.type === 'interest' && event.uri === uri && !event.wanted),
  };
}
