/**
 * The 2026-07-28 ("modern") server: stateless, one McpServer per HTTP request from
 * `createMcpHandler`, change notifications only on `subscriptions/listen` streams.
 *
 * The SDK keeps its listen streams to itself, so to know what is subscribed right now the
 * endpoint watches the HTTP exchanges: it spots `subscriptions/listen` POSTs, reads the
 * acknowledged filter out of the response's first SSE frame and follows the response body until
 * it ends or is cancelled. That is the server's own truth (after capability narrowing), not what
 * some client believes it asked for.
 */
import type { ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  type McpHandlerRequestOptions,
  McpServer,
} from '@modelcontextprotocol/server';
import { startHostedServer } from './httpHost';
import {
  countMethods,
  createCatalogService,
  createResourceService,
  endpointName,
  failExchange,
  finishEndpoint,
  newCounters,
  resolveCapabilities,
  sortedUnique,
} from './protocol';
import { ResourceStore } from './resourceStore';
import type { EndpointOptions, McpEndpoint, StartServerOptions, TestServer } from './types';
import { installV2CatalogHandlers, installV2ResourceHandlers, v2Capabilities } from './v2Handlers';

const LISTEN_METHOD = 'subscriptions/listen';
const ACK_METHOD = 'notifications/subscriptions/acknowledged';
// The ack is the first frame; if it has not shown up by then something is off and scanning
// every later notification for it would only cost time.
const ACK_SCAN_LIMIT = 64 * 1024;
// How long close() waits for listen responses to flush their final frame; a stuck client must
// not hold a test teardown hostage.
const CLOSE_DRAIN_MS = 1000;

interface ListenStream {
  res: ServerResponse;
  /** Acknowledged resourceSubscriptions; empty until the ack frame went out. */
  uris: string[];
}

interface PeekedRequest {
  method: string | undefined;
  /** `params.notifications.resourceSubscriptions` entries (listen requests). */
  filterEntries: number;
}

async function peekRequest(request: Request): Promise<PeekedRequest> {
  const none = { method: undefined, filterEntries: 0 };
  if (request.method !== 'POST') return none;
  try {
    // A clone, so the handler still gets an unread body.
    const body: unknown = await request.clone().json();
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return none;
    const { method, params } = body as {
      method?: unknown;
      params?: { notifications?: { resourceSubscriptions?: unknown } };
    };
    const uris = params?.notifications?.resourceSubscriptions;
    return {
      method: typeof method === 'string' ? method : undefined,
      filterEntries: Array.isArray(uris) ? uris.length : 0,
    };
  } catch {
    return none;
  }
}

function ackedSubscriptions(frame: string): string[] | undefined {
  const data = frame
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');
  if (!data.includes(ACK_METHOD)) return undefined;
  try {
    const message = JSON.parse(data) as {
      method?: string;
      params?: { notifications?: { resourceSubscriptions?: unknown } };
    };
    if (message.method !== ACK_METHOD) return undefined;
    const uris = message.params?.notifications?.resourceSubscriptions;
    return Array.isArray(uris) ? uris.filter((u): u is string => typeof u === 'string') : [];
  } catch {
    return undefined;
  }
}

/**
 * Passes the SSE body through untouched while noticing the ack and the end of the stream
 * (drained, errored, or cancelled because the client or the connection went away).
 */
function trackBody(
  source: ReadableStream<Uint8Array>,
  onAck: (uris: string[]) => void,
  onEnd: () => void,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const decoder = new TextDecoder();
  let scanning = true;
  let buffered = '';
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  const scan = (chunk: Uint8Array) => {
    buffered += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n');
    let boundary = buffered.indexOf('\n\n');
    while (scanning && boundary !== -1) {
      const uris = ackedSubscriptions(buffered.slice(0, boundary));
      buffered = buffered.slice(boundary + 2);
      if (uris) {
        scanning = false;
        onAck(uris);
      }
      boundary = buffered.indexOf('\n\n');
    }
    if (buffered.length > ACK_SCAN_LIMIT) scanning = false;
    if (!scanning) buffered = '';
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
          return;
        }
        if (scanning) scan(value);
        controller.enqueue(value);
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}

