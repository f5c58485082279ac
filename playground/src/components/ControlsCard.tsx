import { useState } from 'react';
import { BURST_SIZE, type DemoState, type EndpointId } from '../../shared/demo';
import { useDemoAction } from '../hooks/useDemoAction';
import { demoStateKey, useDemoState } from '../hooks/useDemoState';
import { Card } from './Card';

const OUTAGES = [
  { ms: 0, label: 'drop only' },
  { ms: 2000, label: '2 s outage' },
  { ms: 5000, label: '5 s outage' },
];

/** Things to do to the server. Every effect comes back through MCP, never through these calls. */
export function ControlsCard(props: { endpoint: EndpointId }) {
  const server = useDemoState().data;
  const [outageMs, setOutageMs] = useState(2000);
  const increment = useDemoAction(() => ({ method: 'POST', path: '/demo/counter' }));
  const burst = useDemoAction(() => ({
    method: 'POST',
    path: '/demo/burst',
    body: { count: BURST_SIZE },
  }));
  const recolor = useDemoAction(() => ({ method: 'POST', path: '/demo/image' }));
  const failReads = useDemoAction(
    (fail: boolean) => ({ method: 'POST', path: '/demo/fail-reads', body: { fail } }),
    // Written before the mutation settles, so the checkbox never flips back while the server
    // view is being refetched.
    (queryClient, fail) =>
      queryClient.setQueryData<DemoState>(demoStateKey, (state) =>
        state ? { ...state, failingReads: fail } : state,
      ),
  );
  const breakStream = useDemoAction(() => ({
    method: 'POST',
    path: `/demo/break-stream?endpoint=${props.endpoint}&outageMs=${outageMs}`,
  }));
  const failing = failReads.isPending
    ? (failReads.variables ?? false)
    : (server?.failingReads ?? false);
  const errors = [increment, burst, recolor, failReads, breakStream]
    .map((action) => action.error?.message)
    .filter(Boolean);
  return (
    <Card title="Server controls" subtitle="act on the demo server" testId="controls">
      <div className="controls">
        <button type="button" data-testid="control-increment" onClick={() => increment.mutate()}>
          Counter +1
        </button>
        <button type="button" data-testid="control-burst" onClick={() => burst.mutate()}>
          Burst of {BURST_SIZE} updates
        </button>
        <button type="button" data-testid="control-recolor" onClick={() => recolor.mutate()}>
          Recolour logo
        </button>
        <label className="toggle">
          <input
            type="checkbox"
            data-testid="control-fail-reads"
            checked={failing}
            onChange={(event) => failReads.mutate(event.target.checked)}
          />
          Reads of the report fail
        </label>
        <div className="row">
          <button
            type="button"
            className="danger"
            data-testid="control-break-stream"
            onClick={() => breakStream.mutate()}
          >
            Break the stream
          </button>
          <select
            aria-label="Outage after the break"
            data-testid="control-outage"
            value={outageMs}
            onChange={(event) => setOutageMs(Number(event.target.value))}
          >
            {OUTAGES.map((outage) => (
              <option key={outage.ms} value={outage.ms}>
                {outage.label}
              </option>
            ))}
          </select>
        </div>
        <p className="muted small">
          Breaking cuts the {props.endpoint} endpoint's notification streams; with an outage it also
          refuses requests for a while. Change something meanwhile: it shows up after the reconnect,
          by re-read.
        </p>
      </div>
      {errors.length > 0 && (
        <div className="error" role="alert">
          {errors.join('; ')}
        </div>
      )}
    </Card>
  );
}
