/**
 * `mcp-react-query/apps/sandbox`: the sandbox proxy page of MCP Apps (SEP-1865, "Sandbox proxy"),
 * for the server that serves it on an origin of its own. No React and no browser code: it
 * answers one HTTP request, and the page it returns does the rest in the browser.
 *
 * The page sits between the host page and the view. It loads the view's HTML into an inner
 * frame with an opaque origin (`sandbox="allow-scripts allow-forms"`, no `allow-same-origin`),
 * so a view reaches neither the proxy, nor the host, nor another view, and it relays JSON-RPC
 * messages both ways, checking origin and source on each hop: from the parent only if it is the
 * host origin named in the URL (and allowed here), from the inner frame only if it is that frame.
 * What the view posts is bounded here too (`maxMessageChars`), before the host page pays for it:
 * see `proxyScript`. The view's CSP is this response's header, built from the declaration in the
 * URL (origins only, see csp.ts); the inner frame inherits it and cannot loosen it.
 * `frame-ancestors` keeps other sites from embedding the page.
 */
import { cspDirectives, isCspOrigin, sanitizeCsp } from './csp';

export type { AppCsp } from './csp';
export { cspDirectives, sanitizeCsp } from './csp';

export interface SandboxProxyOptions {
  /** Origins of the host pages that may embed the proxy (the app using `<McpApp>`). */
  hostOrigins: readonly string[] | ((origin: string) => boolean);
  /**
   * The longest message a view may send, in characters of its JSON (default 8 MiB, 8,388,608:
   * room for a model-context update carrying an image as base64). A longer one, or one that is
   * not JSON, never reaches the host page. Not a number from 1 (`undefined`, `NaN`, 0): the
   * default; `Infinity` lifts it.
   */
  maxMessageChars?: number;
}

/** `SandboxProxyOptions.maxMessageChars` when none (or no number from 1) is given. */
export const DEFAULT_MAX_MESSAGE_CHARS = 8 * 1024 * 1024;

/**
 * Past this many characters of JSON, the proxy tells the host a message's size before relaying
 * it (`sandbox-message-size`), and the host charges it by size (`AppLimits.charsPerMessage`).
 */
export const SIZE_NOTICE_CHARS = 64 * 1024;

const maxCharsOf = (given: number | undefined): number =>
  typeof given === 'number' && given >= 1 ? given : DEFAULT_MAX_MESSAGE_CHARS;

export interface SandboxProxyResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const RESERVED = 'ui/notifications/sandbox-';

/**
 * The proxy's script. `HOST` is the only origin it talks to upward; the view gets exactly one
 * HTML document (a second `sandbox-resource-ready` is ignored) and, if it navigates its frame
 * away, is removed: whatever it then showed would otherwise keep receiving the host's messages.
 * The host is told (`sandbox-view-gone`, frameTransport.ts's `VIEW_GONE`) and ends the view.
 *
 * A view's message goes up as its JSON, parsed again: what the host page clones is plain data of
 * at most `MAX` characters (a Map, a Blob or a sparse array the view posted is no longer carried
 * along at whatever size). One longer, or not JSON (a cycle, a BigInt), is dropped here: a
 * request is answered with an error, so the view does not wait, and the host is told
 * (`sandbox-message-dropped`, frameTransport.ts's `MESSAGE_DROPPED`), which counts it against
 * the view's message budget. Before one longer than `NOTICE` it relays, it tells the host its
 * size (`sandbox-message-size`, frameTransport.ts's `MESSAGE_SIZE`: a number, nothing of the
 * message), and the host charges the view's budget by it. Measuring is the proxy's work, in the
 * sandbox's process when it is another site than the host page (site isolation is by site: a
 * sibling subdomain can share the host page's process, and its main thread).
 */
