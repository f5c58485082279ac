import type { McpDiagnostics } from './checks';
import { Diagnostics } from './diagnostics';
import { digest } from './digest';
import { invalidDurationsOf } from './durations';
import type { McpEvent } from './events';
import { extendEverySync, internalsOf, type SyncInternals } from './internals';
import { onEnd } from './lifetime';

const attached = new WeakMap<object, Diagnostics>();

function attach(owner: object, internals: SyncInternals): Diagnostics {
  const existing = attached.get(owner);
  if (existing) return existing;
  const { events, signal } = internals;
  const { intervalMs, silenceProbeMs, reread, digestReads } = internals.diagnostics;
  // Silent changes are told by the contents' digests; only the diagnostics pay for them.
  digestReads(digest);
  const diagnostics = new Diagnostics({ emitEveryMs: intervalMs, clock: events.bus.clock });
  const at = events.bus.clock.now();
  for (const fact of events.facts()) diagnostics.apply({ ...fact, at } as McpEvent);
  const stop = events.bus.subscribe(diagnostics.apply);
  // The opt-in silence probe: a covered resource quiet for a period is read
  // once, and new content found that way shows as a silent change.
  // A period no timer can take ends the connection in error (durations.ts): no probe then.
  const probe =
    silenceProbeMs !== undefined &&
    silenceProbeMs > 0 &&
    invalidDurationsOf({ silenceProbeMs }) === undefined
      ? setInterval(() => {
          for (const uri of diagnostics.quiet(silenceProbeMs)) reread(uri);
        }, silenceProbeMs / 2)
      : undefined;
  const end = () => {
    stop();
    clearInterval(probe);
    diagnostics.dispose();
  };
  onEnd(signal, end);
  attached.set(owner, diagnostics);
  return diagnostics;
}

// An app that shows diagnostics anywhere wants them from the start of every
// connection; one that never does pays nothing (this module is not bundled).
extendEverySync(attach);

/** The four field checks of an McpCacheSync, live: `getSnapshot()` and `subscribe()`. */
export function mcpDiagnostics(sync: object): {
  getSnapshot(): McpDiagnostics;
  subscribe(listener: () => void): () => void;
} {
  return attach(sync, internalsOf(sync));
}
