import { ago } from '../format';
import { useNow } from '../hooks/useNow';
import { useMcpDiagnostics } from '../mcp';
import { Card } from './Card';
import { ChecksList } from './ChecksList';
import { ResourceDiagnosticsTable } from './ResourceDiagnosticsTable';

/**
 * `useMcpDiagnostics()`: the four troubleshooting checks, live. `scaled`: the per-URI silent
 * changes get their own column (with `silenceProbeMs` on, that is where a bus that does not
 * reach every instance shows up).
 */
export function DiagnosticsCard(props: { scaled?: boolean }) {
  const diagnostics = useMcpDiagnostics();
  const { stream, capabilities, counters } = diagnostics;
  const now = useNow(1000);
  return (
    <Card
      title="Diagnostics"
      subtitle="useMcpDiagnostics()"
      testId="diagnostics"
      className="span-4"
    >
      <div className="diag-top">
        <ChecksList checks={diagnostics.checks} />
        <dl className="facts" data-testid="stream" data-state={stream.state}>
          <dt>stream</dt>
          <dd>
            <span className={`pill stream-${stream.state}`} data-testid="stream-state">
              {stream.kind} · {stream.state}
            </span>
          </dd>
          <dt>since</dt>
          <dd>{ago(stream.since, now)}</dd>
          <dt>reopened</dt>
          <dd data-testid="stream-reopens">{stream.reopenCount}</dd>
          <dt>last close</dt>
          <dd>{stream.lastCloseReason ?? '—'}</dd>
          {stream.lastError && (
            <>
              <dt>last error</dt>
              {/* Kept after recovery as history; only alarming while the stream is down. */}
              <dd className={stream.state === 'open' ? 'muted' : 'error-text'}>
                {stream.lastError}
              </dd>
            </>
          )}
          <dt>capabilities</dt>
          <dd>
            {capabilities
              ? `subscribe ${capabilities.subscribe ? '✓' : '✗'} · listChanged ${capabilities.listChanged ? '✓' : '✗'}`
              : '—'}
          </dd>
          <dt>list covered</dt>
          <dd>{diagnostics.listAcknowledged ? 'yes' : 'no'}</dd>
          <dt>path</dt>
          <dd>
            {diagnostics.legacy ? '2025 resources/subscribe (legacy)' : '2026 subscriptions/listen'}
          </dd>
          <dt>totals</dt>
          <dd>
            {counters.updated} updated · {counters.reads} reads · {counters.readErrors} errors ·{' '}
            {counters.malformed} malformed
          </dd>
        </dl>
      </div>
      <ResourceDiagnosticsTable
        resources={diagnostics.resources}
        now={now}
        silentColumn={props.scaled}
      />
      <div className="unmatched" data-testid="unmatched">
        <strong>Unmatched URIs:</strong>{' '}
        {diagnostics.unmatched.length === 0
          ? 'none'
          : diagnostics.unmatched.map((entry) => (
              <code key={entry.uri}>
                {entry.uri} ×{entry.count}
                {entry.nearest ? ` (did you mean ${entry.nearest}?)` : ''}
              </code>
            ))}
      </div>
    </Card>
  );
}
