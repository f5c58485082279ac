// @vitest-environment node
/** What MCP Apps metadata says, read defensively (src/apps/uiResource.ts, csp.ts, limits.ts). */
import { describe, expect, it } from 'vitest';
import { cspDirectives, sanitizeCsp } from '../../src/apps/csp';
import { MessageBudget } from '../../src/apps/limits';
import { isAppMimeType, templateOf, viewUriOf, visibleToApps } from '../../src/apps/uiResource';

const URI = 'ui://app/view.html';
const MIME = 'text/html;profile=mcp-app';

describe("a tool's view", () => {
  it('is _meta.ui.resourceUri, or the deprecated flat key', () => {
    expect(viewUriOf({ name: 't', _meta: { ui: { resourceUri: URI } } })).toBe(URI);
    expect(viewUriOf({ name: 't', _meta: { 'ui/resourceUri': URI } })).toBe(URI);
    expect(viewUriOf({ name: 't' })).toBeUndefined();
    expect(viewUriOf({ name: 't', _meta: { ui: { visibility: ['app'] } } })).toBeUndefined();
  });

  it('must be a ui:// URI: anything else is an error, never fetched', () => {
    for (const resourceUri of ['https://evil.example/app.html', 'file:///etc/passwd', 42, '']) {
      expect(() => viewUriOf({ name: 't', _meta: { ui: { resourceUri } } })).toThrow(
        expect.objectContaining({ code: 'NO_UI', message: expect.stringContaining('not a ui://') }),
      );
    }
  });

  it('is callable by apps unless its visibility leaves "app" out', () => {
    expect(visibleToApps({})).toBe(true);
    expect(visibleToApps({ _meta: { ui: { visibility: ['model', 'app'] } } })).toBe(true);
    expect(visibleToApps({ _meta: { ui: { visibility: ['app'] } } })).toBe(true);
    expect(visibleToApps({ _meta: { ui: { visibility: ['model'] } } })).toBe(false);
    expect(visibleToApps({ _meta: { ui: { visibility: [] } } })).toBe(false);
  });
});

describe('a view read from its resource', () => {
  it('is text/html with profile=mcp-app, in any spelling MIME allows', () => {
    expect(isAppMimeType(MIME)).toBe(true);
    expect(isAppMimeType('Text/HTML; profile="mcp-app"')).toBe(true);
    expect(isAppMimeType('text/html; charset=utf-8; profile=mcp-app')).toBe(true);
    expect(isAppMimeType('text/html')).toBe(false);
    expect(isAppMimeType('text/plain;profile=mcp-app')).toBe(false);
    expect(isAppMimeType(undefined)).toBe(false);
  });

  it('comes from text or from a base64 blob', () => {
    const html = '<!doctype html><p>héllo</p>';
    expect(templateOf(URI, { contents: [{ uri: URI, mimeType: MIME, text: html }] }).html).toBe(
      html,
    );
    const blob = Buffer.from(html, 'utf8').toString('base64');
    expect(templateOf(URI, { contents: [{ uri: URI, mimeType: MIME, blob }] }).html).toBe(html);
  });

  it('is refused with a clear error when it is not an app: another type, nothing, or empty', () => {
    const refused = (contents: unknown[], message: RegExp) =>
      expect(() => templateOf(URI, { contents } as never)).toThrow(
        expect.objectContaining({ code: 'NOT_AN_APP', message: expect.stringMatching(message) }),
      );
    refused([{ uri: URI, mimeType: 'image/png', blob: 'AAAA' }], /"image\/png", not an MCP App/);
    refused([{ uri: URI, text: '<p>x</p>' }], /of no declared type/);
    refused([], /has no content/);
    refused([{ uri: URI, mimeType: MIME, text: '   ' }], /is empty/);
  });

  it('keeps the origins of its declared CSP and drops the rest', () => {
    const template = templateOf(URI, {
      contents: [
        {
          uri: URI,
          mimeType: MIME,
          text: '<p>x</p>',
          _meta: {
            ui: {
              csp: {
                connectDomains: ['https://api.example.com', "'unsafe-eval'", '*'],
                resourceDomains: ['https://*.cdn.example', 'https://a.example/path'],
                frameDomains: 'https://x.example',
              },
              prefersBorder: false,
            },
          },
        },
      ],
    });
    expect(template.csp).toEqual({
      connectDomains: ['https://api.example.com'],
      resourceDomains: ['https://*.cdn.example'],
    });
    expect(template.cspDropped).toEqual([
      "connectDomains: 'unsafe-eval'",
      'connectDomains: *',
      'resourceDomains: https://a.example/path',
      'frameDomains: not a list',
    ]);
    expect(template.prefersBorder).toBe(false);
  });
});

describe("a view's Content-Security-Policy", () => {
  it("without a declaration is the spec's restrictive default: no network, no frames, no plugins", () => {
    const policy = cspDirectives({});
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("connect-src 'none'");
    expect(policy).toContain("frame-src 'none'");
    expect(policy).toContain("object-src 'none'");
    expect(policy).toContain("form-action 'none'");
    expect(policy).toContain("script-src 'self' 'unsafe-inline';");
    expect(policy).not.toMatch(/unsafe-eval|\*|https?:/);
  });

  it('opens each directive to exactly the declared origins', () => {
    const policy = cspDirectives({
      connectDomains: ['https://api.example.com'],
      resourceDomains: ['https://cdn.example'],
      frameDomains: ['https://player.example'],
      baseUriDomains: ['https://base.example'],
    });
    expect(policy).toContain('connect-src https://api.example.com');
    expect(policy).toContain("script-src 'self' 'unsafe-inline' https://cdn.example");
    expect(policy).toContain("img-src 'self' data: https://cdn.example");
    expect(policy).toContain('frame-src https://player.example');
    expect(policy).toContain('base-uri https://base.example');
  });

  it('cannot be widened by a declaration that smuggles directives or keywords', () => {
    const { csp } = sanitizeCsp({
      connectDomains: ['https://a.example; script-src *', 'https://b.example unsafe-eval', 'data:'],
      resourceDomains: ["'self' 'unsafe-eval'", 'http://[::1]:3000'],
    });
    expect(csp).toEqual({ resourceDomains: ['http://[::1]:3000'] });
    expect(cspDirectives(csp).split('; ')).toHaveLength(11);
  });
});

describe("a view's message budget", () => {
  it('allows a burst, then the sustained rate, and refuses past it', () => {
    let now = 0;
    const budget = new MessageBudget({ burst: 3, perSecond: 2 }, () => now);
    expect([budget.take(), budget.take(), budget.take(), budget.take()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    now += 500; // one message earned
    expect([budget.take(), budget.take()]).toEqual([true, false]);
    now += 10_000; // never more than the burst saved up
    expect([budget.take(), budget.take(), budget.take(), budget.take()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });

  it('is not spent by the clock going back (a corrected or user-set system clock)', () => {
    let now = 3_600_000;
    const budget = new MessageBudget({ burst: 3, perSecond: 2 }, () => now);
    expect(budget.take()).toBe(true);
    now -= 3_600_000; // set back an hour
    expect([budget.take(), budget.take(), budget.take()]).toEqual([true, true, false]);
    now += 500;
    expect([budget.take(), budget.take()]).toEqual([true, false]);
  });
});
