/**
 * CORS for the MCP endpoints, so a page served from another origin can use them — what every
 * browser-facing MCP server must send (README, "CORS"). The playground's own page is
 * same-origin and needs none of it; the example app (another port) needs all of it.
 *
 * - Allowed request headers: the MCP transport sends `Content-Type`, `Accept`,
 *   `Mcp-Protocol-Version`, `Mcp-Session-Id` (2025 sessions), `Last-Event-ID` (resuming a
 *   stream), behind auth `Authorization`, and on 2026-07-28 `Mcp-Method` and `Mcp-Name` on
 *   every request plus one `Mcp-Param-<Name>` per parameter a tool declares with
 *   `x-mcp-header`. Not one of them is CORS-safelisted, so every MCP request is preflighted. A
 *   preflight that refuses `Mcp-Method` makes `server/discover` fail, and the SDK then falls
 *   back to 2025's `initialize`: a connection that looks ready and never hears of a change.
 * - Exposed response headers: without `Mcp-Session-Id` exposed, a 2025 client cannot read its
 *   session and every request after `initialize` fails; `Mcp-Protocol-Version` likewise.
 * - Origins: loopback only (any port), the rule Vite's own dev server applies: a dev server must
 *   not be readable by any website the developer happens to visit.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

const LOOPBACK_ORIGIN = /^https?:\/\/(?:(?:[^:/]+\.)?localhost|127\.0\.0\.1|\[::1\])(?::\d+)?$/;

const ALLOWED_HEADERS = [
  'Content-Type',
  'Accept',
  'Authorization',
  'Mcp-Session-Id',
  'Mcp-Protocol-Version',
  'Mcp-Method',
  'Mcp-Name',
  'Last-Event-ID',
];

export const CORS_HEADERS = {
  'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
  // WWW-Authenticate: a protected endpoint's 401 names its resource metadata there.
  'Access-Control-Expose-Headers': 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate',
  // Preflights are cached for 10 minutes (browsers cap it lower anyway).
  'Access-Control-Max-Age': '600',
} as const;

/**
 * The fixed list, plus the `Mcp-Param-*` headers this preflight asks for: their names depend on
 * the tools' schemas, and CORS has no prefix wildcard (`*` would not cover Authorization).
 */
function allowedHeaders(req: IncomingMessage): string {
  const requested = String(req.headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => /^mcp-param-[a-z0-9-]+$/i.test(name));
  return [...ALLOWED_HEADERS, ...requested].join(', ');
}

/**
 * Sets the CORS headers for an allowed origin. Returns true when it answered the request
 * itself (a preflight); the caller then must not touch `res`.
 */
export function applyCors(req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  // Caches must not hand one origin's (or one preflight's) answer to another.
  res.setHeader('Vary', 'Origin, Access-Control-Request-Headers');
  const allowed = origin !== undefined && LOOPBACK_ORIGIN.test(origin);
  if (allowed) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
    res.setHeader('Access-Control-Allow-Headers', allowedHeaders(req));
  }
  if (req.method !== 'OPTIONS') return false;
  // A preflight: answered here, never by the MCP handler (it would reject the method). A
  // disallowed origin gets no Allow-Origin header, so the browser blocks the real request.
  res.writeHead(allowed ? 204 : 403);
  res.end();
  return true;
}
