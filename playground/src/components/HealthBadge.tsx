import { useMcpDiagnostics } from '../mcp';

/** The keep-alive's latest round trip (`keepAlive({ pingIntervalMs })`, diagnostics `health`). */
export function HealthBadge() {
  const { health } = useMcpDiagnostics();
  if (!health) return null;
  const failing = health.lastError !== undefined;
  return (
    <span
      className={`pill ${failing ? 'pill-warn' : ''}`}
      data-testid="health"
      title={failing ? `ping failed: ${health.lastError}` : 'keep-alive round trip'}
    >
      {failing ? 'ping failed' : `ping ${health.rttMs ?? '—'} ms`}
      {health.failures > 0 && ` · ${health.failures} failed`}
    </span>
  );
}
