import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Protection, ProtectionOptions } from './protectedResource';
import type {
  ResourceStore,
  StoredPrompt,
  StoredResource,
  StoredTemplate,
  StoredTool,
} from './resourceStore';

export type ServerKind = 'modern' | 'legacy-v2' | 'legacy-v1';

/** All default to `true`. `false` means the capability is not declared at all. */
export interface ServerCapabilityOptions {
  /** `resources.subscribe`. */
  subscribe?: boolean;
  /** `resources.listChanged`. */
  listChanged?: boolean;
  /**
   * `tools: { listChanged: true }`, answering `tools/list` and `tools/call`. When `false` the
   * `tools` capability is absent and both methods answer MethodNotFound.
   */
  tools?: boolean;
  /**
   * `prompts: { listChanged: true }`, answering `prompts/list`. When `false` the `prompts`
   * capability is absent. (`resources/templates/list` is always answered: it belongs to the
   * resources capability.)
   */
  prompts?: boolean;
  /** `completions: {}`, answering `completion/complete` from the prompts' and templates' `completions`. */
  completions?: boolean;
  /** `logging: {}`: `logging/setLevel` (2025) and tools' `log` messages. */
  logging?: boolean;
  /**
   * legacy-v1 only: `tasks` (list, cancel, tools/call), so a tool call with `task` runs as a
   * 2025-11-25 task. Default `false`. The v2 server package refuses to send a task for
   * `tools/call` ("content is required when the body carries 'task'"), and 2026-07-28 moved
   * tasks to an extension: the other servers declare nothing.
   */
  tasks?: boolean;
}

export interface EndpointOptions {
  /** Shared data; a fresh empty store when omitted. */
  store?: ResourceStore;
  capabilities?: ServerCapabilityOptions;
  /**
   * When set, `resources/list`, `tools/list`, `prompts/list` and `resources/templates/list`
   * answer in pages of this size with an opaque `nextCursor`.
   */
  pageSize?: number;
  /** Server name in serverInfo; defaults to the kind. */
  name?: string;
  /**
   * legacy-v2 only: keep every SSE event in an event store, so a client resuming with
   * `Last-Event-ID` gets what it missed (a resumable 2025 server).
   */
  eventStore?: boolean;
  /** Errors the SDK reports out of band (rejected requests, failed sends). Silent by default. */
  onError?: (error: Error) => void;
}

export interface StartServerOptions extends EndpointOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /**
   * Protect `/mcp` with bearer tokens from an authorization server (`startAuthServer`): 401
   * with resource metadata without a valid token, 403 insufficient_scope for a request that
   * needs more (see `protectedResource.ts`).
   */
  auth?: ProtectionOptions;
}

export interface EndpointCounters {
  /** `subscriptions/listen` POSTs seen (modern). */
  listenRequests: number;
  /**
   * `resourceSubscriptions` entries summed over the `subscriptions/listen` POSTs seen, as the
   * client asked (before the server narrows anything). Modern only; 0 on the legacy servers.
   */
  listenFilterEntries: number;
  /** `resources/subscribe` requests, also the ones refused because the capability is off. */
  subscribeRequests: number;
  unsubscribeRequests: number;
  listRequests: number;
  /** `resources/read` requests served by this endpoint (the store counts across endpoints). */
  reads: number;
  /** `tools/list` requests (one per page). */
  toolListRequests: number;
  /** `prompts/list` requests (one per page). */
  promptListRequests: number;
  /** `resources/templates/list` requests (one per page). */
  templateListRequests: number;
  /**
   * `tools/call` requests that reached the server's handler, unknown tools included (on
   * 2026-07-28 every `input_required` round is a call of its own).
   */
  toolCalls: number;
  /** `notifications/roots/list_changed` received (2025 eras; 2026-07-28 has no such message). */
  rootsListChanged: number;
  /** `prompts/get` requests that reached the handler. */
  promptGets: number;
  /** `logging/setLevel` requests, and the level of the latest. */
  setLevelRequests: number;
  /** JSON-RPC messages seen by method (requests and notifications), as they arrived over HTTP. */
  methods: Record<string, number>;
}

/** Framework-agnostic: usable as Vite middleware and in node:http. */
export interface McpEndpoint {
  readonly kind: ServerKind;
  readonly store: ResourceStore;
  /** Serves one HTTP exchange; never rejects (failures become 500 or a destroyed socket). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** modern: to listen streams whose filter has uri; legacy: to sessions subscribed to uri. */
  resourceUpdated(uri: string): void;
  /** notifications/resources/list_changed to everyone who can receive it. */
  resourcesChanged(): void;
  /** store.setText + resourceUpdated(uri). */
  setText(uri: string, text: string): void;
  /** store.upsert + resourcesChanged(). */
  addResource(resource: StoredResource): void;
  /** store.remove + resourcesChanged(); returns whether the URI existed. */
  removeResource(uri: string): boolean;
  /**
   * notifications/tools/list_changed. modern: to listen streams whose acknowledged filter has
   * `toolsListChanged`; legacy: unsolicited to every live session. Only when `tools` is declared.
   */
  toolsChanged(): void;
  /** notifications/prompts/list_changed, like `toolsChanged`. */
  promptsChanged(): void;
  /** store.setTools + toolsChanged(). */
  setTools(tools: StoredTool[]): void;
  /** store.setPrompts + promptsChanged(). */
  setPrompts(prompts: StoredPrompt[]): void;
  /** store.setTemplates + resourcesChanged(). */
  setTemplates(templates: StoredTemplate[]): void;
  /**
   * Server-side truth, sorted and de-duplicated. legacy: union of URIs subscribed over live
   * sessions. modern: union of the acknowledged `resourceSubscriptions` of open listen streams.
   */
  subscribedUris(): string[];
  /** modern: open listen streams; legacy: open GET SSE streams. */
  openStreams(): number;
  /** legacy: sessions the server holds (initialized, not yet ended); modern (stateless): 0. */
  liveSessions(): number;
  counters(): EndpointCounters;
  resetCounters(): void;
  /**
   * Abruptly ends every long-lived notification stream (modern listen streams, legacy GET SSE
   * streams) by destroying its socket, like a network drop or a proxy cut. In-flight request
   * responses are left alone. The endpoint keeps serving.
   */
  dropStreams(): void;
  /** Ends everything this endpoint holds. Afterwards it is unusable. */
  close(): Promise<void>;
}

export interface RestartOptions {
  /**
   * `false` (default): like a killed process, sockets are destroyed first, so clients see
   * drops. `true`: the endpoint is closed first (modern listen streams end with a result).
   */
  graceful?: boolean;
}

/** One HTTP request as the server received it, before any check (protected or not). */
export interface RequestRecord {
  method: string;
  path: string;
  /** The `Authorization` header, as sent. */
  authorization: string | undefined;
  sessionId: string | undefined;
}

export interface TestServer extends McpEndpoint {
  /** http://127.0.0.1:<port>/mcp */
  readonly url: string;
  readonly port: number;
  /** With `auth`: the guard's metadata URL and what it answered. */
  readonly protection: Protection | undefined;
  /**
   * Stops and starts again on the same port with the same store. Legacy sessions are lost, like
   * a real process restart; open connections are destroyed. Counters keep accumulating.
   */
  restart(options?: RestartOptions): Promise<void>;
  /** Every HTTP request received since the server started (restarts included), in order. */
  requests(): RequestRecord[];
}
