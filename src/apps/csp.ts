/**
 * The Content-Security-Policy of a view, built from the `_meta.ui.csp` its server declared and
 * nothing wider (MCP Apps, "Host Behavior" and "Content Security Policy Enforcement"). Shared by
 * the host, which puts the declaration in the sandbox URL, and the sandbox server, which turns it
 * into a header; both drop what is not a plain origin, so a declaration cannot smuggle a keyword
 * (`'unsafe-eval'`, `*`, `data:`) or a second directive into the policy.
 */

/** What a server may declare in `_meta.ui.csp` (the same shape as ext-apps' `McpUiResourceCsp`). */
export interface AppCsp {
  /** fetch, XHR, WebSocket (`connect-src`). */
  connectDomains?: string[];
  /** scripts, styles, images, fonts, media. */
  resourceDomains?: string[];
  /** nested iframes (`frame-src`). */
  frameDomains?: string[];
  /** `<base href>` (`base-uri`). */
  baseUriDomains?: string[];
}

const FIELDS = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'] as const;

/**
 * A scheme, a host (optionally `*.` for subdomains) and an optional port, nothing else: no path,
 * no quotes, no spaces or semicolons, no bare wildcard.
 */
const ORIGIN = /^(?:https?|wss?):\/\/(?:\*\.)?(?:[a-z0-9-]+\.)*[a-z0-9-]+(?::\d{1,5})?$/i;
const LOOPBACK_V6 = /^(?:https?|wss?):\/\/\[::1\](?::\d{1,5})?$/i;

export function isCspOrigin(value: unknown): value is string {
  return typeof value === 'string' && (ORIGIN.test(value) || LOOPBACK_V6.test(value));
}

/** Keeps the origins of a declaration; `dropped` lists what was refused, for the host to report. */
export function sanitizeCsp(declared: unknown): { csp: AppCsp; dropped: string[] } {
  const csp: AppCsp = {};
  const dropped: string[] = [];
  if (declared === null || typeof declared !== 'object') return { csp, dropped };
  for (const field of FIELDS) {
    const value = (declared as Record<string, unknown>)[field];
    if (value === undefined) continue;
    if (!Array.isArray(value)) {
      dropped.push(`${field}: not a list`);
      continue;
    }
    const kept = value.filter(isCspOrigin);
    for (const entry of value) if (!isCspOrigin(entry)) dropped.push(`${field}: ${String(entry)}`);
    if (kept.length > 0) csp[field] = [...new Set(kept)];
  }
  return { csp, dropped };
}

const list = (origins: string[] | undefined) => (origins?.length ? ` ${origins.join(' ')}` : '');

/**
 * The policy for a view. Without a declaration it is the spec's restrictive default (no network,
 * no nested frames); each declared list opens exactly its directive to those origins. Forms
 * cannot post anywhere and plugins never run, declared or not.
 */
export function cspDirectives(csp: AppCsp): string {
  const resources = list(csp.resourceDomains);
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline'${resources}`,
    `style-src 'self' 'unsafe-inline'${resources}`,
    `img-src 'self' data:${resources}`,
    `font-src 'self'${resources}`,
    `media-src 'self' data:${resources}`,
    `connect-src${list(csp.connectDomains) || " 'none'"}`,
    `frame-src${list(csp.frameDomains) || " 'none'"}`,
    "object-src 'none'",
    `base-uri${list(csp.baseUriDomains) || " 'self'"}`,
    "form-action 'none'",
  ].join('; ');
}
