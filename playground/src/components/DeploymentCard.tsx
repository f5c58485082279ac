import { ENDPOINTS } from '../../shared/demo';
import { ago } from '../format';
import { useDemoState } from '../hooks/useDemoState';
import { useNow } from '../hooks/useNow';
import { Card } from './Card';

/**
 * Scaled mode: the instances behind `/mcp`, as the server side sees them. Which one holds the
 * listen stream, which one handled each change, and how many events crossed over the bus.
 */
export function DeploymentCard() {
  const state = useDemoState();
  const scale = state.data?.scale;
  const now = useNow(1000);
  return (
    <Card
      title="Deployment"
      subtitle={`${ENDPOINTS.modern.path} · round-robin over the instances · polled from /demo/state`}
      testId="deployment"
      className="span-4"
    >
      {scale ? (
        <div className="deployment">
          <table className="table numbers">
            <thead>
              <tr>
                <th>instance</th>
                <th>listen streams</th>
                <th>subscribed URIs</th>
                <th>reads served</th>
                <th>changes handled</th>
                <th>events published</th>
                <th>events from other instances</th>
                <th>bus</th>
              </tr>
            </thead>
            <tbody>
              {scale.instances.map((instance) => (
                <tr
                  key={instance.name}
                  data-testid="instance-row"
                  data-name={instance.name}
                  data-streams={instance.listenStreams}
                  className={instance.listenStreams > 0 ? 'has-stream' : ''}
                >
                  <td>
                    <code>{instance.name}</code>{' '}
                    <span className="muted small">{instance.origin.replace('http://', '')}</span>
                  </td>
                  <td data-testid="instance-streams">
                    {instance.listenStreams}
                    {instance.listenStreams > 0 && <span className="pill stream-pill">stream</span>}
                  </td>
                  <td title={instance.subscribedUris.join('\n')}>
                    {instance.subscribedUris.length}
                  </td>
                  <td>{instance.reads}</td>
                  <td data-testid="instance-changes">{instance.changesHandled}</td>
                  <td>{instance.published}</td>
                  <td data-testid="instance-from-others">
                    {scale.bus === 'memory' ? (
                      <span className="error-text">0 (no path)</span>
                    ) : (
                      instance.fromOthers
                    )}
                  </td>
                  <td>
                    {instance.busConnected === null
                      ? 'in-memory'
                      : instance.busConnected
                        ? 'Redis ✓'
                        : 'Redis ✗ reconnecting'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div className="recent">
            <div className="small muted">Latest changes and the instance that handled each</div>
            {scale.recentChanges.length === 0 ? (
              <div className="muted small">none yet: use the controls, the editor or the notes</div>
            ) : (
              <ol className="recent-list" data-testid="recent-changes">
                {scale.recentChanges.map((change) => (
                  <li
                    key={change.seq}
                    data-testid="recent-change"
                    data-seq={change.seq}
                    data-instance={change.instance}
                    data-what={change.what}
                  >
                    <code>{change.what}</code> → <strong>{change.instance}</strong>{' '}
                    <span className="muted">{ago(change.at, now)}</span>
                  </li>
                ))}
              </ol>
            )}
          </div>
        </div>
      ) : (
        <div className="muted">{state.error ? state.error.message : 'loading…'}</div>
      )}
    </Card>
  );
}
