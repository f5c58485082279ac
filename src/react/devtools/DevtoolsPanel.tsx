import type { LoggingLevel } from '@modelcontextprotocol/client';
import { type CSSProperties, useState } from 'react';
import { describeEvent } from '../../core/describeEvent';
import type { McpEvent } from '../../core/events';
import { LOG_LEVELS } from '../../core/logLevels';
import { useMcp } from '../useMcp';
import { useMcpDiagnostics } from '../useMcpDiagnostics';
import { useMcpEvents } from '../useMcpEvents';
import { useServerLog } from '../useServerLog';

const MAX_EVENTS = 200;

const styles = {
  button: {
    position: 'fixed',
    right: 12,
    bottom: 12,
    zIndex: 99999,
    font: '600 12px system-ui, sans-serif',
    padding: '6px 10px',
    borderRadius: 16,
    border: '1px solid #334155',
    background: '#0f172a',
    color: '#e2e8f0',
    cursor: 'pointer',
  },
  panel: {
    position: 'fixed',
    right: 12,
    bottom: 48,
    zIndex: 99999,
    width: 'min(560px, calc(100vw - 24px))',
    maxHeight: '70vh',
    overflow: 'auto',
    background: '#0f172a',
    color: '#e2e8f0',
    border: '1px solid #334155',
    borderRadius: 8,
    font: '12px/1.5 ui-monospace, SFMono-Regular, Menlo, monospace',
    padding: 12,
    boxShadow: '0 8px 30px rgba(0,0,0,.35)',
  },
  h: { font: '600 12px system-ui, sans-serif', margin: '10px 0 4px', color: '#94a3b8' },
  row: { display: 'flex', gap: 8, justifyContent: 'space-between' },
  tab: { font: '600 12px system-ui, sans-serif', marginRight: 4 },
  ok: { color: '#4ade80' },
  bad: { color: '#f87171' },
  table: { width: '100%', borderCollapse: 'collapse' },
  cell: { padding: '2px 4px', borderBottom: '1px solid #1e293b', textAlign: 'left' },
} satisfies Record<string, CSSProperties>;

const time = (at: number | undefined) =>
  at === undefined ? '—' : new Date(at).toLocaleTimeString(undefined, { hour12: false });

function describe(event: McpEvent): string {
  const { label, detail } = describeEvent(event);
  return detail ? `${label} ${detail}` : label;
}

export default function DevtoolsPanel({
  initialOpen = false,
  scope,
}: {
  initialOpen?: boolean;
  scope?: string;
}) {
  const [open, setOpen] = useState(initialOpen);
  const [view, setView] = useState<'overview' | 'logs'>('overview');
  const [events, setEvents] = useState<McpEvent[]>([]);
  const mcp = useMcp(scope);
  const diagnostics = useMcpDiagnostics(scope);
  useMcpEvents((event) => setEvents((list) => [event, ...list].slice(0, MAX_EVENTS)), scope);
  return (
    <>
      <button type="button" style={styles.button} onClick={() => setOpen((value) => !value)}>
        MCP · {mcp.status}
      </button>
      {open && (
        <section style={styles.panel} aria-label="MCP devtools">
          <div style={styles.row}>
            <span>
              {mcp.status} · {mcp.era ?? '—'} · {mcp.protocolVersion ?? '—'}
            </span>
            <button type="button" onClick={mcp.reconnect}>
              reconnect
            </button>
          </div>
          <div role="tablist">
            {(['overview', 'logs'] as const).map((name) => (
              <button
                key={name}
                type="button"
                role="tab"
                aria-selected={view === name}
                style={styles.tab}
                onClick={() => setView(name)}
              >
                {name === 'overview' ? 'Overview' : 'Logs'}
              </button>
            ))}
          </div>
          {view === 'logs' && <Logs scope={scope} />}
          {view === 'overview' && diagnostics.tabs && (
            <div>
              {diagnostics.tabs.leader
                ? 'this tab holds the connection'
                : 'shared from another tab'}{' '}
              · {diagnostics.tabs.tabs} tab{diagnostics.tabs.tabs === 1 ? '' : 's'} ·{' '}
              {diagnostics.tabs.handovers} handover{diagnostics.tabs.handovers === 1 ? '' : 's'}
            </div>
          )}
          {view === 'overview' && <Overview diagnostics={diagnostics} events={events} />}
        </section>
      )}
    </>
  );
}

function Overview({
  diagnostics,
  events,
}: {
  diagnostics: ReturnType<typeof useMcpDiagnostics>;
  events: McpEvent[];
}) {
  return (
    <>
      <div style={styles.h}>Checks</div>
      {diagnostics.checks.map((check) => (
        <div key={check.id}>
          <span style={check.ok ? styles.ok : styles.bad}>{check.ok ? '✓' : '✗'}</span>{' '}
          {check.title} — {check.detail}
        </div>
      ))}
      <div style={styles.h}>Subscriptions</div>
      <table style={styles.table}>
        <thead>
          <tr>
            {['uri', 'refs', 'ack', 'notified', 'read', 'error'].map((head) => (
              <th key={head} style={styles.cell}>
                {head}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {diagnostics.resources.map((resource) => (
            <tr key={resource.uri}>
              <td style={styles.cell}>{resource.uri}</td>
              <td style={styles.cell}>{resource.refs}</td>
              <td style={styles.cell}>
                {resource.acknowledged ? '✓' : (resource.declined ?? '…')}
              </td>
              <td style={styles.cell}>
                {resource.notifications} · {time(resource.lastNotificationAt)}
              </td>
              <td style={styles.cell}>
                {resource.reads} · {time(resource.lastReadAt)}
              </td>
              <td style={styles.cell}>{resource.lastError ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div style={styles.h}>Events</div>
      {events.map((event, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a log; entries never move
        <div key={index}>
          {time(event.at)} {describe(event)}
        </div>
      ))}
    </>
  );
}

/** The server's log messages (`notifications/message`), from the level chosen here. */
function Logs({ scope }: { scope: string | undefined }) {
  const [level, setLevel] = useState<LoggingLevel | undefined>();
  const log = useServerLog({ ...(level && { level }), ...(scope !== undefined && { scope }) });
  return (
    <>
      <div style={styles.row}>
        <label>
          level{' '}
          <select
            value={level ?? ''}
            onChange={(event) => setLevel((event.target.value || undefined) as LoggingLevel)}
          >
            <option value="">server default</option>
            {LOG_LEVELS.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <span>
          {log.supported === false
            ? 'the server declared no logging'
            : `${log.entries.length} shown`}
          {log.dropped > 0 && ` · ${log.dropped} dropped`}{' '}
          <button type="button" onClick={log.clear}>
            clear
          </button>
        </span>
      </div>
      {log.entries.map((entry) => (
        <div
          key={entry.id}
          style={entry.level === 'debug' || entry.level === 'info' ? undefined : styles.bad}
        >
          {time(entry.at)} {entry.level}
          {entry.logger && ` ${entry.logger}`}:{' '}
          {typeof entry.data === 'string' ? entry.data : JSON.stringify(entry.data)}
        </div>
      ))}
    </>
  );
}
