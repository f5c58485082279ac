/**
 * A hostile or broken server, built as a real test server behind a tampering HTTP proxy. The real
 * server keeps doing the protocol work (sessions, listen streams, acknowledgements, reads); the
 * proxy forwards every exchange unchanged unless a rule says otherwise, so a test only describes
 * what goes wrong: rewrite or drop JSON-RPC messages in responses (plain JSON bodies and the
 * `data:` lines of SSE `message` events alike), hold or hang the answer to chosen requests, or
 * inject raw notifications into every open notification stream.
 *
 * SSE passes through frame by frame as it arrives: only a partial frame waits for its end, so a
 * rewritten stream is as live as the original and an injected frame never lands inside another.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Loose on purpose: the whole point is to send messages that break the schema. */
export type JsonRpcMessage = Record<string, unknown>;

/** The request whose response a message travels in. */
export interface Exchange {
  httpMethod: string;
  /** JSON-RPC method of the request; undefined for GET streams and unparsable bodies. */
  method: string | undefined;
  id: string | number | undefined;
  params: unknown;
}

export interface TamperRules {
  /**
   * Sees every JSON-RPC message the server sends. Return `undefined` (or the same object) to pass
   * it through byte for byte, a message to replace it, several to send them all in its place (in
   * one chunk), `null` or `[]` to drop it. A JSON body whose every message is dropped is never
   * answered, which is what a dropped response looks like to a client.
   */
  rewrite?(
    message: JsonRpcMessage,
    exchange: Exchange,
  ): JsonRpcMessage | JsonRpcMessage[] | null | undefined;
  /**
   * Holds the response of a request after the server answered and before anything reaches the
   * client: a number of ms, `'hang'` (until the client gives up), or a promise.
   */
  hold?(exchange: Exchange): number | 'hang' | Promise<unknown> | undefined;
  /**
   * Answers the request itself, without asking the server: a status, and optionally headers and
   * a body (a broken endpoint, a refused SSE stream).
   */
  respond?(
    exchange: Exchange,
  ): { status: number; headers?: Record<string, string>; body?: string } | undefined;
  /**
   * Hangs up a notification stream (listen response or GET SSE stream) after this many server
   * events went through, 0 meaning right after the headers: the response ends cleanly, as when
   * a server or a proxy in front of it closes the stream on its own.
   */
  endStream?(exchange: Exchange): number | undefined;
}

export interface InjectOptions {
  /**
   * Tag messages for a modern listen stream with its subscription id, as a 2026-07-28 server
   * does (default true). Messages whose params are not an object are sent as they are.
   */
  stamp?: boolean;
}

export interface MethodStats {
  requests: number;
  inFlight: number;
  maxInFlight: number;
  /** When each request arrived (epoch ms). */
  times: number[];
}

export interface TamperProxy {
  /** The proxy's endpoint: same path as the target, on its own port. */
  readonly url: string;
  setRules(rules: TamperRules | undefined): void;
  /**
   * Writes the messages, in one chunk, into every open notification stream: modern
   * `subscriptions/listen` responses and legacy GET SSE streams. A string is sent verbatim as
   * the event's data (not JSON, say). Returns how many streams were written to.
   */
  inject(
    messages: JsonRpcMessage | string | (JsonRpcMessage | string)[],
    options?: InjectOptions,
  ): number;
  /** Notification streams open through the proxy now. */
  openStreams(): number;
  /** Requests seen per JSON-RPC method (`GET` for the legacy SSE stream). */
  stats(method: string): MethodStats;
  resetStats(): void;
  close(): Promise<void>;
}

export const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';
const LISTEN_METHOD = 'subscriptions/listen';
const HOST = '127.0.0.1';
// Hop-by-hop, or describing bytes the proxy may change.
const DROPPED_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'expect',
  'upgrade',
]);
const DROPPED_RESPONSE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'content-length',
  'content-encoding',
  'transfer-encoding',
]);

interface NotificationStream {
  res: ServerResponse;
  /** The listen request's id, which a modern server stamps on everything it sends there. */
  subscriptionId: string | number | undefined;
}

function describeRequest(httpMethod: string, body: Buffer): Exchange {
  const exchange: Exchange = { httpMethod, method: undefined, id: undefined, params: undefined };
  if (body.length === 0) return exchange;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const { method, id, params } = parsed as Record<string, unknown>;
      if (typeof method === 'string') exchange.method = method;
      if (typeof id === 'string' || typeof id === 'number') exchange.id = id;
      exchange.params = params;
    }
  } catch {
    // Not JSON: forwarded untouched, described as nothing.
  }
  return exchange;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

function forwardHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || DROPPED_REQUEST_HEADERS.has(name)) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}

function responseHeaders(response: Response): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) {
    if (DROPPED_RESPONSE_HEADERS.has(name)) continue;
    const existing = headers[name];
    headers[name] =
      existing === undefined
        ? value
        : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  return headers;
}

