import type { Client } from '@modelcontextprotocol/client';
import type { EventBus, McpEventInput } from './events';
import type { McpCacheSyncOptions } from './options';

/**
 * What an auth provider may add so the connection follows sign-in
 * (`createOAuthProvider` from `mcp-react-query/auth` does).
 */
export interface AuthAware {
  /** Who is signed in now (stable across refreshes); undefined when nobody is. */
  identity?(): string | undefined;
  /** Follow this connection: report sign-ins, say what `authorize()` does. Returns unbind. */
  bind?(control: AuthControl): () => void;
}

export interface AuthControl {
  /**
   * Tokens changed: who is signed in now, and whether there is a token to
   * use (which resumes a connection waiting for one).
   */
  signedIn(identity: string | undefined, hasToken: boolean): void;
  /** What `useMcp().authorize()` does from now on. */
  setAuthorize(start: () => void): void;
  /** Signing in failed (an issuer mismatch, a refused registration…): the status says why. */
  failed(error: unknown): void;
}

/** A connected client's session, as optional parts see it. */
export interface ReadySession {
  readonly client: Client;
}

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
  /** The ready session (starting the connection if nothing else does), bounded by the request timeout. */
  session(signal?: AbortSignal): Promise<ReadySession>;
  /** A request on `session` failed: if for want of credentials, wait for them. */
  failed(session: ReadySession, error: unknown): void;
  readonly options: McpCacheSyncOptions;
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
