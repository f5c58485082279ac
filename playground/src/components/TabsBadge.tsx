import { useMcpDiagnostics } from '../mcp';

/**
 * Tab sharing at a glance: whether this tab holds the connection (the leader) or goes through
 * the one that does, how many tabs share it and how often the lead moved; a button that opens
 * another tab of this page, and the switch that turns sharing off (each tab its own stream).
 */
export function TabsBadge(props: { share: boolean; onShare: (share: boolean) => void }) {
  const tabs = useMcpDiagnostics().tabs;
  const role = !props.share
    ? 'own'
    : tabs === undefined
      ? 'joining'
      : tabs.leader
        ? 'leader'
        : 'follower';
  return (
    <div
      className="tabs-badge"
      data-testid="tabs-badge"
      data-role={role}
      data-tabs={tabs?.tabs ?? 1}
    >
      <span className={`tabs-role tabs-role-${role}`} data-testid="tabs-role">
        {role === 'own' ? 'own connection' : role}
      </span>
      {props.share && tabs && (
        <span className="muted" data-testid="tabs-count">
          {tabs.tabs} {tabs.tabs === 1 ? 'tab' : 'tabs'} · {tabs.handovers}{' '}
          {tabs.handovers === 1 ? 'handover' : 'handovers'}
        </span>
      )}
      <button
        type="button"
        className="status-action"
        data-testid="open-tab"
        onClick={() => window.open(window.location.href, '_blank')}
      >
        Open a tab
      </button>
      <label className="tabs-share">
        <input
          type="checkbox"
          data-testid="share-tabs"
          checked={props.share}
          onChange={(event) => props.onShare(event.target.checked)}
        />
        share across tabs
      </label>
    </div>
  );
}
