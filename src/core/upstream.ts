import type { CallToolResult, Client, LoggingLevel, Progress } from '@modelcontextprotocol/client';
import type { QueryClient, QueryKey } from '@tanstack/query-core';
import type { Clock } from './clock';
import type { EventBus, McpEventInput } from './events';
import type { Desire } from './interest';
import type { McpKeys } from './keys';
import type { NotifiedList } from './lists';
import type { PartitionIdentity } from './partition';
import type { ServerRequests } from './serverRequests';

/**
 * The requests `Upstream.request` sends (2025-11-25 tasks): a tool call with `task` (answered
 * at once with the task), and `tasks/cancel`. Whoever sends one checks first that the server
 * declared what it needs (`tasks.ts`).
 */
export type McpAction = 'tools/call' | 'tasks/cancel';

/** What a tool call takes: the tool, its arguments, and optionally where progress goes. */
export interface CallToolVariables {
  name: string;
  arguments?: Record<string, unknown>;
  /** Progress notifications of this call (and, 2026-07-28, each round of input it needed). */
  onProgress?: (progress: Progress) => void;
  /** Cancels the call: the server is told, and the call fails with `CANCELLED`. */
  signal?: AbortSignal;
  /** The call's timeout, started again by each progress notification (default `toolTimeoutMs`). */
  timeoutMs?: number;
  /** Its bound however much progress comes (default `toolMaxTotalTimeoutMs`). */
  maxTotalTimeoutMs?: number;
}

/**
 * Where an McpCacheSync's reads, calls, coverage and events come from: this
 * tab's own connection (`LocalUpstream`), or, with tab sharing, whichever tab
 * holds the connection. The McpCacheSync picks one when it is built and never
 * asks which it is again.
 */
export interface Upstream {
  /** The query function of every MCP key of the scope: one resource, or a whole list. */
  query(key: QueryKey, signal: AbortSignal): Promise<unknown>;
  callTool(variables: CallToolVariables): Promise<CallToolResult>;
  /** One of the few requests that are neither a query nor a plain tool call (`McpAction`). */
  request(
    method: McpAction,
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<unknown>;
  /** What this tab wants changed (one flush of the interest registry). */
  interest(desire: Desire): void;
  /** Ask the server for its log messages from `level` up (`useServerLog`); undefined: none asked. */
  setLogLevel(level: LoggingLevel | undefined): void;
  /** Whether the server covers `uri` / the list right now (fresh until notified, rule 7). */
  isCovered(uri: string): boolean;
  isListCovered(list: NotifiedList): boolean;
  /**
   * The connected SDK client, waiting (bounded) through connecting. Fails at
   * once where the client cannot be had (another tab holds it, `OTHER_TAB`).
   */
  client(signal?: AbortSignal): Promise<Client>;
  /** The client of the connection in this tab, if it is ready now (for `useMcp().client`). */
  readyClient(): Client | undefined;
  /** Connect (or join the tabs that share one). Idempotent. */
  start(): void;
  /** Close what was opened; resolves once it is closed on the server too (rule 11). */
  dispose(): Promise<void>;
}

/** The connection of this tab, as tab sharing drives it. */
export interface LocalUpstreamControl extends Upstream {
  /** Let the connection go but stay startable (another tab holds it now). */
  stop(): Promise<void>;
}

/**
 * What tab sharing is given of the McpCacheSync it serves: enough to hold
 * keys, read and call through the local connection when it leads, and relay
 * events, and nothing else.
 */
export interface TabContext {
  readonly queryClient: QueryClient;
  readonly keys: McpKeys;
  readonly bus: EventBus;
  /** The present state as events, for a tab that joins late. */
  facts(): McpEventInput[];
  /** Add to `facts()` (tab sharing's own state). */
  addFacts(facts: () => McpEventInput[]): void;
  /** Whose data this is: the server and the signed-in identity (a sharing group). */
  identity(): PartitionIdentity;
  /** Run whenever the signed-in identity changes (private data then belongs to someone else). */
  onIdentity(run: () => void): void;
  /** What is wanted in this tab now. */
  desire(): Desire;
  /** Whether `uri` is held or lingering in this tab. */
  wants(uri: string): boolean;
  readonly serverRequests: ServerRequests | undefined;
  readonly requestTimeoutMs: number;
  /** The longest a tool call may take however much progress comes (the leader enforces it). */
  readonly toolMaxTotalTimeoutMs: number;
  readonly clock: Clock;
  /** Something needs the connection: starts it, unless a provider's mount does. */
  demand(): void;
  /** Aborted when the McpCacheSync is disposed. */
  readonly signal: AbortSignal;
}

/** What a tab-sharing option does with the McpCacheSync it serves (once, when it is built). */
export interface TabSharingOption {
  upstream(local: LocalUpstreamControl, context: TabContext): Upstream;
}
