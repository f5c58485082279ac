import { useNow } from '../hooks/useNow';
import { useMcp } from '../mcp';

/** What `useMcp()` says about the connection, with a way to force a reconnect. */
export function StatusBadge() {
  const { status, era, protocolVersion, attempt, nextRetryAt, error, reconnect } = useMcp();
  const now = useNow(200, nextRetryAt !== undefined);
  return (
    <div
      className={`status status-${status}`}
      data-testid="status-badge"
      data-status={status}
      data-era={era ?? ''}
    >
      <span className="dot" aria-hidden />
      <strong data-testid="status-text">{status}</strong>
      <span className="muted">
        {era ?? 'era ?'} · {protocolVersion ?? 'no protocol yet'}
      </span>
      {status === 'reconnecting' && (
        <span className="retry" data-testid="status-retry">
          attempt {attempt}
          {nextRetryAt !== undefined &&
            ` · next in ${Math.max(0, (nextRetryAt - now) / 1000).toFixed(1)} s`}
        </span>
      )}
      {error && status !== 'ready' && (
        <span className="status-error" title={error.message}>
          {error.message}
        </span>
      )}
      <button
        type="button"
        className="status-action"
        data-testid="reconnect-button"
        onClick={reconnect}
      >
        Reconnect
      </button>
    </div>
  );
}
