import type { McpDiagnostics } from './checks';
import { Diagnostics } from './diagnostics';
import type { McpEvent } from './events';
import { extendEverySync, internalsOf, type SyncInternals } from './internals';

const attached = new WeakMap<object, Diagnostics>();

function attach(owner: object, internals: SyncInternals): Diagnostics {
  const existing = attached.get(owner);
  if (existing) return existing;
  const { diagnosticsIntervalMs, silenceProbeMs } = internals.options;
  const diagnostics = new Diagnostics(
    diagnosticsIntervalMs === undefined ? undefined : { emitEveryMs: diagnosticsIntervalMs },
  );
  const at = Date.now();
  for (const fact of internals.facts()) diagnostics.apply({ ...fact, at } as McpEvent);
  const stop = internals.bus.subscribe(diagnostics.apply);
  internals.setCompare(diagnostics.wantsComparison);
  // The opt-in silence probe: a covered resource quiet for a period is read
  // once, and new content found that way shows as a silent change.
  const probe =
    silenceProbeMs !== undefined && silenceProbeMs > 0
      ? setInterval(() => {
          for (const uri of diagnostics.quiet(silenceProbeMs)) internals.reread(uri);
        }, silenceProbeMs / 2)
      : undefined;
  internals.onDispose(() => {
    stop();
    clearInterval(probe);
    diagnostics.dispose();
  });
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
