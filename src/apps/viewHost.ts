/**
 * The host side of one MCP App view, without React: an ext-apps `AppBridge` whose server-facing
 * requests are served by this package instead of a raw SDK client (serverFacing.ts), and whose
 * lifecycle is bounded: the sandbox and the view initialise in time, the view's messages stay
 * within its limits, and it is told the call it shows only once initialised, in order.
 *
 * The bridge gets no SDK client on purpose: given one, AppBridge forwards requests past the
 * cache and installs its own `list_changed` handlers on the client, replacing the package's
 * (the SDK keeps one handler per method).
 */
import type {
  CallToolResult,
  Implementation,
  LoggingMessageNotification,
  Tool,
  Transport,
} from '@modelcontextprotocol/client';
import {
  AppBridge,
  type McpUiHostCapabilities,
  type McpUiHostContext,
  type McpUiMessageRequest,
  type McpUiMessageResult,
  type McpUiUpdateModelContextRequest,
} from '@modelcontextprotocol/ext-apps/app-bridge';
import { replaceEqualDeep } from '@tanstack/query-core';
import type { McpCacheSync } from '../core/mcpCacheSync';
import { DEFAULTS } from '../core/options';
import { TIMER_MAX_MS } from '../core/timerMs';
import { McpAppError } from './appErrors';
import { GuardedTransport } from './guardedTransport';
import { type AppLimits, floodMessage, limitsOf, MessageBudget } from './limits';
import { refused, serveServerFacing } from './serverFacing';
import { type AppTemplate, cspDroppedLog } from './uiResource';
import { ViewSubscriptions } from './viewSubscriptions';

/** What the host decides for a view. Every callback is optional; without one, the view is refused. */
export interface AppHostHandlers {
  /** `ui/message`: the view asks to add a message to the conversation. */
  onMessage?: (
    params: McpUiMessageRequest['params'],
  ) => McpUiMessageResult | undefined | Promise<McpUiMessageResult | undefined>;
  /** `ui/open-link` (http and https only): open it and return true, or return false to refuse. */
  onOpenLink?: (url: string) => boolean | Promise<boolean>;
  /** `ui/notifications/size-changed`: the size the view's content wants. */
  onSizeChange?: (size: { width?: number; height?: number }) => void;
  /** `notifications/message`: the view's log, and the host's warnings about it (`HOST_LOGGER`). */
  onLog?: (params: LoggingMessageNotification['params']) => void;
  /** `ui/update-model-context`: what the view wants the model to know from now on. */
  onUpdateModelContext?: (params: McpUiUpdateModelContextRequest['params']) => void | Promise<void>;
  /** Narrows what the view may call, beyond `_meta.ui.visibility` (which always applies). */
  allowToolCall?: (tool: Tool, args: Record<string, unknown> | undefined) => boolean;
  /**
   * Narrows what the view may read, subscribe to and list on its server: `resources/list` keeps
   * the URIs it accepts, `resources/templates/list` the templates whose `uriTemplate` text it
   * accepts as written. A predicate that throws refuses.
   */
  allowResource?: (uri: string) => boolean;
}

/** The call the view shows, as far as it got. */
export interface ToolCallState {
  /** The call's arguments, once complete. */
  input?: Record<string, unknown>;
  /** The arguments so far, while a model still streams them. */
  partialInput?: Record<string, unknown>;
  result?: CallToolResult;
  /** Set when the call was cancelled: why. */
  cancelled?: string;
}

export type ViewStatus =
  | { status: 'starting' }
  | { status: 'ready' }
  | { status: 'error'; error: McpAppError }
  | { status: 'closed' };

export interface ViewHostOptions extends AppHostHandlers {
  /** The view's own server: the only one it reaches. */
  sync: McpCacheSync;
  tool: Tool;
  template: AppTemplate;
  /**
   * To the sandbox proxy (a FrameTransport), or in tests one end of an in-memory pair. A
   * `closeReason` it sets before closing is the `CLOSED` error's message.
   */
  transport: Transport & { readonly closeReason?: string | undefined };
  hostContext?: McpUiHostContext;
  hostInfo?: Implementation;
  limits?: AppLimits;
  /**
   * How long the sandbox and the view may take to initialise (default 10 s; `Infinity`: as long
   * as a timer can wait, 24.8 days).
   */
  initTimeoutMs?: number;
  onStatus?: (status: ViewStatus) => void;
}

const DEFAULT_INIT_TIMEOUT_MS = 10_000;

