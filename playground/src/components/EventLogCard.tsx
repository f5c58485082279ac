import { useState } from 'react';
import type { LoggedEvent } from '../eventLog';
import { clockTime } from '../format';
import { describeEvent } from '../mcp';
import { Card } from './Card';

/** The newest events first: notifications, reads, list refetches, stream and status changes. */
export function EventLogCard(props: { entries: LoggedEvent[] }) {
  const [filter, setFilter] = useState('');
  const [hideClock, setHideClock] = useState(false);
  const needle = filter.trim().toLowerCase();
  const shown = props.entries
    .map((entry) => ({ entry, ...describeEvent(entry.event) }))
    .filter(({ label, detail }) => {
      if (hideClock && detail.startsWith('clock://')) return false;
      return needle === '' || `${label} ${detail}`.toLowerCase().includes(needle);
    });
  return (
    <Card
      title="Event log"
      subtitle="useMcpEvents()"
      testId="event-log"
      className="span-4"
      actions={
        <>
          <label className="toggle small">
            <input
              type="checkbox"
              checked={hideClock}
              onChange={(event) => setHideClock(event.target.checked)}
            />
            hide clock
          </label>
          <input
            className="filter"
            placeholder="filter…"
            value={filter}
            onChange={(event) => setFilter(event.target.value)}
            aria-label="Filter events"
          />
        </>
      }
    >
      <ol className="log">
        {shown.map(({ entry, label, detail, tone }) => (
          <li
            key={entry.id}
            className={`tone-${tone}`}
            data-testid="log-entry"
            data-type={entry.event.type}
          >
            <time>{clockTime(entry.event.at)}</time>
            <span className="log-label">{label}</span>
            <span className="log-detail">{detail}</span>
          </li>
        ))}
      </ol>
    </Card>
  );
}
