import type { LoggingLevel } from '@modelcontextprotocol/client';
import { useState } from 'react';
import { useServerLog } from '../mcp';
import { Card } from './Card';

const LEVELS: LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error'];

/**
 * The server's log messages: `useServerLog({ level })`, a bounded inbox, newest first. The
 * level reaches the server as its era says (`logging/setLevel` on 2025, each request's `_meta`
 * on 2026-07-28, where the slow tool's messages ride its call).
 */
export function LogsCard() {
  const [level, setLevel] = useState<LoggingLevel>('info');
  const log = useServerLog({ level, max: 50 });
  return (
    <Card
      title="Server log"
      subtitle="useServerLog()"
      testId="logs-card"
      actions={
        <>
          <select value={level} onChange={(event) => setLevel(event.target.value as LoggingLevel)}>
            {LEVELS.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
          <button type="button" onClick={log.clear}>
            clear
          </button>
        </>
      }
    >
      {log.supported === false && <span className="muted">the server declared no logging</span>}
      <ul className="log" data-testid="server-log">
        {log.entries.map((entry) => (
          <li key={entry.id} className={`log-${entry.level}`}>
            <strong>{entry.level}</strong>{' '}
            {typeof entry.data === 'string' ? entry.data : JSON.stringify(entry.data)}
          </li>
        ))}
      </ul>
      {log.dropped > 0 && <span className="muted small">{log.dropped} dropped</span>}
    </Card>
  );
}
