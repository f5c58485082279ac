import type { EventBus, McpEventInput } from './events';

/**
 * What optional parts of the package (the diagnostics, tab sharing) need of
 * an McpCacheSync, without the class knowing them: they are imported only by
 * apps that use them, and so cost nothing in a bundle that does not.
 */
export interface SyncInternals {
  readonly bus: EventBus;
  /** The present state as events, for a fold that starts late. */
  facts(): McpEventInput[];
  /** Read `uri` again (single flight, as a notification would). */
  reread(uri: string): void;
  /** Asked when a read succeeds: should the reader say whether the content changed? */
  setCompare(compare: ((uri: string) => boolean) | undefined): void;
  readonly options: {
    silenceProbeMs: number | undefined;
    diagnosticsIntervalMs: number | undefined;
  };
  /** Run once when the McpCacheSync is disposed. */
  onDispose(run: () => void): void;
}

type Extension = (owner: object, internals: SyncInternals) => void;

const registry = new WeakMap<object, SyncInternals>();
const extensions: Extension[] = [];

export function registerInternals(owner: object, internals: SyncInternals): void {
  registry.set(owner, internals);
  for (const extend of extensions) extend(owner, internals);
}

export function internalsOf(owner: object): SyncInternals {
  const internals = registry.get(owner);
  if (!internals) throw new TypeError('not an McpCacheSync');
  return internals;
}

/** Run `extend` for every McpCacheSync made from now on. */
export function extendEverySync(extend: Extension): void {
  extensions.push(extend);
}
