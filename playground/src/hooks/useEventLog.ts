import { useState, useSyncExternalStore } from 'react';
import { EventLog, type EventLogSnapshot } from '../eventLog';
import { useMcpEvents } from '../mcp';

/** Records this provider's events from mount on; one log per provider. */
export function useEventLog(): { log: EventLog; snapshot: EventLogSnapshot } {
  const [log] = useState(() => new EventLog());
  useMcpEvents(log.record);
  const snapshot = useSyncExternalStore(log.subscribe, log.getSnapshot, log.getSnapshot);
  return { log, snapshot };
}
