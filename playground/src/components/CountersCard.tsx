import type { EventLogSnapshot } from '../eventLog';
import { Card } from './Card';
import { Stat } from './Stat';

/** Reads issued against notifications received: the single-flight rule, counted. */
export function CountersCard(props: { snapshot: EventLogSnapshot; onReset: () => void }) {
  const { totals, perUri } = props.snapshot;
  const rows = [...perUri].sort(([a], [b]) => a.localeCompare(b));
  return (
    <Card
      title="Reads vs notifications"
      subtitle="counted from useMcpEvents()"
      testId="counters"
      className="span-2"
      actions={
        <button type="button" data-testid="counters-reset" onClick={props.onReset}>
          Reset
        </button>
      }
    >
      <div className="stats">
        <Stat label="notifications" value={totals.notifications} testId="total-notifications" />
        <Stat label="reads issued" value={totals.reads} testId="total-reads" />
        <Stat label="read errors" value={totals.readErrors} />
        <Stat label="list reads" value={totals.listReads} />
        <Stat label="list_changed" value={totals.listChanged} />
        <Stat label="stream opens" value={totals.streamOpens} testId="total-stream-opens" />
        <Stat label="stream closes" value={totals.streamCloses} testId="total-stream-closes" />
        <Stat label="acks" value={totals.acks} />
      </div>
      <table className="table numbers">
        <thead>
          <tr>
            <th>URI</th>
            <th>notifications</th>
            <th>reads</th>
            <th>errors</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([uri, counts]) => (
            <tr key={uri} data-testid="uri-counters" data-uri={uri}>
              <td>
                <code>{uri}</code>
              </td>
              <td data-testid="notifications">{counts.notifications}</td>
              <td data-testid="reads">{counts.reads}</td>
              <td data-testid="read-errors">{counts.readErrors}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}
