import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/**
 * Whether the stream a 2025 session delivers notifications on is up:
 * `unknown` for a transport we cannot observe (assumed up), `unsupported`
 * when the server refused the standalone SSE stream (HTTP 405).
 */
export type LegacyStreamState = 'unknown' | 'opening' | 'open' | 'unsupported' | 'closed';

/** Told, by the session that owns the transport, what the HTTP exchanges reveal. */
export interface TransportObserver {
  /** The standalone SSE stream (GET) changed state. */
  stream(state: LegacyStreamState): void;
  /** The server no longer knows our session (HTTP 404 on a request carrying its id). */
  sessionLost(): void;
}

type Fetch = typeof fetch;

/**
 * The Streamable HTTP transport for `url`, reporting to `observer`. The
 * transport would quietly re-open the standalone SSE stream in the same
 * session, and notifications sent during the gap would be lost without
 * anyone knowing; its resumption is off, and the session reports the end of
 * the stream instead.
 */
export function createHttpTransport(
  url: URL,
  observer: TransportObserver,
  fetch?: Fetch,
): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(url, {
    fetch: observedFetch(observer, fetch),
    reconnectionOptions: {
      maxRetries: 0,
      initialReconnectionDelay: 1000,
      maxReconnectionDelay: 30_000,
      reconnectionDelayGrowFactor: 1.5,
    },
  });
}

/**
 * Wraps the transport's fetch so the connection can see what the SDK's
 * Streamable HTTP transport does not report: when the 2025 era's standalone
 * SSE stream opens and ends, whether the server has one at all, and a session
 * the server forgot (restart). These are the signals that notifications can
 * no longer arrive, which is when subscriptions must be rebuilt.
 *
 * It also ends the HTTP request of a call the client gave up on: on a 2025
 * connection the SDK only sends `notifications/cancelled` after a timeout and
 * leaves the request open, and a few hung reads would use up the browser's
 * ~6 connections per host.
 */
function observedFetch(observer: TransportObserver, base?: Fetch): Fetch {
  const open = new Map<string | number, AbortController>();
  return async (input, init) => {
    const method = (
      init?.method ?? (input instanceof Request ? input.method : 'GET')
    ).toUpperCase();
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : {}));
    const message = method === 'POST' ? parseMessage(init?.body) : undefined;
    const cancelled =
      message?.method === 'notifications/cancelled' ? message.params?.requestId : undefined;
    if (cancelled !== undefined) open.get(cancelled)?.abort();

    let id: string | number | undefined;
    let request = init;
    if (message?.id !== undefined && message.method !== undefined) {
      id = message.id;
      const controller = new AbortController();
      open.set(id, controller);
      const signals = init?.signal ? [init.signal, controller.signal] : [controller.signal];
      request = { ...init, signal: AbortSignal.any(signals) };
    }
    const forget = () => {
      if (id !== undefined) open.delete(id);
    };
    let response: Response;
    try {
      response = await (base ?? globalThis.fetch)(input, request);
    } catch (error) {
      forget();
      throw error;
    }

    const isStandaloneStream =
      method === 'GET' && (headers.get('accept') ?? '').includes('text/event-stream');
    if (isStandaloneStream) {
      if (response.status === 405) {
        observer.stream('unsupported');
      } else if (response.ok && response.body) {
        observer.stream('open');
        return rewrap(response, () => observer.stream('closed'));
      }
    }
    if (response.status === 404 && headers.has('mcp-session-id')) observer.sessionLost();
    if (id === undefined || !response.body) {
      forget();
      return response;
    }
    // A streamed answer stays cancellable until its body ends.
    return rewrap(response, forget);
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

function rewrap(response: Response, onEnd: () => void): Response {
  return new Response(watchEnd(response.body as ReadableStream<Uint8Array>, onEnd), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** The same bytes, plus a call when the stream ends, errors or is cancelled. */
function watchEnd(body: ReadableStream<Uint8Array>, onEnd: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          end();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        controller.error(error);
        end();
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}