/** `undefined` means "unchanged"; an empty array means "dropped". */
function applyRewrite(
  rules: TamperRules | undefined,
  message: JsonRpcMessage,
  exchange: Exchange,
): JsonRpcMessage[] | undefined {
  if (!rules?.rewrite) return undefined;
  const out = rules.rewrite(message, exchange);
  if (out === undefined || out === message) return undefined;
  if (out === null) return [];
  return Array.isArray(out) ? out : [out];
}

function isMessage(value: unknown): value is JsonRpcMessage {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function frame(data: string, head = 'event: message'): string {
  // A data line cannot hold a newline; JSON.stringify never emits one, raw strings might.
  const lines = data.split('\n').map((line) => `data: ${line}`);
  return `${head ? `${head}\n` : ''}${lines.join('\n')}\n\n`;
}

/** One SSE event block (without its terminating blank line), rewritten as the rules say. */
function rewriteEvent(block: string, rules: TamperRules | undefined, exchange: Exchange): string {
  const verbatim = `${block}\n\n`;
  const lines = block.split('\n');
  const dataLines = lines.filter((line) => line.startsWith('data:'));
  const eventLine = lines.find((line) => line.startsWith('event:'));
  const eventType = eventLine?.slice(6).trim() ?? 'message';
  if (dataLines.length === 0 || eventType !== 'message') return verbatim;
  const data = dataLines.map((line) => line.slice(5).replace(/^ /, '')).join('\n');
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return verbatim;
  }
  if (!isMessage(parsed)) return verbatim;
  const replaced = applyRewrite(rules, parsed, exchange);
  if (replaced === undefined) return verbatim;
  // The first replacement keeps the event's other fields (id, retry); the rest are plain events.
  const head = lines.filter((line) => !line.startsWith('data:')).join('\n');
  return replaced
    .map((message, index) => frame(JSON.stringify(message), index === 0 ? head : 'event: message'))
    .join('');
}

function stamp(message: JsonRpcMessage, subscriptionId: string | number): JsonRpcMessage {
  const params = message.params;
  if (params !== undefined && !isMessage(params)) return message;
  const meta = isMessage(params?._meta) ? params._meta : {};
  return {
    ...message,
    params: { ...params, _meta: { ...meta, [SUBSCRIPTION_ID_KEY]: subscriptionId } },
  };
}

