import {
  type OAuthClientProvider,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { type BackoffOptions, backoffDelay } from './backoff';
import type { Clock } from './clock';
import { rewrap, type UpdateFilter } from './eventStream';
import { onEnd } from './lifetime';

/**
 * Whether the stream a 2025 session delivers notifications on is up:
 * `unknown` for a transport we cannot observe (assumed up), `resuming` while
 * the SDK reconnects it (`retry:` delay, `Last-Event-ID`), `unsupported`
 * when the server refused the standalone SSE stream (HTTP 405).
 */
export type LegacyStreamState = 'unknown' | 'opening' | 'open' | 'resuming' | 'unsupported';

/** Told, by the session that owns the transport, what the HTTP exchanges reveal. */
export interface TransportObserver {
  /**
   * The standalone SSE stream (GET) changed state. `open` says whether it
   * resumed with `Last-Event-ID` (the server replays what we missed) or
   * started fresh (anything sent meanwhile is lost).
   */
  stream(state: LegacyStreamState, resumed?: boolean): void;
  /**
   * The session is beyond saving: the server forgot it (HTTP 404 on a request
   * carrying its id: `forgotten`) or its stream could not be resumed.
   */
  sessionLost(reason: string, forgotten: boolean): void;
  /**
   * Which `updated` notifications on the notification streams (2025: the
   * GET stream; 2026-07-28: listen streams) nobody wants: they are dropped
   * before the SDK parses them, and counted.
   */
  updates?: UpdateFilter;
}

type Fetch = typeof fetch;

/** The first protocol version of the 2026-07-28 era (versions are dates: they sort as strings). */
const MODERN = '2026-07-28';

/** Resumption attempts of one stream before the session is given up and rebuilt. */
export const RESUME_ATTEMPTS = 3;

export interface HttpTransportOptions {
  fetch?: Fetch | undefined;
  authProvider?: OAuthClientProvider | undefined;
  /** Delays between resumption attempts when the server sends no `retry:`. */
  backoff: BackoffOptions;
  clock: Clock;
}

/**
 * The Streamable HTTP transport for `url`. The SDK's own resumption stays
 * on (rule 6): a stream that ends is re-opened in the same session after
 * the server's `retry:` delay, with `Last-Event-ID`, so a tool result sent
 * on a resumed response stream still arrives and notifications missed
 * meanwhile are replayed. The session is rebuilt only when that fails.
 */
export function createHttpTransport(
  url: URL,
  observer: TransportObserver,
  options: HttpTransportOptions,
): StreamableHTTPClientTransport {
  const standalone: StandaloneStream = {
    id: undefined,
    failures: 0,
    ended: false,
    youngDeaths: 0,
    openedAt: 0,
    opened: false,
  };
  /** The protocol version and credentials of the latest request, for a DELETE at page hide. */
  const sent = new Map<string, string>();
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: observedFetch(observer, standalone, sent, options),
    // Every resumption waits what the SDK says (the server's `retry:`, which
    // the spec says to respect) within the backoff's bounds: a `retry:` past
    // 2^31 - 1 ms would fire at once, and the SDK starts its count over at
    // each resumption that opened, so a stream resumed with `retry: 0` that
    // ends again at once would be asked in a tight loop. The standalone stream
    // waits longer the more often it died young, so a server that accepts it
    // and hangs up at once is not hammered.
    reconnectionScheduler: (reconnect, delay) => {
      const { initialDelayMs, maxDelayMs } = options.backoff;
      let wait = Math.max(initialDelayMs, Math.min(delay, maxDelayMs));
      if (standalone.ended) {
        standalone.ended = false;
        wait = Math.max(
          wait,
          backoffDelay(standalone.youngDeaths, options.backoff, () => 1),
        );
      }
      const timer = setTimeout(reconnect, wait);
      return () => clearTimeout(timer);
    },
    authProvider: options.authProvider,
    // The object replaces the SDK's defaults wholesale, so every field is given.
    reconnectionOptions: {
      initialReconnectionDelay: options.backoff.initialDelayMs,
      maxReconnectionDelay: options.backoff.maxDelayMs,
      reconnectionDelayGrowFactor: 2,
      maxRetries: RESUME_ATTEMPTS,
    },
  });
  endSessionOnPageHide(transport, url, sent, options.fetch ?? fetch);
  return transport;
}

