import { type EndpointId, URIS } from '../../shared/demo';
import { useEventLog } from '../hooks/useEventLog';
import { ConfigEditor } from './ConfigEditor';
import { ConfigSummary } from './ConfigSummary';
import { ControlsCard } from './ControlsCard';
import { CountersCard } from './CountersCard';
import { DiagnosticsCard } from './DiagnosticsCard';
import { EndpointSwitch } from './EndpointSwitch';
import { EventLogCard } from './EventLogCard';
import { NotesCard } from './NotesCard';
import { ResourceListCard } from './ResourceListCard';
import { ResourcePanel } from './ResourcePanel';
import { ServerCard } from './ServerCard';
import { StatusBadge } from './StatusBadge';

export function Dashboard(props: { endpoint: EndpointId; onSwitch: (id: EndpointId) => void }) {
  const { log, snapshot } = useEventLog();
  return (
    <div className="page">
      <header className="topbar">
        <div className="brand">
          <h1>mcp-react-query</h1>
          <span className="muted">playground</span>
        </div>
        <EndpointSwitch value={props.endpoint} onChange={props.onSwitch} />
        <StatusBadge />
      </header>
      <main className="grid">
        <ResourcePanel testId="panel-clock" uri={URIS.clock} title="Clock" />
        <ResourcePanel testId="panel-counter" uri={URIS.counter} title="Counter" big />
        <ResourcePanel testId="panel-image" uri={URIS.image} title="Logo (binary)" />
        <ResourcePanel testId="panel-flaky" uri={URIS.flaky} title="Flaky report" />
        <ConfigEditor />
        <ResourcePanel testId="panel-config-raw" uri={URIS.config} title="Config (same URI)" />
        <ConfigSummary />
        <ControlsCard endpoint={props.endpoint} />
        <NotesCard />
        <ServerCard endpoint={props.endpoint} />
        <ResourceListCard />
        <CountersCard snapshot={snapshot} onReset={log.reset} />
        <DiagnosticsCard />
        <EventLogCard entries={snapshot.entries} />
      </main>
    </div>
  );
}
