import type { LoggingLevel } from '@modelcontextprotocol/client';
import { useCallback, useEffect, useMemo, useSyncExternalStore } from 'react';
import { severity } from '../core/logLevels';
import { DEFAULT_LOG_MAX, logMax, type ServerLogEntry, serverLog } from '../core/serverLog';
import { useMcpSync } from './context';
import { useMcp } from './useMcp';

export interface UseServerLogOptions {
  /**
   * Show messages from this level up, and ask the server for them: `logging/setLevel` on 2025
   * (where it declared logging), each request's `_meta` on 2026-07-28. Without it, what the
   * server sends by itself shows (on 2026-07-28: nothing).
   */
  level?: LoggingLevel;
  /**
   * The most entries shown (default 200; less than 0 or NaN: none; at most 10,000). The inbox
   * keeps the largest any mounted hook asks for.
   */
  max?: number;
  scope?: string;
}

export interface UseServerLogResult {
  /** Newest first. */
  entries: readonly ServerLogEntry[];
  /** Messages of the levels shown that fell off the end (of this hook's `max`, or of the inbox's). */
  dropped: number;
  /** Whether the server declared `logging` (undefined until connected). */
  supported: boolean | undefined;
  clear(): void;
}

/**
 * The server's log messages (`notifications/message`) as a bounded inbox per server: newest
 * first, at most `max`, with a count of those dropped. Messages received before the hook
 * mounted are there too (the inbox starts with the connection).
 */
export function useServerLog(options: UseServerLogOptions = {}): UseServerLogResult {
  const { level, scope } = options;
  const max = logMax(options.max ?? DEFAULT_LOG_MAX);
  const sync = useMcpSync('useServerLog', scope);
  const log = serverLog(sync);
  useEffect(() => log.keep(max, level), [log, max, level]);
  useEffect(() => log.ask(level), [log, level]);
  const { capabilities } = useMcp(scope);
  const snapshot = useSyncExternalStore(log.store.subscribe, log.store.get, log.store.get);
  const { shown, gone } = useMemo(() => {
    const floor = level === undefined ? 0 : severity(level);
    let gone = 0;
    for (const [name, count] of Object.entries(snapshot.droppedByLevel)) {
      if (severity(name) >= floor) gone += count;
    }
    return { shown: snapshot.entries.filter((entry) => severity(entry.level) >= floor), gone };
  }, [snapshot, level]);
  const entries = useMemo(() => shown.slice(0, max), [shown, max]);
  // The same function from render to render: an effect that depends on it (and clears, so
  // renders again) does not run at every render, clearing what comes, in a loop.
  const clear = useCallback(() => log.clear(), [log]);
  return {
    entries,
    dropped: gone + shown.length - entries.length,
    supported: capabilities && capabilities.logging !== undefined,
    clear,
  };
}
