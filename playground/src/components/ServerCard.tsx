import { ENDPOINTS, type EndpointId } from '../../shared/demo';
import { useDemoState } from '../hooks/useDemoState';
import { useNow } from '../hooks/useNow';
import { Card } from './Card';

/**
 * The server's side of the story: three panels show `config://app`, yet the server holds one
 * subscription for it. Polled from the control API, so it is a second opinion, not MCP.
 */
export function ServerCard(props: { endpoint: EndpointId }) {
  const state = useDemoState();
  const view = state.data?.endpoints[props.endpoint];
  const outageUntil = state.data?.outageUntil[props.endpoint];
  const now = useNow(200, outageUntil !== undefined);
  return (
    <Card
      title="Server view"
      subtitle={`${ENDPOINTS[props.endpoint].path} · what the server believes`}
      testId="server-view"
    >
      {view ? (
        <>
          <dl className="facts">
            <dt>open streams</dt>
            <dd data-testid="server-open-streams">{view.openStreams}</dd>
            {props.endpoint === 'legacy' && (
              <>
                <dt>live sessions</dt>
                <dd data-testid="server-sessions">{view.sessions}</dd>
              </>
            )}
            <dt>reads served</dt>
            <dd>{view.reads}</dd>
            <dt>counter</dt>
            <dd>{state.data?.counter}</dd>
            <dt>outage</dt>
            <dd data-testid="server-outage">
              {outageUntil !== undefined && outageUntil > now
                ? `refusing requests for ${((outageUntil - now) / 1000).toFixed(1)} s`
                : 'none'}
            </dd>
          </dl>
          <div className="small muted">
            subscribed on the server ({view.subscribedUris.length})
            {props.endpoint === 'legacy' &&
              ' — over every session it still holds, including ones whose client left'}
          </div>
          <ul className="chips" data-testid="server-subscribed">
            {view.subscribedUris.map((uri) => (
              <li key={uri}>
                <code>{uri}</code>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <div className="muted">{state.error ? state.error.message : 'loading…'}</div>
      )}
    </Card>
  );
}
