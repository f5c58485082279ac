import { ENDPOINTS, type ScaleMode } from '../../shared/demo';
import { useDemoState } from '../hooks/useDemoState';
import { useMcpDiagnostics } from '../mcp';

/**
 * Scaled mode: which bus carries changes between the instances, and, live, whether this page
 * has seen a resource change without a notification (the `silent` check of useMcpDiagnostics).
 */
export function ScaleBanner(props: { scale: ScaleMode }) {
  const { bus, instances, silenceProbeMs } = props.scale;
  const redis = useDemoState().data?.scale?.redis;
  const diagnostics = useMcpDiagnostics();
  const silentCheck = diagnostics.checks.find((check) => check.id === 'silent');
  const silent = diagnostics.resources.filter((resource) => resource.silentChanges > 0);
  const ok = silentCheck?.ok ?? true;
  return (
    <section
      className={`scale-banner bus-${bus}`}
      data-testid="scale-banner"
      data-bus={bus}
      data-instances={instances}
    >
      <div className="scale-main">
        <div className="scale-title">
          <span className="scale-tag">scaled out</span>
          <strong>
            {instances} instance{instances === 1 ? '' : 's'} behind a round-robin proxy on{' '}
            <code>{ENDPOINTS.modern.path}</code>
          </strong>
          <span className={`bus-name bus-name-${bus}`} data-testid="scale-bus">
            bus: {bus === 'redis' ? 'Redis' : 'in-memory, one per instance'}
          </span>
        </div>
        <p className="scale-explain">
          {bus === 'redis' ? (
            <>
              Every instance publishes the changes it handles into one Redis stream
              {redis && (
                <>
                  {' '}
                  (<code>{redis.channel}</code> on <code>{redis.url}</code>, {redis.origin})
                </>
              )}{' '}
              and reads the others' events from it, so a change reaches this page's listen stream
              whichever instance holds it.
            </>
          ) : (
            <>
              On purpose, the failure mode: each instance has its own in-memory bus, so a change
              reaches only the listen streams on the instance that handled it. Make a few changes:
              the panels stay stale until the silence probe re-reads them, and the silent check
              turns red.
            </>
          )}{' '}
          Changes from the controls go to the next instance in turn; {ENDPOINTS.legacy.path} stays a
          single instance. Silence probe: a quiet acknowledged resource is re-read every{' '}
          {silenceProbeMs / 1000} s.
        </p>
      </div>
      <div
        className={`scale-silent ${ok ? 'ok' : 'bad'}`}
        data-testid="banner-silent"
        data-ok={String(ok)}
      >
        <div className="scale-silent-title">
          {ok ? '✓ no silent changes' : '✗ subscribed but silent'}
        </div>
        <div className="small">
          {ok
            ? 'no acknowledged resource changed without a notification'
            : silent.map((resource) => (
                <span key={resource.uri} className="silent-uri" data-uri={resource.uri}>
                  <code>{resource.uri}</code> ×{resource.silentChanges}
                </span>
              ))}
        </div>
      </div>
    </section>
  );
}
