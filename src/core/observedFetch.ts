import type { LegacyStreamState } from './subscribeChannel';

export interface FetchObserver {
  /** The standalone SSE stream (GET) changed state. */
  stream(state: LegacyStreamState): void;
  /** The server no longer knows our session (HTTP 404 on a request carrying its id). */
  sessionLost(): void;
}

type Fetch = typeof fetch;

/**
 * Wraps the transport's fetch so the connection can see what the SDK's
 * Streamable HTTP transport does not report: when the 2025 era's standalone
 * SSE stream opens and ends, whether the server has one at all, and a session
 * the server forgot (restart). These are the signals that notifications can
 * no longer arrive, which is when subscriptions must be rebuilt.
 */
export function observedFetch(observer: FetchObserver, base?: Fetch): Fetch {
  return async (input, init) => {
    const method = (
      init?.method ?? (input instanceof Request ? input.method : 'GET')
    ).toUpperCase();
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : {}));
    const response = await (base ?? globalThis.fetch)(input, init);
    const isStandaloneStream =
      method === 'GET' && (headers.get('accept') ?? '').includes('text/event-stream');
    if (isStandaloneStream) {
      if (response.status === 405) {
        observer.stream('unsupported');
      } else if (response.ok && response.body) {
        observer.stream('open');
        return new Response(
          watchEnd(response.body, () => observer.stream('closed')),
          {
            status: response.status,
            statusText: response.statusText,
            headers: response.headers,
          },
        );
      }
    }
    if (response.status === 404 && headers.has('mcp-session-id')) observer.sessionLost();
    return response;
  };
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
