import { SLOW_STEPS, TOOLS } from '../../shared/demo';
import { useCallTool } from '../mcp';
import { Card } from './Card';

/**
 * A long tool call: `useCallTool()`'s `progress` as a bar, and `cancel()`, which tells the
 * server (`notifications/cancelled` on 2025; on 2026-07-28 the request's stream closes) and
 * leaves the call `cancelled`, not failed.
 */
export function SlowToolCard() {
  const call = useCallTool();
  const done = call.progress?.progress ?? 0;
  const total = call.progress?.total ?? SLOW_STEPS;
  const state = call.cancelled ? 'cancelled' : call.status;
  return (
    <Card
      title="Slow tool"
      subtitle={
        <>
          <code>{TOOLS.slow}</code>: progress and <code>cancel()</code>
        </>
      }
      testId="slow-tool"
      data={{ 'data-state': state }}
    >
      <div className="row">
        <button
          type="button"
          className="primary"
          data-testid="slow-start"
          disabled={call.isPending}
          onClick={() => call.mutate({ name: TOOLS.slow })}
        >
          Build the report
        </button>
        <button
          type="button"
          data-testid="slow-cancel"
          disabled={!call.isPending}
          onClick={call.cancel}
        >
          Cancel
        </button>
      </div>
      <progress
        data-testid="slow-progress"
        max={total}
        value={call.isPending ? done : call.isSuccess ? total : 0}
      />
      <div className="meta" data-testid="slow-state">
        {state}
        {call.isPending && ` · step ${done} of ${total}`}
        {call.error && ` · ${call.error.message}`}
      </div>
    </Card>
  );
}