function proxyScript(host: string, maxChars: number): string {
  return `(() => {
  'use strict';
  const HOST = ${JSON.stringify(host).replace(/</g, '\\u003c')};
  const RESERVED = ${JSON.stringify(RESERVED)};
  const MAX = ${String(maxChars)};
  const NOTICE = ${String(SIZE_NOTICE_CHARS)};
  if (window.parent === window) return;
  let inner;
  let dead = false;
  const isMessage = (data) => data !== null && typeof data === 'object' && data.jsonrpc === '2.0';
  const load = (params) => {
    if (inner || !params || typeof params.html !== 'string') return;
    inner = document.createElement('iframe');
    inner.setAttribute('sandbox', 'allow-scripts allow-forms');
    inner.setAttribute('title', 'MCP App view');
    let loads = 0;
    inner.addEventListener('load', () => {
      loads += 1;
      if (loads > 1) {
        dead = true;
        inner.remove();
        const gone = { jsonrpc: '2.0', method: RESERVED + 'view-gone', params: {} };
        window.parent.postMessage(gone, HOST);
      }
    });
    inner.srcdoc = params.html;
    document.body.appendChild(inner);
  };
  const drop = (data, reason, chars) => {
    const id = data.id;
    if (typeof data.method === 'string' && (typeof id === 'string' || typeof id === 'number')) {
      const message = reason === 'too-large'
        ? 'message too large: the sandbox relays at most ' + MAX + ' characters of JSON'
        : 'message is not JSON: the sandbox relays JSON-RPC only';
      inner.contentWindow.postMessage({ jsonrpc: '2.0', id, error: { code: -32000, message } }, '*');
    }
    const params = typeof chars === 'number' ? { reason, chars, max: MAX } : { reason, max: MAX };
    window.parent.postMessage({ jsonrpc: '2.0', method: RESERVED + 'message-dropped', params }, HOST);
  };
  window.addEventListener('message', (event) => {
    const data = event.data;
    if (dead || !isMessage(data)) return;
    if (event.source === window.parent && event.origin === HOST) {
      if (data.method === RESERVED + 'resource-ready') load(data.params);
      else if (inner && inner.contentWindow) inner.contentWindow.postMessage(data, '*');
    } else if (inner && event.source === inner.contentWindow && event.origin === 'null') {
      if (typeof data.method === 'string' && data.method.startsWith(RESERVED)) return;
      let json;
      let tooLarge = false;
      try {
        json = JSON.stringify(data);
      } catch (error) {
        tooLarge = error instanceof RangeError;
      }
      if (typeof json === 'string' && json.length <= MAX) {
        if (json.length > NOTICE) {
          const size = { jsonrpc: '2.0', method: RESERVED + 'message-size', params: { chars: json.length } };
          window.parent.postMessage(size, HOST);
        }
        window.parent.postMessage(JSON.parse(json), HOST);
        return;
      }
      drop(data, typeof json === 'string' || tooLarge ? 'too-large' : 'not-json', json && json.length);
    }
  });
  window.parent.postMessage({ jsonrpc: '2.0', method: RESERVED + 'proxy-ready', params: {} }, HOST);
})();`;
}

function page(host: string, maxChars: number): string {
  return `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>MCP App sandbox</title>
<style>html,body{margin:0;padding:0;height:100%;overflow:hidden;background:transparent}iframe{display:block;border:0;width:100%;height:100%}</style>
</head>
<body>
<script>${proxyScript(host, maxChars)}</script>
</body>
</html>
`;
}

function hostAllowed(origin: string, allowed: SandboxProxyOptions['hostOrigins']): boolean {
  return typeof allowed === 'function' ? allowed(origin) : allowed.includes(origin);
}

/**
 * An http(s) origin exactly as a page's `location.origin` spells it: a CSP origin without a
 * wildcard, and one the URL parser gives back unchanged (lower case, no default port).
 */
function isHostOrigin(host: string): boolean {
  if (!isCspOrigin(host) || !/^https?:\/\//i.test(host) || host.includes('*')) return false;
  try {
    return new URL(host).origin === host;
  } catch {
    return false;
  }
}

function refusal(status: number, message: string): SandboxProxyResponse {
  return {
    status,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' },
    body: `${message}\n`,
  };
}

/**
 * The answer to a request for the proxy page, from its URL: `host` (the embedding page's
 * origin, which must be allowed) and `csp` (the view's declaration, JSON). The page is never
 * cached: its header is the view's policy.
 */
export function sandboxProxyResponse(
  url: string | URL,
  options: SandboxProxyOptions,
): SandboxProxyResponse {
  const params = new URL(url, 'http://sandbox.invalid').searchParams;
  const host = params.get('host') ?? '';
  // Only a plain origin, checked before `hostOrigins` sees it: it goes into the CSP header, and a
  // predicate (`*.localhost`) would otherwise let `http://evil.com;.localhost` through.
  if (!isHostOrigin(host)) {
    return refusal(
      400,
      "the sandbox needs ?host=<origin of the embedding page> (scheme://host[:port], as the page's location.origin says it)",
    );
  }
  if (!hostAllowed(host, options.hostOrigins)) {
    return refusal(403, `${host} may not embed this sandbox`);
  }
  let declared: unknown;
  try {
    declared = JSON.parse(params.get('csp') ?? '{}');
  } catch {
    return refusal(400, 'csp must be JSON');
  }
  const { csp } = sanitizeCsp(declared);
  return {
    status: 200,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': `${cspDirectives(csp)}; frame-ancestors ${host}`,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    },
    body: page(host, maxCharsOf(options.maxMessageChars)),
  };
}
