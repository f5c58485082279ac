import { useEffect, useRef } from 'react';
import type { McpEvent } from '../core/events';
import { useMcpSync } from './context';

/** Calls `listener` for every notification, read, stream and status change (event logs, devtools). */
export function useMcpEvents(listener: (event: McpEvent) => void, scope?: string): void {
  const sync = useMcpSync('useMcpEvents', scope);
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => sync.subscribeEvents((event) => latest.current(event)), [sync]);
}
