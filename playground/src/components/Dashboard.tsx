import { type EndpointId, URIS } from '../../shared/demo';
import { useEventLog } from '../hooks/useEventLog';
import { SCALE } from '../scale';
import { ConfigEditor } from './ConfigEditor';
import { ConfigSummary } from './ConfigSummary';
import { ControlsCard } from './ControlsCard';
import { CountersCard } from './CountersCard';
import { DeploymentCard } from './DeploymentCard';
import { DiagnosticsCard } from './DiagnosticsCard';
import { EndpointSwitch } from './EndpointSwitch';
import { EventLogCard } from './EventLogCard';
import { HealthBadge } from './HealthBadge';
import { HealthCard } from './HealthCard';
import { LogsCard } from './LogsCard';
import { NotesCard } from './NotesCard';
import { PromptsCard } from './PromptsCard';
import { ResourceListCard } from './ResourceListCard';
import { ResourcePanel } from './ResourcePanel';
import { ScaleBanner } from './ScaleBanner';
import { ServerCard } from './ServerCard';
import { SlowToolCard } from './SlowToolCard';
import { StatusBadge } from './StatusBadge';
import { TabsBadge } from './TabsBadge';
import { TemplatesCard } from './TemplatesCard';
import { ToolsCard } from './ToolsCard';
import { TopBar } from './TopBar';

export function Dashboard(props: {
  endpoint: EndpointId;
  onSwitch: (id: EndpointId) => void;
  share: boolean;
  onShare: (share: boolean) => void;
  persist: boolean;
  onPersist: (persist: boolean) => void;
}) {
  const { log, snapshot } = useEventLog();
  return (
    <div className="page">
      <TopBar page="dashboard">
        <EndpointSwitch value={props.endpoint} onChange={props.onSwitch} />
        <StatusBadge />
        <HealthBadge />
        <TabsBadge share={props.share} onShare={props.onShare} />
        <label className="tabs-share" title="Keep the cache in localStorage: a reload starts warm">
          <input
            type="checkbox"
            data-testid="persist"
            checked={props.persist}
            onChange={(event) => props.onPersist(event.target.checked)}
          />
          warm reload
        </label>
      </TopBar>
      {SCALE && <ScaleBanner scale={SCALE} />}
      <main className="grid">
        <ResourcePanel testId="panel-clock" uri={URIS.clock} title="Clock" />
        <ResourcePanel testId="panel-counter" uri={URIS.counter} title="Counter" big />
        <ResourcePanel testId="panel-image" uri={URIS.image} title="Logo (binary)" />
        <ResourcePanel testId="panel-flaky" uri={URIS.flaky} title="Flaky report" />
        {/* Scaled mode: the instances, then the checks that tell whether the bus works. */}
        {SCALE && <DeploymentCard />}
        {SCALE && <DiagnosticsCard scaled />}
        <ConfigEditor />
        <ResourcePanel testId="panel-config-raw" uri={URIS.config} title="Config (same URI)" />
        <ConfigSummary />
        <ControlsCard endpoint={props.endpoint} />
        <ToolsCard />
        <SlowToolCard />
        <LogsCard />
        <HealthCard />
        <PromptsCard />
        <TemplatesCard />
        <NotesCard />
        <ServerCard endpoint={props.endpoint} />
        <ResourceListCard />
        <CountersCard snapshot={snapshot} onReset={log.reset} />
        {!SCALE && <DiagnosticsCard />}
        <EventLogCard entries={snapshot.entries} />
      </main>
    </div>
  );
}
