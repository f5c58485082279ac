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
  board: 'board://team',
  /** The demo's own MCP App: a view of the counter that subscribes to it (`show_counter`). */
  counterApp: 'ui://demo/counter.html',
} as const;

/**
 * The demo tools (Tools card): one asks the user, one reports a failure, one does not exist;
 * one is slow, with progress and log messages (Slow tool card: a progress bar and Cancel).
 */
export const TOOLS = {
  rename: 'rename_board',
  counterApp: 'show_counter',
  failing: 'check_links',
  missing: 'no_such_tool',
  slow: 'build_report',
} as const;

/** The slow tool's steps, and how long each takes. */
export const SLOW_STEPS = 10;
export const SLOW_STEP_MS = 600;

/** The board's content (`URIS.board`, JSON): what `rename_board` asks for and then changes. */
export interface Board {
  title: string;
  color: string;
  columns: number;
  notify: boolean;
}

export const BOARD_COLORS = ['blue', 'green', 'orange', 'purple'] as const;

// ── the protected endpoints (sign-in demo, `/signin`) ─────────────────────────────────────────

/** The same two eras behind bearer tokens from the demo authorization server. */
export const PROTECTED_ENDPOINTS = {
  modern: { path: '/mcp-protected', label: '2026-07-28' },
  legacy: { path: '/mcp-protected-legacy', label: '2025 legacy' },
} as const satisfies Record<EndpointId, { path: string; label: string }>;

/** Who can sign in on the demo authorization server's page. */
export const DEMO_USERS = ['alice', 'bob'] as const;

/** `cacheScope: 'private'`: what each signed-in user reads is their own. */
export const PRIVATE_URIS = {
  inbox: 'inbox://me',
} as const;

/** The browser's way back from the authorization server, one per protected endpoint. */
export function callbackPath(endpoint: EndpointId): string {
  return `/callback/${endpoint}`;
}

export type SignInMode = 'redirect' | 'popup';

// ── the Servers page (`/servers`, mcp-react-query/servers) ────────────────────────────────────

/** A second instance of the demo server (its own data, the same URIs and tool names). */
export const SECOND_ENDPOINT = { path: '/mcp-second', label: 'second instance' } as const;

/** Where the authorization server sends the browser back for any server of the Servers page. */
export const SERVERS_CALLBACK_PATH = '/callback/servers';

/** A path nothing serves: the Servers page's "broken URL" (404, not an MCP endpoint). */
export const BROKEN_PATH = '/no-such-mcp';

export const NOTE_PREFIX = 'note://';

export const BURST_SIZE = 100;

/** What `GET /demo/state` answers: the server's own view, next to what the client believes. */
export interface DemoState {
  counter: number;
  failingReads: boolean;
  /** Epoch ms until which the endpoint answers 503, if it is in a simulated outage. */
  outageUntil: Record<EndpointId, number | undefined>;
  endpoints: Record<EndpointId, EndpointView>;
  /** Only in scaled mode: the instances behind `/mcp` (the modern view above sums them). */
  scale?: ScaleView;
}

export interface EndpointView {
  /** URIs the server itself believes are subscribed right now. */
  subscribedUris: string[];
  openStreams: number;
  /** 2025 sessions the server holds (each with its own SSE GET); 0 on 2026-07-28. */
  sessions: number;
  reads: number;
}

export interface NoteCreated {
  uri: string;
}

// ── scale-out mode (`npm run playground -- --instances N [--bus redis|memory]`) ──────────────

export type BusKind = 'redis' | 'memory';

/**
 * How the page learns, before it connects, that it runs against a scaled deployment: the dev
 * plugin defines `__PLAYGROUND_SCALE__` as this (or `null` in the default single-process mode).
 */
export interface ScaleMode {
  instances: number;
  bus: BusKind;
  /** `silenceProbeMs` for the page's McpProvider: how "subscribed but silent" becomes visible. */
  silenceProbeMs: number;
}

/** Scaled mode only: one entry per instance of the 2026-07-28 server behind `/mcp`. */
export interface InstanceView {
  name: string;
  /** Its own loopback origin (the proxy's upstream). */
  origin: string;
  /** `subscriptions/listen` streams open on this instance. */
  listenStreams: number;
  /** Union of the resourceSubscriptions of those streams. */
  subscribedUris: string[];
  /** `resources/read` requests this instance served. */
  reads: number;
  /** Control-API changes this instance handled (and published on its own bus). */
  changesHandled: number;
  /** Events published on this instance's bus (changes it handled, and the clock ticks it ran). */
  published: number;
  /** Events from other instances this instance's bus received (always 0 on an in-memory bus). */
  fromOthers: number;
  /** Redis bus: its reading connection is up. `null` for an in-memory bus. */
  busConnected: boolean | null;
}

export interface HandledChange {
  seq: number;
  /** The instance that handled the request, e.g. `instance-2`. */
  instance: string;
  /** Control-API route, e.g. `POST /demo/burst`. */
  what: string;
  at: number;
}

export interface ScaleView {
  bus: BusKind;
  /** Redis: where the bus runs, and who started it. */
  redis?: { url: string; channel: string; origin: string };
  instances: InstanceView[];
  /** The latest control-API changes, newest first, with the instance each landed on. */
  recentChanges: HandledChange[];
}

export interface ScaledAnswer {
  /** Scaled mode: the instance that handled a control-API change. */
  handledBy?: string;
}

// ── MCP Apps (issue 20) ───────────────────────────────────────────────────────────────────────

/** The official example app servers from npm the playground runs beside the demo. */
export const EXAMPLE_APPS = [
  { id: 'basic-react', label: 'server-basic-react', tool: 'get-time' },
  { id: 'basic-vanillajs', label: 'server-basic-vanillajs', tool: 'get-time' },
] as const;

export type ExampleAppId = (typeof EXAMPLE_APPS)[number]['id'];

/** What `GET /demo/apps` answers: where views run. */
export interface AppsInfo {
  /** The sandbox proxy page, on its own port (another origin than the page). */
  sandbox: string;
}

/**
 * What `GET /demo/apps/examples` answers (starting them on the first call): each example
 * server's MCP endpoint, or why it is not running.
 */
export type ExampleServers = Record<ExampleAppId, { url: string } | { error: string }>;
