import { ago } from '../format';
import type { ResourceDiagnostics } from '../mcp';

/**
 * Per URI: who holds it, whether the server acknowledged it, and when it last moved.
 * `silentColumn`: also how often a read found new content no notification had announced.
 */
export function ResourceDiagnosticsTable(props: {
  resources: ResourceDiagnostics[];
  now: number;
  silentColumn?: boolean;
}) {
  return (
    <table className="table numbers">
      <thead>
        <tr>
          <th>URI</th>
          <th>refs</th>
          <th>acknowledged</th>
          <th>notifications</th>
          <th>last notification</th>
          <th>reads</th>
          <th>last read</th>
          {props.silentColumn && <th>silent changes</th>}
          <th>last error</th>
        </tr>
      </thead>
      <tbody>
        {props.resources.map((resource) => (
          <tr key={resource.uri} data-testid="diag-row" data-uri={resource.uri}>
            <td>
              <code>{resource.uri}</code>
            </td>
            <td data-testid="refs">{resource.refs}</td>
            <td data-testid="acknowledged">
              {resource.acknowledged
                ? 'yes'
                : resource.declined
                  ? `declined: ${resource.declined}`
                  : 'no'}
            </td>
            <td>{resource.notifications}</td>
            <td>{ago(resource.lastNotificationAt, props.now)}</td>
            <td>{resource.reads}</td>
            <td>{ago(resource.lastReadAt, props.now)}</td>
            {props.silentColumn && (
              <td data-testid="silent-changes">
                <span className={resource.silentChanges > 0 ? 'silent-count bad' : 'silent-count'}>
                  {resource.silentChanges}
                </span>
              </td>
            )}
            <td className="error-text" data-testid="last-error">
              {resource.lastError ?? ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
