/**
 * The contract between the demo server (Node) and the page (browser): resource URIs, endpoint
 * paths and the control API's shapes. No imports, so both bundles can share it.
 */

export const ENDPOINTS = {
  modern: { path: '/mcp', label: '2026-07-28', hint: 'subscriptions/listen' },
  legacy: { path: '/mcp-legacy', label: '2025 legacy', hint: 'resources/subscribe' },
} as const;

export type EndpointId = keyof typeof ENDPOINTS;

export const ENDPOINT_IDS = Object.keys(ENDPOINTS) as EndpointId[];

export function isEndpointId(value: unknown): value is EndpointId {
  return typeof value === 'string' && Object.hasOwn(ENDPOINTS, value);
}

export const URIS = {
  clock: 'clock://now',
  counter: 'counter://demo',
  config: 'config://app',
  image: 'image://logo.png',
  flaky: 'report://flaky',
} as const;

export const NOTE_PREFIX = 'note://';

export const BURST_SIZE = 100;

/** What `GET /demo/state` answers: the server's own view, next to what the client believes. */
export interface DemoState {
  counter: number;
  failingReads: boolean;
  /** Epoch ms until which the endpoint answers 503, if it is in a simulated outage. */
  outageUntil: Record<EndpointId, number | undefined>;
  endpoints: Record<EndpointId, EndpointView>;
}

export interface EndpointView {
  /** URIs the server itself believes are subscribed right now. */
  subscribedUris: string[];
  openStreams: number;
  reads: number;
}

export interface NoteCreated {
  uri: string;
}
