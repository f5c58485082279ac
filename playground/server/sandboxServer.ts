/**
 * The MCP Apps sandbox proxy on a port of its own: another origin than the page, as the spec
 * requires (a view must never run same-origin with its host). It serves one page, built by
 * `mcp-react-query/apps/sandbox` for each request; loopback pages may embed it (the rule cors.ts
 * applies to the MCP endpoints).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sandboxProxyResponse } from '../../src/apps/sandbox';

const LOOPBACK_ORIGIN = /^https?:\/\/(?:(?:[^:/]+\.)?localhost|127\.0\.0\.1|\[::1\])(?::\d+)?$/;
export const SANDBOX_PATH = '/sandbox';
/**
 * The longest message a view may send through this proxy. The playground's views send little, so
 * it shows `maxMessageChars` well under the default (8 MiB), and the browser tests can pass it
 * cheaply.
 */
export const SANDBOX_MAX_MESSAGE_CHARS = 256 * 1024;

export interface SandboxServer {
  /** e.g. http://127.0.0.1:41234/sandbox */
  url: string;
  close(): Promise<void>;
}

export async function startSandboxServer(): Promise<SandboxServer> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    if (req.method !== 'GET' || url.pathname !== SANDBOX_PATH) {
      res
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('only the sandbox proxy lives here\n');
      return;
    }
    const answer = sandboxProxyResponse(url, {
      hostOrigins: (o) => LOOPBACK_ORIGIN.test(o),
      maxMessageChars: SANDBOX_MAX_MESSAGE_CHARS,
    });
    res.writeHead(answer.status, answer.headers).end(answer.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${SANDBOX_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
