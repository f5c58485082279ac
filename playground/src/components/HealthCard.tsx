import { useState } from 'react';
import { useDemoAction } from '../hooks/useDemoAction';
import { useMcpDiagnostics } from '../mcp';
import { Card } from './Card';

/**
 * The keep-alive (`keepAlive({ pingIntervalMs })`): a connection that heard nothing for the
 * interval pings the server, and the diagnostics keep the round trip (`health`). The demo's
 * clock talks every second, so the connection is never idle: stop it to see the pings.
 */
export function HealthCard() {
  const { health } = useMcpDiagnostics();
  const [running, setRunning] = useState(true);
  const clock = useDemoAction((on: boolean) => ({
    method: 'POST',
    path: '/demo/clock',
    body: { running: on },
  }));
  return (
    <Card title="Health" subtitle="keepAlive · diagnostics.health" testId="health-card">
      <dl className="facts">
        <dt>round trip</dt>
        <dd data-testid="health-rtt">
          {health?.rttMs === undefined ? 'no ping yet' : `${health.rttMs} ms`}
        </dd>
        <dt>last ping</dt>
        <dd>{health ? new Date(health.lastPingAt).toLocaleTimeString() : '—'}</dd>
        <dt>failed pings</dt>
        <dd>{health?.failures ?? 0}</dd>
      </dl>
      <button
        type="button"
        data-testid="clock-toggle"
        onClick={() => {
          clock.mutate(!running);
          setRunning(!running);
        }}
      >
        {running ? 'Stop the clock (let the connection go idle)' : 'Start the clock again'}
      </button>
    </Card>
  );
}
