import type { EventStore } from '@modelcontextprotocol/server';

type Message = Parameters<EventStore['storeEvent']>[1];

/**
 * What a resumable 2025 server keeps: every event it sent, per stream, so a client that comes
 * back with `Last-Event-ID` gets what it missed. In memory, per session, unbounded (test sized).
 */
export function memoryEventStore(): EventStore & { replays: number } {
  const events: { id: string; streamId: string; message: Message }[] = [];
  let next = 0;
  const store = {
    replays: 0,
    async storeEvent(streamId: string, message: Message) {
      next += 1;
      const id = `${streamId}_${next}`;
      events.push({ id, streamId, message });
      return id;
    },
    async getStreamIdForEventId(eventId: string) {
      return events.find((event) => event.id === eventId)?.streamId;
    },
    async replayEventsAfter(
      lastEventId: string,
      { send }: { send: (id: string, message: Message) => Promise<void> },
    ) {
      const from = events.findIndex((event) => event.id === lastEventId);
      const streamId = events[from]?.streamId ?? '';
      store.replays += 1;
      for (const event of events.slice(from + 1)) {
        if (event.streamId === streamId) await send(event.id, event.message);
      }
      return streamId;
    },
  };
  return store;
}
