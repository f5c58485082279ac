import type {
  CallToolResult,
  Client,
  LoggingLevel,
  ServerCapabilities,
} from '@modelcontextprotocol/client';
import type { QueryKey } from '@tanstack/query-core';
import { McpQueryError } from './errors';
import type { McpEventInput } from './events';
import type { McpKeys, RequestKind } from './keys';
import { type NotifiedList, notifiedBy } from './lists';
import type { CallToolVariables } from './upstream';

/**
 * How the queries of prompts, completions and tasks run, and the notifications the dispatcher
 * passes on as events (log messages, task status): registered by the modules that use them
 * (`promptQueryOptions`, `useCompletion`, `useServerLog`, the tasks), and all of them by tab
 * sharing (the leading tab serves every tab's keys). An app that uses none of them carries none
 * of their code.
 */

/** How one request is sent: cancelled by the query's signal, bounded, with `_meta` if any. */
export interface AskOptions {
  signal: AbortSignal;
  timeout: number;
  /** `_meta` for the request (2026-07-28: the log level asked for: `logMeta`). */
  meta: LogMeta | undefined;
  /** What the cache holds for the key now. */
  cached: unknown;
}

/** How the query of one kind of request key runs on a connected client. */
export interface RequestHandler {
  /** The list whose `list_changed` keeps these fresh: a first read waits for its coverage. */
  list?: NotifiedList;
  /** How long what was read stays fresh (default 0), unless its list covers it. */
  staleTime?(data: unknown): number;
  run(client: Client, parts: readonly unknown[], options: AskOptions): Promise<unknown>;
}

/** A notification's params as an event, or why they are malformed. */
export type NotificationParser = (params: Record<string, unknown>) => McpEventInput | string;

/** How a tool call runs on a connected client (`callOn` in tools.ts). */
export type CallRunner = (
  client: Client,
  variables: CallToolVariables,
  timeouts: { timeoutMs: number; maxTotalTimeoutMs: number },
  meta?: LogMeta,
) => Promise<CallToolResult>;

let runCall: CallRunner | undefined;

/**
 * Tool calls, registered like the request kinds: by tools.ts, which every call goes through
 * (`callTool`, `useCallTool`, the servers manager, MCP Apps), and by tab sharing (the leading
 * tab runs other tabs' calls). An app that never calls a tool carries none of it.
 */
export function defineCalls(run: CallRunner): void {
  runCall = run;
}

export const callRunner = (): CallRunner | undefined => runCall;

const handlers = new Map<RequestKind, RequestHandler>();
const parsers = new Map<string, NotificationParser>();

export function defineRequest(kind: RequestKind, handler: RequestHandler): void {
  handlers.set(kind, handler);
}

export function requestHandler(kind: RequestKind | undefined): RequestHandler | undefined {
  return kind && handlers.get(kind);
}

/**
 * The list whose `list_changed` keeps a list or request key of `keys` fresh (a prompt: the
 * prompts list), if any.
 */
export function keptFreshBy(keys: McpKeys, key: QueryKey): NotifiedList | undefined {
  const kind = keys.listOf(key);
  return kind ? notifiedBy[kind] : requestHandler(keys.requestOf(key)?.kind)?.list;
}

export function defineNotification(method: string, parser: NotificationParser): void {
  parsers.set(method, parser);
}

export function notificationParser(method: string): NotificationParser | undefined {
  return parsers.get(method);
}

/** Whether the server declared this capability (an empty object declares it). */
export function supports(
  capabilities: ServerCapabilities | undefined,
  capability: keyof ServerCapabilities,
): boolean {
  const declared = capabilities?.[capability];
  return typeof declared === 'object' && declared !== null;
}

export function notSupported(capability: string): McpQueryError {
  return new McpQueryError(
    'NOT_SUPPORTED',
    `the server did not declare ${capability}; nothing was sent`,
  );
}

/** Request params' `_meta`, spread into them. */
export type LogMeta = { _meta: Record<string, unknown> };

/**
 * Where a 2026-07-28 server is told the log level (each request's `_meta`: it sends the
 * request's `notifications/message` only then); undefined on 2025, where `logging/setLevel`
 * says it once per session, and when nobody asked or the server declared no logging.
 */
export function logMeta(client: Client, level: string | undefined): LogMeta | undefined {
  return level !== undefined &&
    client.getProtocolEra() === 'modern' &&
    supports(client.getServerCapabilities(), 'logging')
    ? { _meta: { 'io.modelcontextprotocol/logLevel': level } }
    : undefined;
}

/**
 * Tell a 2025 server the log level (`logging/setLevel`), where it declared logging; undefined
 * where nothing is sent (2026-07-28 has no such request: `logMeta` says it per request).
 */
export function setLevel(client: Client, level: LoggingLevel | undefined) {
  return level !== undefined &&
    client.getProtocolEra() === 'legacy' &&
    supports(client.getServerCapabilities(), 'logging')
    ? client.setLoggingLevel(level)
    : undefined;
}
