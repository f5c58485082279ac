import type { ServerEvent } from '@modelcontextprotocol/server';

/** `createMcpHandler`'s result has it (as does anything `toNodeHandler` takes). */
export type McpFetch = (request: Request, ...rest: never[]) => Promise<Response>;

/**
 * What a bus does once it finds it lost events (a gap): nothing on the stream can bring them
 * back, so every client with a listen stream on this process must come to re-read what it shows.
 *
 * The SDK's `ServerEventBus` is only `publish` and `subscribe`: a listener is a closure over one
 * listen stream that writes the events its filter accepts, and nothing a bus can hand it ends
 * that stream. What a bus can do alone falls short: a `list_changed` makes a client re-read a
 * list, but a missed `notifications/resources/updated {uri}` is not repaired by it (a client
 * re-reads only the URIs whose list entry changed), and the bus cannot name the URIs each
 * stream subscribed to. So the repair that works for any client is to end the streams: the spec
 * lets a client assume nothing across a closed stream, and one that still wants events listens
 * again and reads what the new stream covers (mcp-react-query re-reads on the acknowledgement,
 * rule 6). Ending one needs its HTTP response, hence `bus.attach(handler)`.
 *
 * Both are done: the three `list_changed` go to every local listener (no wiring needed; the
 * lists of any client are repaired, and on an attached stream they are mostly cut off by its
 * end anyway), then every attached stream ends.
 */
export const AFTER_GAP: readonly ServerEvent[] = [
  { kind: 'resources_list_changed' },
  { kind: 'tools_list_changed' },
  { kind: 'prompts_list_changed' },
];

/** The header a 2026-07-28 request must carry; the SDK refuses one that differs from the body. */
const LISTEN = 'subscriptions/listen';

/**
 * The open `subscriptions/listen` responses of the handlers given to `attach`. Each passes
 * through an identity transform whose `terminate()` ends it where the frames already passed
 * through end: the client sees the stream end without a result (`'remote'` in the SDK client:
 * "re-listen if you still want events"). The pipe then cancels the SDK's own stream, which
 * unsubscribes its listener. Not the graceful result: that one is the SDK's to write, and it
 * says the server ended the subscription on purpose (a shutdown), not that events were lost.
 *
 * Once the bus is closed (`close()`), nothing reaches a listen stream any more, whether it was
 * open then or opens later (the handler still serves until the host closes it): every one ends,
 * a later one before its acknowledgement, so its client listens again, elsewhere.
 */
export class ListenStreams {
  readonly #open = new Set<() => void>();
  #closed = false;

  get size(): number {
    return this.#open.size;
  }

  wrap<F extends McpFetch>(fetch: F): F {
    const wrapped = async (request: Request, ...rest: never[]): Promise<Response> => {
      const response = await fetch(request, ...rest);
      return isListenStream(request, response) ? this.#track(response) : response;
    };
    return wrapped as F;
  }

  /** Ends every open one, and from now on each one as soon as it opens; returns how many. */
  close(): number {
    this.#closed = true;
    return this.endAll();
  }

  /** Ends every open one; returns how many. */
  endAll(): number {
    const ends = [...this.#open];
    this.#open.clear();
    for (const end of ends) end();
    return ends.length;
  }

  #track(response: Response): Response {
    const body = response.body as ReadableStream<Uint8Array>;
    let end = () => {};
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>({
      start(controller) {
        end = () => {
          try {
            controller.terminate();
          } catch {
            // Already ended.
          }
        };
      },
    });
    if (this.#closed) end();
    else this.#open.add(end);
    // Settles when either side is done: the SDK closed it, the client went away, or end().
    void body
      .pipeTo(writable)
      .catch(() => {})
      .finally(() => this.#open.delete(end));
    return new Response(readable, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }
}

function isListenStream(request: Request, response: Response): boolean {
  return (
    request.headers.get('mcp-method')?.trim() === LISTEN &&
    response.body !== null &&
    (response.headers.get('content-type') ?? '').startsWith('text/event-stream')
  );
}
