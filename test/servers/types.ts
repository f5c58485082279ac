import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResourceStore, StoredResource } from './resourceStore';

export type ServerKind = 'modern' | 'legacy-v2' | 'legacy-v1';

/** Both default to `true`. `false` means the capability is not declared at all. */
export interface ServerCapabilityOptions {
  subscribe?: boolean;
  listChanged?: boolean;
}

export interface EndpointOptions {
  /** Shared data; a fresh empty store when omitted. */
  store?: ResourceStore;
  capabilities?: ServerCapabilityOptions;
  /** When set, `resources/list` answers in pages of this size with an opaque `nextCursor`. */
  pageSize?: number;
  /** Server name in serverInfo; defaults to the kind. */
  name?: string;
  /** Errors the SDK reports out of band (rejected requests, failed sends). Silent by default. */
  onError?: (error: Error) => void;
}

export interface StartServerOptions extends EndpointOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
}

export interface EndpointCounters {
  /** `subscriptions/listen` POSTs seen (modern). */
  listenRequests: number;
  /** `resources/subscribe` requests, also the ones refused because the capability is off. */
  subscribeRequests: number;
  unsubscribeRequests: number;
  listRequests: number;
  /** `resources/read` requests served by this endpoint (the store counts across endpoints). */
  reads: number;
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
   * Server-side truth, sorted and de-duplicated. legacy: union of URIs subscribed over live
   * sessions. modern: union of the acknowledged `resourceSubscriptions` of open listen streams.
   */
  subscribedUris(): string[];
  /** modern: open listen streams; legacy: open GET SSE streams. */
  openStreams(): number;
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

export interface TestServer extends McpEndpoint {
  /** http://127.0.0.1:<port>/mcp */
  readonly url: string;
  readonly port: number;
  /**
   * Stops and starts again on the same port with the same store. Legacy sessions are lost, like
   * a real process restart; open connections are destroyed. Counters keep accumulating.
   */
  restart(options?: RestartOptions): Promise<void>;
}
