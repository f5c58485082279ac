import type { UseQueryResult } from '@tanstack/react-query';
import { ago } from '../format';
import { useNow } from '../hooks/useNow';

/** When the panel's data last changed, whether a read is running, and the read error if any. */
export function QueryMeta(props: { query: UseQueryResult<unknown, Error> }) {
  const { query } = props;
  const now = useNow(1000);
  // failureReason shows the error from the first failed attempt; `error` only after retries.
  const failure = query.error ?? query.failureReason;
  return (
    <>
      <div className="meta">
        <span>
          {query.dataUpdatedAt ? `updated ${ago(query.dataUpdatedAt, now)}` : 'no data yet'}
        </span>
        {query.isFetching && <span className="pill">reading…</span>}
        {query.failureCount > 0 && (
          <span className="pill pill-warn">{query.failureCount} failed</span>
        )}
      </div>
      {failure && (
        <div className="error" data-testid="error" role="alert">
          {failure.message}
          {query.data !== undefined && (
            <span className="muted"> — still showing the last good content</span>
          )}
        </div>
      )}
    </>
  );
}