export async function startTamperProxy(
  targetUrl: string,
  initialRules?: TamperRules,
): Promise<TamperProxy> {
  const target = new URL(targetUrl);
  let rules = initialRules;
  let closed = false;
  const sockets = new Set<Socket>();
  const aborts = new Set<AbortController>();
  const streams = new Set<NotificationStream>();
  const stats = new Map<string, MethodStats>();

  const statsFor = (method: string): MethodStats => {
    let entry = stats.get(method);
    if (!entry) {
      entry = { requests: 0, inFlight: 0, maxInFlight: 0, times: [] };
      stats.set(method, entry);
    }
    return entry;
  };

  /** Resolves when the client is gone (or at once if it already is). */
  const clientGone = (res: ServerResponse) =>
    new Promise<void>((resolve) => {
      if (res.destroyed || res.writableEnded) resolve();
      else res.once('close', () => resolve());
    });

  async function holdFor(exchange: Exchange, res: ServerResponse): Promise<void> {
    const hold = rules?.hold?.(exchange);
    if (hold === undefined) return;
    if (hold === 'hang') {
      await clientGone(res);
      return;
    }
    const wait =
      typeof hold === 'number' ? new Promise((resolve) => setTimeout(resolve, hold)) : hold;
    await Promise.race([wait.catch(() => {}), clientGone(res)]);
  }

  /** Writes and waits for the socket to take it, so a slow client slows the upstream read. */
  async function write(res: ServerResponse, data: string | Uint8Array): Promise<void> {
    if (data.length === 0 || res.destroyed) return;
    if (!res.write(data)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
  }

  /** Passes SSE through, rewritten; stops after `limit` events (the rest is not read). */
  async function pipeSse(
    body: ReadableStream<Uint8Array>,
    res: ServerResponse,
    exchange: Exchange,
    limit = Number.POSITIVE_INFINITY,
  ): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = '';
    let events = 0;
    const reader = body.getReader();
    try {
      while (events < limit) {
        const { done, value } = await reader.read();
        if (done) break;
        // Normalising line ends keeps frame boundaries findable; a lone \r split across chunks
        // would not survive this, and no SDK writes one.
        buffered += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
        let out = '';
        let boundary = buffered.indexOf('\n\n');
        while (boundary !== -1 && events < limit) {
          out += rewriteEvent(buffered.slice(0, boundary), rules, exchange);
          events += 1;
          buffered = buffered.slice(boundary + 2);
          boundary = buffered.indexOf('\n\n');
        }
        await write(res, out);
      }
      if (events < limit) await write(res, buffered + decoder.decode());
    } finally {
      await reader.cancel().catch(() => {});
    }
  }

  async function sendJson(
    response: Response,
    res: ServerResponse,
    exchange: Exchange,
  ): Promise<void> {
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      res.writeHead(response.status, responseHeaders(response)).end(text);
      return;
    }
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    let changed = false;
    const out: unknown[] = [];
    for (const message of messages) {
      const replaced = isMessage(message) ? applyRewrite(rules, message, exchange) : undefined;
      if (replaced === undefined) out.push(message);
      else {
        changed = true;
        out.push(...replaced);
      }
    }
    if (!changed) {
      res.writeHead(response.status, responseHeaders(response)).end(text);
      return;
    }
    if (out.length === 0) return; // dropped: the client waits for an answer that never comes
    const body = Array.isArray(parsed) || out.length > 1 ? out : out[0];
    res.writeHead(response.status, responseHeaders(response)).end(JSON.stringify(body));
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const httpMethod = (req.method ?? 'GET').toUpperCase();
    const exchange = describeRequest(httpMethod, body);
    const entry = statsFor(exchange.method ?? httpMethod);
    entry.requests += 1;
    entry.inFlight += 1;
    entry.maxInFlight = Math.max(entry.maxInFlight, entry.inFlight);
    entry.times.push(Date.now());
    res.once('close', () => {
      entry.inFlight -= 1;
    });

    const answer = rules?.respond?.(exchange);
    if (answer) {
      res.writeHead(answer.status, answer.headers).end(answer.body);
      return;
    }
    const abort = new AbortController();
    aborts.add(abort);
    res.once('close', () => {
      aborts.delete(abort);
      abort.abort();
    });
    let response: Response;
    try {
      response = await fetch(new URL(req.url ?? '/', target), {
        method: httpMethod,
        headers: forwardHeaders(req),
        body: httpMethod === 'GET' || httpMethod === 'HEAD' ? undefined : new Uint8Array(body),
        signal: abort.signal,
        redirect: 'manual',
      });
    } catch {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(502, { 'content-type': 'text/plain' }).end('upstream unreachable');
      }
      return;
    }
    await holdFor(exchange, res);
    if (res.destroyed) {
      await response.body?.cancel().catch(() => {});
      return;
    }

    const type = response.headers.get('content-type') ?? '';
    if (type.startsWith('application/json')) {
      await sendJson(response, res, exchange);
      return;
    }
    res.writeHead(response.status, responseHeaders(response));
    if (!response.body) {
      res.end();
      return;
    }
    if (!type.startsWith('text/event-stream')) {
      for await (const chunk of response.body) await write(res, chunk);
      res.end();
      return;
    }
    res.flushHeaders();
    const isNotificationStream =
      response.ok && (exchange.method === LISTEN_METHOD || httpMethod === 'GET');
    if (isNotificationStream) {
      const stream: NotificationStream = {
        res,
        subscriptionId: exchange.method === LISTEN_METHOD ? exchange.id : undefined,
      };
      streams.add(stream);
      res.once('close', () => streams.delete(stream));
    }
    const limit = isNotificationStream ? rules?.endStream?.(exchange) : undefined;
    try {
      await pipeSse(response.body, res, exchange, limit);
      res.end();
    } catch {
      // The server cut the stream (or the client left): the client must see a drop, not an end.
      res.destroy();
    }
  }

  const http = createServer((req, res) => {
    serve(req, res).catch(() => {
      if (!res.headersSent && !res.destroyed) res.writeHead(500).end();
      else res.destroy();
    });
  });
  http.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, HOST, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const url = `http://${HOST}:${port}${target.pathname}${target.search}`;

  return {
    url,
    setRules(next) {
      rules = next;
    },
    inject(messages, options = {}) {
      const list = Array.isArray(messages) ? messages : [messages];
      let written = 0;
      for (const stream of streams) {
        if (stream.res.destroyed || stream.res.writableEnded) continue;
        // A flood repeats one message object many times: frame it once per stream.
        const framed = new Map<JsonRpcMessage, string>();
        const chunk = list
          .map((message) => {
            if (typeof message === 'string') return frame(message);
            let text = framed.get(message);
            if (text === undefined) {
              const tagged =
                options.stamp !== false && stream.subscriptionId !== undefined
                  ? stamp(message, stream.subscriptionId)
                  : message;
              text = frame(JSON.stringify(tagged));
              framed.set(message, text);
            }
            return text;
          })
          .join('');
        stream.res.write(chunk);
        written += 1;
      }
      return written;
    },
    openStreams() {
      let open = 0;
      for (const stream of streams)
        if (!stream.res.destroyed && !stream.res.writableEnded) open += 1;
      return open;
    },
    stats(method) {
      const entry = statsFor(method);
      return { ...entry, times: [...entry.times] };
    },
    resetStats() {
      for (const entry of stats.values()) {
        entry.requests = 0;
        entry.maxInFlight = entry.inFlight;
        entry.times = [];
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      const done = new Promise<void>((resolve) => http.close(() => resolve()));
      for (const abort of aborts) abort.abort();
      http.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await done;
    },
  };
}
