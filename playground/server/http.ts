import type { IncomingMessage, ServerResponse } from 'node:http';

/** A failure the control API reports to the caller as-is, with an HTTP status. */
export class DemoError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'DemoError';
  }
}

// The control API only takes small JSON documents; anything bigger is a mistake or abuse.
const MAX_BODY_BYTES = 64 * 1024;

export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new DemoError(413, 'request body too large');
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new DemoError(400, 'request body is not JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new DemoError(400, 'request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}
