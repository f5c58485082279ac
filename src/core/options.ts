import type {
  Client,
  Implementation,
  OAuthClientProvider,
  Transport,
} from '@modelcontextprotocol/client';
import type { QueryClient } from '@tanstack/query-core';
import type { ProtocolChoice } from './clientSource';
import type { Clock } from './clock';
import type { KeepAlive } from './keepAlive';
import type { ServerRequests } from './serverRequests';
import type { TabSharingOption } from './upstream';

export interface McpCacheSyncOptions {
  queryClient: QueryClient;
  /** Streamable HTTP endpoint. Exactly one of `url`, `client`, `transport`. */
  url?: string | URL;
  /** A connected SDK client owned by the host (never closed by us). */
  client?: Client;
  /** Creates a fresh transport for each (re)connection. */
  transport?: () => Transport;
  /**
   * OAuth for `url`: the SDK's `OAuthClientProvider` (for browsers,
   * `createOAuthProvider` from `mcp-react-query/auth`). The connection is
   * `unauthorized` until it has a token; `authorize()` starts the sign-in.
   */
  authProvider?: OAuthClientProvider;
  /** fetch used with `url` (defaults to the global one). */
  fetch?: typeof fetch;
  clientInfo?: Implementation;
  protocol?: ProtocolChoice;
  /** Prefix every key with `['mcp', scope]` (several servers, one QueryClient). */
  scope?: string;
  /**
   * Identity of the signed-in user. Data read with `cacheScope: 'private'`
   * under one context is removed when another one starts.
   */
  authContext?: string;
  /** How long a released URI stays wanted (ms). */
  lingerMs?: number;
  /** Reconnect and re-listen backoff (ms). */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /**
   * Bound on waiting for a subscription's acknowledgement (ms): a listen request's timeout, and how
   * long a first read waits for coverage while nothing is acknowledged (at most `requestTimeoutMs`,
   * not counting while a 2025 subscribe for it waits its turn or is in flight: that request's
   * answer or timeout ends the wait).
   */
  ackTimeoutMs?: number;
  /** Bound on every request, and on a read's wait for the connection (ms). */
  requestTimeoutMs?: number;
  /** Minimum interval between diagnostics updates to subscribers (ms). */
  diagnosticsIntervalMs?: number;
  /**
   * Off by default. When set, a subscribed, acknowledged resource that has
   * been quiet (no notification, no read) this long is read once to check:
   * new content found that way is counted in the diagnostics as a silent
   * change — how a server that publishes on another process or instance
   * shows up. Costs one read per quiet resource per period.
   */
  silenceProbeMs?: number;
  /** Bound on a tool call; progress notifications restart it (ms, default 120 s). */
  toolTimeoutMs?: number;
  /**
   * Off by default. `keepAlive({ pingIntervalMs })`: a connection that heard nothing from the
   * server for that long pings it (2026-07-28: `server/discover`); no answer within
   * `requestTimeoutMs` makes the connection reconnect. The round trip shows in the diagnostics
   * (`health`).
   */
  keepAlive?: KeepAlive;
  /** Bound on a tool call however much progress comes (ms, default 30 min). */
  toolMaxTotalTimeoutMs?: number;
  /**
   * Let the server ask things of the client (elicitation, sampling, roots):
   * `createServerRequests({ … })`. Without it the client declares none.
   */
  serverRequests?: ServerRequests;
  /**
   * One connection for every tab of this app (per server, scope and
   * identity): `shareAcrossTabs()` from `mcp-react-query/tabs`.
   */
  shareAcrossTabs?: TabSharingOption;
  /**
   * Where time and randomness come from (default: the system's). For tests
   * that drive time; nothing in the package reads the clock any other way.
   */
  clock?: Clock;
}

export const DEFAULTS = {
  clientInfo: { name: 'mcp-react-query', version: '0.1.0' },
  lingerMs: 1000,
  ackTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  toolTimeoutMs: 120_000,
  toolMaxTotalTimeoutMs: 1_800_000,
};