export function createModernEndpoint(options: EndpointOptions = {}): McpEndpoint {
  const store = options.store ?? new ResourceStore();
  const caps = resolveCapabilities(options.capabilities);
  const counters = newCounters();
  const service = createResourceService(store, counters, options.pageSize);
  const catalog = createCatalogService(store, counters, options.pageSize);
  const name = endpointName('modern', options);
  const onerror = (error: Error) => options.onError?.(error);
  const streams = new Set<ListenStream>();
  // Listen responses still being written, including ones whose body already ended: a graceful
  // close must let the final result frame reach the socket before anyone destroys it.
  const responses = new Set<Promise<void>>();

  const handler = createMcpHandler(
    (ctx) => {
      const server = new McpServer(
        { name, version: '1.0.0' },
        { capabilities: v2Capabilities(caps) },
      );
      // The same factory also serves the SDK's stateless 2025 fallback and the discover probe;
      // cache hints only exist on 2026-era results (and only on reads).
      installV2ResourceHandlers(server, service, { cacheHints: ctx.era === 'modern' });
      installV2CatalogHandlers(server, catalog, caps, { modern: ctx.era === 'modern' });
      return server;
    },
    { onerror },
  );

  async function observe(
    request: Request,
    requestOptions: McpHandlerRequestOptions | undefined,
    res: ServerResponse,
  ): Promise<Response> {
    const { method, filterEntries } = await peekRequest(request);
    countMethods(counters, { method });
    const isListen = method === LISTEN_METHOD;
    if (isListen) {
      counters.listenRequests += 1;
      counters.listenFilterEntries += filterEntries;
    }
    const response = await handler.fetch(request, requestOptions);
    const isStream = response.headers.get('content-type')?.startsWith('text/event-stream') ?? false;
    if (!isListen || !isStream || response.body === null) return response;
    // Settles when the HTTP response is over, flushed or torn down.
    const finished = new Promise<void>((resolve) => res.once('close', () => resolve()));
    const stream: ListenStream = { res, uris: [] };
    streams.add(stream);
    responses.add(finished);
    void finished.then(() => {
      streams.delete(stream);
      responses.delete(finished);
    });
    const body = trackBody(
      response.body,
      (uris) => {
        stream.uris = uris;
      },
      () => streams.delete(stream),
    );
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }

  return finishEndpoint({
    kind: 'modern',
    store,
    counters,
    async handle(req, res) {
      // A fresh adapter per exchange so the fetch face knows which Node response it feeds;
      // dropStreams needs that socket.
      const adapter = toNodeHandler(
        { fetch: (request, requestOptions) => observe(request, requestOptions, res) },
        { onerror },
      );
      try {
        await adapter(req, res, (req as { body?: unknown }).body);
      } catch (error) {
        onerror(error instanceof Error ? error : new Error(String(error)));
        failExchange(res, 500, -32603, 'Internal server error');
      }
    },
    resourceUpdated(uri) {
      handler.notify.resourceUpdated(uri);
    },
    resourcesChanged() {
      // Not gated on caps.listChanged on purpose: the SDK narrows each ack to the declared
      // capabilities, so streams simply do not carry it (the tests check that).
      handler.notify.resourcesChanged();
    },
    toolsChanged() {
      // Same as resourcesChanged: with tools off the SDK drops toolsListChanged from every ack.
      handler.notify.toolsChanged();
    },
    promptsChanged() {
      handler.notify.promptsChanged();
    },
    subscribedUris() {
      return sortedUnique([...streams].flatMap((stream) => stream.uris));
    },
    liveSessions() {
      return 0;
    },
    openStreams() {
      return streams.size;
    },
    dropStreams() {
      for (const stream of [...streams]) {
        streams.delete(stream);
        stream.res.destroy();
      }
    },
    async close() {
      await handler.close();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_DRAIN_MS);
      });
      await Promise.race([Promise.all([...responses]), timeout]);
      clearTimeout(timer);
      streams.clear();
    },
  });
}

export function startModernServer(options: StartServerOptions = {}): Promise<TestServer> {
  const store = options.store ?? new ResourceStore();
  return startHostedServer(() => createModernEndpoint({ ...options, store }), {
    port: options.port ?? 0,
    protect: options.auth,
  });
}