/**
 * A page that goes away (its tab closed, or navigated elsewhere) ends its
 * 2025 session on the server as `dispose()` would (rule 11), with a DELETE
 * that outlives the page (`keepalive`). Without it the session, and what it
 * subscribed, stays on the server until the server expires it; and with
 * tab sharing every leader that closes would leave one behind. A page kept
 * in the back/forward cache may come back, so it keeps its session.
 */
function endSessionOnPageHide(
  transport: StreamableHTTPClientTransport,
  url: URL,
  sent: ReadonlyMap<string, string>,
  send: Fetch,
): void {
  const page = globalThis as {
    addEventListener?: (type: string, listener: (event: { persisted?: boolean }) => void) => void;
    removeEventListener?: (
      type: string,
      listener: (event: { persisted?: boolean }) => void,
    ) => void;
  };
  if (typeof document === 'undefined' || typeof page.addEventListener !== 'function') return;
  const onPageHide = (event: { persisted?: boolean }) => {
    const sessionId = transport.sessionId;
    if (event.persisted || sessionId === undefined) return;
    const headers = new Headers({ 'mcp-session-id': sessionId });
    for (const [name, value] of sent) headers.set(name, value);
    void send(url, { method: 'DELETE', headers, keepalive: true }).catch(() => {});
  };
  page.addEventListener('pagehide', onPageHide);
  // The client chains its own onclose after this one when it connects.
  transport.onclose = () => page.removeEventListener?.('pagehide', onPageHide);
}

/**
 * Wraps the transport's fetch so the session can see what the SDK's
 * Streamable HTTP transport does not report: when the 2025 era's standalone
 * SSE stream opens, ends and resumes, whether the server has one at all, and
 * a session the server forgot (restart). These decide whether notifications
 * were missed and whether the session must be rebuilt.
 *
 * It also ends the HTTP request of a call the client gave up on: on a 2025
 * connection the SDK only sends `notifications/cancelled` after a timeout and
 * leaves the request open, and a few hung reads would use up the browser's
 * ~6 connections per host. (On a 2026-07-28 connection the SDK aborts the
 * request itself, which is the cancellation there.)
 */
/** What the fetch wrapper and the resumption scheduler know of the standalone GET stream. */
interface StandaloneStream {
  /** The last event id seen on it: its resumptions carry it. */
  id: string | undefined;
  /** Consecutive attempts to open it that failed. */
  failures: number;
  /** It just ended: the next scheduled resumption is its own. */
  ended: boolean;
  /** Consecutive times it ended soon after opening. */
  youngDeaths: number;
  openedAt: number;
  /** It was open at least once in this session. */
  opened: boolean;
}