/**
 * The wait a timer can take: past 2^31 - 1 ms (`Infinity` meant as "no limit"), `setTimeout`
 * fires at once, so that is waited instead; anything not a number from 1 is the default.
 */
const initTimeoutOf = (ms: number | undefined): number =>
  typeof ms === 'number' && ms >= 1 ? Math.min(ms, TIMER_MAX_MS) : DEFAULT_INIT_TIMEOUT_MS;

export class ViewHost {
  readonly #options: ViewHostOptions;
  readonly #bridge: AppBridge;
  readonly #transport: GuardedTransport;
  readonly #subscriptions: ViewSubscriptions;
  #status: ViewStatus = { status: 'starting' };
  #timer: ReturnType<typeof setTimeout> | undefined;
  #sentResource = false;
  #call: ToolCallState = {};
  #sent: { partial?: unknown; input: boolean; result: boolean; cancelled: boolean } = {
    input: false,
    result: false,
    cancelled: false,
  };
  #context: McpUiHostContext;
  #queue: Promise<void> = Promise.resolve();

  constructor(options: ViewHostOptions) {
    this.#options = options;
    const limits = limitsOf(options.limits);
    const { sync, template } = options;
    this.#context = { ...options.hostContext, toolInfo: { tool: options.tool } };
    this.#transport = new GuardedTransport(options.transport, {
      budget: new MessageBudget(limits),
      inFlight: limits.inFlight,
      charsPerMessage: limits.charsPerMessage,
      onFlood: (sized) => this.#fail(new McpAppError('FLOOD', floodMessage(limits, sized))),
    });
    this.#subscriptions = new ViewSubscriptions({
      queryClient: sync.queryClient,
      queryOptions: (uri) => sync.resourceQueryOptions(uri),
      updated: (uri) => this.#notify('notifications/resources/updated', { uri }),
      max: limits.subscriptions,
    });
    const capabilities: McpUiHostCapabilities = {
      serverTools: {},
      // `subscribe` is ext-apps #659's proposal, not yet in the spec's schema.
      serverResources: { subscribe: true } as McpUiHostCapabilities['serverResources'],
      logging: {},
      sandbox: { csp: template.csp },
      ...(options.onOpenLink && { openLinks: {} }),
      ...(options.onMessage && { message: { text: {} } }),
      ...(options.onUpdateModelContext && { updateModelContext: { text: {} } }),
    };
    this.#bridge = new AppBridge(null, options.hostInfo ?? DEFAULTS.clientInfo, capabilities, {
      hostContext: this.#context,
    });
    this.#serve();
  }

  get status(): ViewStatus {
    return this.#status;
  }

  /** Subscribed URIs (for tests and diagnostics). */
  get subscriptions(): string[] {
    return this.#subscriptions.uris;
  }

  /** Connects to the sandbox; the view must initialise within `initTimeoutMs`. */
  async start(): Promise<void> {
    const timeoutMs = initTimeoutOf(this.#options.initTimeoutMs);
    const seconds = `${Math.round(timeoutMs / 100) / 10} s`;
    this.#timer = setTimeout(() => {
      // Which of the two never came: the proxy page (a wrong URL, a sandbox server that is
      // down or refuses this host), or the view in it.
      const message = this.#sentResource
        ? `the view did not initialise within ${seconds}`
        : `the sandbox proxy did not answer within ${seconds}`;
      this.#fail(new McpAppError('INIT_TIMEOUT', message));
    }, timeoutMs);
    try {
      await this.#bridge.connect(this.#transport);
    } catch (error) {
      this.#fail(new McpAppError('CLOSED', `the view's bridge did not start`, { cause: error }));
    }
  }

  /** The tool call as it stands now; what the view has not been told yet is sent in order. */
  setCall(call: ToolCallState): void {
    this.#call = call;
    if (this.#status.status === 'ready') this.#flushCall();
  }

  setHostContext(context: McpUiHostContext | undefined): void {
    this.#context = { ...context, toolInfo: { tool: this.#options.tool } };
    if (this.#status.status === 'ready') this.#bridge.setHostContext(this.#context);
  }

  /** Ends the view: its subscriptions are released (after the usual linger) and nothing more is read. */
  async close(reason = 'the host closed the view'): Promise<void> {
    if (this.#status.status === 'closed') return;
    const wasReady = this.#status.status === 'ready';
    this.#setStatus({ status: 'closed' });
    this.#end();
    // Best effort: the frame is usually gone already, so nothing waits for the view's answer.
    if (wasReady) void this.#bridge.teardownResource({ reason }).catch(() => {});
    await this.#bridge.close().catch(() => {});
  }

  #fail(error: McpAppError): void {
    if (this.#status.status === 'error' || this.#status.status === 'closed') return;
    this.#setStatus({ status: 'error', error });
    this.#end();
    void this.#bridge.close().catch(() => {});
  }

  #end(): void {
    clearTimeout(this.#timer);
    this.#subscriptions.dispose();
  }

  #setStatus(status: ViewStatus): void {
    this.#status = status;
    this.#options.onStatus?.(status);
  }

  #live(): boolean {
    return this.#status.status === 'starting' || this.#status.status === 'ready';
  }

  /** One queue for everything sent to the view, so notifications arrive in the order given. */
  #notify(method: string, params: Record<string, unknown>): void {
    if (this.#status.status !== 'ready') return;
    this.#queue = this.#queue
      .then(() => this.#bridge.notification({ method, params }))
      .catch(() => {});
  }

  #flushCall(): void {
    const call = this.#call;
    const sent = this.#sent;
    if (!sent.input && call.input === undefined && call.partialInput !== undefined) {
      // By content: a host that renders a new but equal object each time must not re-send it.
      const partial = replaceEqualDeep(sent.partial, call.partialInput);
      if (partial !== sent.partial) {
        sent.partial = partial;
        this.#notify('ui/notifications/tool-input-partial', { arguments: call.partialInput });
      }
    }
    const finished = call.result !== undefined || call.cancelled !== undefined;
    if (!sent.input && (call.input !== undefined || finished)) {
      sent.input = true;
      this.#notify('ui/notifications/tool-input', { arguments: call.input ?? {} });
    }
    if (sent.result || sent.cancelled) return;
    if (call.result !== undefined) {
      sent.result = true;
      this.#notify('ui/notifications/tool-result', call.result);
    } else if (call.cancelled !== undefined) {
      sent.cancelled = true;
      this.#notify('ui/notifications/tool-cancelled', { reason: call.cancelled });
    }
  }

  #serve(): void {
    const bridge = this.#bridge;
    const options = this.#options;
    bridge.onsandboxready = () => {
      if (!this.#live()) return;
      // Once: a proxy that says it is ready again is a new document (its frame was moved in the
      // page, say), and the view that was in it is gone: it ends, and lets go of what it held.
      if (this.#sentResource) {
        this.#fail(new McpAppError('CLOSED', 'the sandbox proxy reloaded, and the view is gone'));
        return;
      }
      this.#sentResource = true;
      const dropped = cspDroppedLog(options.template);
      if (dropped) options.onLog?.(dropped);
      void bridge
        .sendSandboxResourceReady({ html: options.template.html, csp: options.template.csp })
        .catch(() => {});
    };
    bridge.oninitialized = () => {
      if (this.#status.status !== 'starting') return;
      clearTimeout(this.#timer);
      this.#setStatus({ status: 'ready' });
      bridge.setHostContext(this.#context);
      this.#flushCall();
    };
    bridge.onclose = () => {
      const reason = options.transport.closeReason ?? 'the connection to the view ended';
      if (this.#live()) this.#fail(new McpAppError('CLOSED', reason));
    };
    bridge.onsizechange = ({ width, height }) => {
      const size = (value: unknown) =>
        typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
      options.onSizeChange?.({ width: size(width), height: size(height) });
    };
    bridge.onloggingmessage = (params) => options.onLog?.(params);
    // The host's callbacks may take their time (a dialog, say): their requests keep their slots
    // until they return, cancelled or not.
    const guard = this.#transport;
    bridge.onmessage = guard.hold('ui/message', async (params) => {
      const answer = options.onMessage ? await options.onMessage(params) : { isError: true };
      return answer ?? {};
    });
    bridge.onopenlink = guard.hold('ui/open-link', async ({ url }) => {
      const approved = isWebUrl(url) && options.onOpenLink ? await options.onOpenLink(url) : false;
      return approved === true ? {} : { isError: true };
    });
    bridge.onupdatemodelcontext = guard.hold('ui/update-model-context', async (params) => {
      if (!options.onUpdateModelContext) throw refused('the host keeps no model context');
      await options.onUpdateModelContext(params);
      return {};
    });
    serveServerFacing(bridge, {
      sync: options.sync,
      guard,
      subscriptions: this.#subscriptions,
      live: () => this.#live(),
      ...(options.allowToolCall && { allowToolCall: options.allowToolCall }),
      ...(options.allowResource && { allowResource: options.allowResource }),
    });
  }
}

function isWebUrl(url: unknown): url is string {
  if (typeof url !== 'string') return false;
  try {
    const { protocol } = new URL(url);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}
