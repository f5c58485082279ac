/**
 * Plain HTTP forwarding for load balancers in front of several server instances: each request
 * goes to the upstream the caller picks (round robin: no stickiness), with no buffering (an SSE
 * listen stream is piped through chunk by chunk). Used by the scale tests' proxy and by the
 * playground's scaled mode, where it runs as dev-server middleware to keep one origin.
 */
import {
  Agent,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from 'node:http';

// Hop-by-hop headers belong to one connection, not to the message being forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())),
  );
}

/** Turn by turn over `size` upstreams. */
export class RoundRobin {
  #next = 0;

  constructor(readonly size: number) {}

  take(): number {
    const index = this.#next;
    this.#next = (this.#next + 1) % this.size;
    return index;
  }
}

export class Forwarder {
  readonly #agent = new Agent({ keepAlive: true });

  /** Forwards one exchange to `origin` (`http://127.0.0.1:<port>`), streaming both ways. */
  forward(req: IncomingMessage, res: ServerResponse, origin: string): void {
    const target = new URL(origin);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...endToEnd(req.headers), host: target.host },
        agent: this.#agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        // Headers first, so a stream whose first frame comes later is already open.
        res.flushHeaders();
        answer.pipe(res);
        // An upstream cut mid-body (a dropped listen stream) is a cut for the client too.
        answer.once('close', () => {
          if (!answer.complete) res.destroy();
        });
      },
    );
    upstream.once('error', () => {
      if (res.headersSent) res.destroy();
      else {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32000, message: 'Bad gateway: the instance did not answer' },
            id: null,
          }),
        );
      }
    });
    // The client went away (a closed listen stream): end the upstream exchange with it.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  close(): void {
    this.#agent.destroy();
  }
}