function observedFetch(
  observer: TransportObserver,
  stream: StandaloneStream,
  sent: Map<string, string>,
  options: HttpTransportOptions,
): Fetch {
  const base = options.fetch;
  const open = new Map<string | number, AbortController>();
  return async (input, init) => {
    const method = (
      init?.method ?? (input instanceof Request ? input.method : 'GET')
    ).toUpperCase();
    const given = init?.headers ?? (input instanceof Request ? input.headers : undefined);
    // Read only (the SDK hands a Headers): copied when a header is changed.
    const headers = given instanceof Headers ? given : new Headers(given);
    const message = method === 'POST' ? parseMessage(init?.body) : undefined;
    const cancelled =
      message?.method === 'notifications/cancelled' ? message.params?.requestId : undefined;
    // 2026-07-28 over HTTP: closing a request's stream is its cancellation (the
    // SDK aborts the request's own signal), and no notification is expected (a
    // stateless server could not even match it): the SDK's `notifications/cancelled`
    // for a closed listen stream does not cross the wire.
    const modern = (headers.get('mcp-protocol-version') ?? '') >= MODERN;
    if (cancelled !== undefined && modern) return new Response(null, { status: 202 });
    // 2025: the server may still say things on that stream (it cancels what
    // it asked us meanwhile, an elicitation say): cut it only after a moment.
    const abandoned = cancelled === undefined ? undefined : open.get(cancelled);
    if (abandoned) (setTimeout(() => abandoned.abort(), 2000) as { unref?: () => void }).unref?.();

    let id: string | number | undefined;
    let request = init;
    let unfollow: (() => void) | undefined;
    if (!modern && message?.id !== undefined && message.method !== undefined) {
      id = message.id;
      const controller = new AbortController();
      open.set(id, controller);
      // The caller's signal (often the transport's, which lives long) aborts
      // ours; let go with the request. Through onEnd: one listener on that
      // signal however many requests are in flight (a list of thousands).
      const upstream = init?.signal;
      if (upstream) unfollow = onEnd(upstream, () => controller.abort(upstream.reason));
      request = { ...init, signal: controller.signal };
    }
    const forget = () => {
      if (id !== undefined) open.delete(id);
      unfollow?.();
    };
    // A 2025 session ends with the credentials it was used with: after a
    // sign-out there are none, and another user's are not its own.
    const own = sent.get('authorization');
    if (method === 'DELETE' && own !== undefined) {
      const replaced = new Headers(headers);
      replaced.set('authorization', own);
      request = { ...request, headers: replaced };
    }
    for (const name of ['mcp-protocol-version', 'authorization']) {
      const value = headers.get(name);
      if (value !== null) sent.set(name, value);
    }
    // A GET is the standalone stream unless it resumes a response stream:
    // those carry a Last-Event-ID the standalone stream never sent.
    const lastEventId = headers.get('last-event-id') ?? undefined;
    const standalone =
      method === 'GET' &&
      (headers.get('accept') ?? '').includes('text/event-stream') &&
      (lastEventId === undefined || lastEventId === stream.id);
    const failedStandalone = () => {
      stream.failures += 1;
      if (stream.failures >= RESUME_ATTEMPTS) {
        observer.sessionLost('the SSE stream could not be resumed', false);
      }
    };
    let response: Response;
    try {
      response = await (base ?? globalThis.fetch)(input, request);
    } catch (error) {
      forget();
      if (standalone && !init?.signal?.aborted) failedStandalone();
      throw error;
    }

    // A media type is case-insensitive (`Text/Event-Stream; charset=UTF-8` is one too).
    const streamed = /text\/event-stream/i.test(String(response.headers.get('content-type')));
    if (response.status === 404 && headers.has('mcp-session-id')) {
      observer.sessionLost('the server no longer knows the session', true);
    } else if (standalone) {
      // A page where the stream should be (an app's fallback route answering every GET) is
      // no stream however often it is asked: the SDK is told what a 405 tells it.
      if (response.status === 405 || (response.ok && !streamed)) {
        void response.body?.cancel();
        // Refused after it was open in this session: not a server without a stream, but one
        // that changed under us (a deploy, another instance): a new session asks afresh.
        if (stream.opened) observer.sessionLost('the SSE stream was refused on resuming', false);
        else observer.stream('unsupported');
        return new Response(null, { status: 405 });
      }
      if (response.ok && response.body) {
        stream.failures = 0;
        stream.openedAt = options.clock.now();
        stream.opened = true;
        observer.stream('open', lastEventId !== undefined);
        return rewrap(response, {
          onEnd: () => {
            const young = options.clock.now() - stream.openedAt < options.backoff.maxDelayMs;
            stream.youngDeaths = young ? stream.youngDeaths + 1 : 0;
            stream.ended = true;
            observer.stream('resuming');
          },
          onEventId: (eventId) => {
            stream.id = eventId;
          },
          ...(observer.updates && { filter: observer.updates }),
        });
      } else {
        failedStandalone();
      }
    }
    // A JSON answer is whole once it arrives; a stream is followed to its end:
    // a 2025 one stays cancellable until then, a listen stream's notifications
    // are filtered like the 2025 stream's.
    const filter = message?.method === 'subscriptions/listen' ? observer.updates : undefined;
    if (!response.body || !streamed || (id === undefined && !filter)) {
      forget();
      return response;
    }
    return rewrap(response, { onEnd: forget, ...(filter && { filter }) });
  };
}

interface Message {
  id?: string | number;
  method?: string;
  params?: { requestId?: string | number };
}

function parseMessage(body: unknown): Message | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Message)
      : undefined;
  } catch {
    return undefined;
  }
}
