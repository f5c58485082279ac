import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import type { QueryClient, QueryKey } from '@tanstack/query-core';
import type { EventBus, McpEventInput } from './events';
import type { Desire } from './interest';
import type { McpKeys } from './keys';
import type { NotifiedList } from './lists';
import type { McpCacheSyncOptions } from './options';
import type { PartitionIdentity } from './partition';
import type { CallToolVariables } from './tools';

/**
 * What an auth provider may add so the connection follows sign-in
 * (`createOAuthProvider` from `mcp-react-query/auth` does).
 */
export interface AuthAware {
  /**
   * Why it must not sign in to `url`, if so (its tokens are another
   * server's): the connection fails with that error and sends nothing.
   */
  refuse?(url: URL): Error | undefined;
  /** Who is signed in now (stable across refreshes); undefined when nobody is. */
  identity?(): string | undefined;
  /** Follow this connection: report sign-ins, say what `authorize()` does. Returns unbind. */
  bind?(control: AuthControl): () => void;
}

export interface AuthControl {
  /**
   * Tokens changed: who is signed in now, and whether there is a token to
   * use (which resumes a connection waiting for one). `renew`: someone else
   * signed in, or nobody is: what the previous credentials opened (a
   * stream, a 2025 session) ends, and the connection starts again.
   */
  signedIn(identity: string | undefined, hasToken: boolean, renew?: boolean): void;
  /** What `useMcp().authorize()` does from now on. */
  setAuthorize(start: () => void): void;
  /** Signing in failed (an issuer mismatch, a refused registration…): the status says why. */
  failed(error: unknown): void;
}

/**
 * Another tab's McpCacheSync that owns the connection: a follower tab reads,
 * holds and calls through it, and opens no connection of its own.
 */
export interface Remote {
  read(queryKey: QueryKey, signal: AbortSignal): Promise<unknown>;
  callTool(variables: CallToolVariables): Promise<CallToolResult>;
  /** This tab's wanted set changed (one flush of the interest registry). */
  interest(desire: Desire): void;
  isCovered(uri: string): boolean;
  isListCovered(list: NotifiedList): boolean;
  /**
   * For `whenReady()`: settles once this tab leads (its own connection serves then), and
   * fails, clearly, while another tab does (the SDK client is there) or when none does in time.
   */
  leading(signal: AbortSignal | undefined, timeoutMs: number): Promise<void>;
}

/** What a tab-sharing option is given of the McpCacheSync it serves (once, when it starts). */
export interface TabSharingOption {
  attach(owner: object, internals: SyncInternals): void;
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
  /** Add to `facts()` (an optional part's own state, e.g. tab sharing's). */
  addFacts(facts: () => McpEventInput[]): void;
  /** Read `uri` again (single flight, as a notification would). */
  reread(uri: string): void;
  /** Asked when a read succeeds: should the reader say whether the content changed? */
  setCompare(compare: ((uri: string) => boolean) | undefined): void;
  /** The ready session (starting the connection if nothing else does), bounded by the request timeout. */
  session(signal?: AbortSignal): Promise<ReadySession>;
  /** A request on `session` failed: if for want of credentials, wait for them. */
  failed(session: ReadySession, error: unknown): void;
  readonly options: McpCacheSyncOptions;
  readonly queryClient: QueryClient;
  readonly keys: McpKeys;
  /** Whose data this is: the server and the signed-in identity (a sharing group). */
  identity(): PartitionIdentity;
  /** What is wanted in this tab now. */
  desire(): Desire;
  /** Read and hold through another tab from now on (undefined: this tab connects itself). */
  setRemote(remote: Remote | undefined): void;
  remote(): Remote | undefined;
  /** Run whenever the signed-in identity changes (private data then belongs to someone else). */
  onIdentity(run: () => void): void;
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

/** Engines started by their owner's lifecycle (a provider's mount), never by a query. */
const ownerStarted = new WeakSet<object>();

/**
 * For McpProvider: start only when mounted. A query that runs first (a
 * child's effect runs before its parent's) waits for the mount; on the
 * server, where nothing mounts, it fails at once instead of connecting.
 */
export function startOnMount(sync: object): void {
  ownerStarted.add(sync);
}

export function startedByOwner(sync: object): boolean {
  return ownerStarted.has(sync);
}
