import type { EventBus, McpEventInput } from './events';
import type { PartitionIdentity } from './partition';
import type { ServerRequests } from './serverRequests';
import type { Upstream } from './upstream';

/**
 * What optional parts of the package (the diagnostics, `callTool`,
 * `useElicitations`) may use of an McpCacheSync, without the class knowing
 * them: they are imported only by apps that use them, and so cost nothing in
 * a bundle that does not. Each takes the one capability it needs. Tab
 * sharing and sign-in are options the McpCacheSync is built with, and get
 * what they need then.
 */
export interface SyncInternals {
  /** The event stream, and the present state as events for a fold that starts late. */
  readonly events: { readonly bus: EventBus; facts(): McpEventInput[] };
  /** Where tool calls and task requests go, where the client is, where the log level is asked. */
  readonly upstream: Pick<Upstream, 'callTool' | 'request' | 'client' | 'setLogLevel'>;
  /** Whose data this is now: the server and the signed-in identity (where tasks are kept). */
  identity(): PartitionIdentity;
  /** The server's requests waiting for the user. */
  readonly serverRequests: ServerRequests | undefined;
  readonly diagnostics: {
    /** Minimum interval between diagnostics updates to subscribers (ms). */
    intervalMs: number | undefined;
    /** The silence probe's period (ms), when on. */
    silenceProbeMs: number | undefined;
    /** Read `uri` again (single flight, as a notification would). */
    reread(uri: string): void;
    /** Have each read's event carry `digest(contents)` from now on. */
    digestReads(digest: (contents: unknown) => string): void;
  };
  /** Aborted when the McpCacheSync is disposed. */
  readonly signal: AbortSignal;
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
