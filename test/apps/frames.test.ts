/** @vitest-environment jsdom */
/**
 * Both hops of a view's messages, as far as jsdom can show them: the host's frame transport (only
 * its frame, only the sandbox origin, only JSON-RPC) and the sandbox proxy page the server
 * answers with (who may embed it, its CSP). The proxy's script itself runs in Chromium
 * (test/e2e/apps.e2e.ts).
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  FrameTransport,
  MESSAGE_DROPPED,
  MESSAGE_SIZE,
  VIEW_GONE,
} from '../../src/apps/frameTransport';
import { GuardedTransport } from '../../src/apps/guardedTransport';
import { DEFAULT_LIMITS, floodMessage, limitsOf, MessageBudget } from '../../src/apps/limits';
import {
  DEFAULT_MAX_MESSAGE_CHARS,
  SIZE_NOTICE_CHARS,
  sandboxProxyResponse,
} from '../../src/apps/sandbox';

const SANDBOX = 'http://127.0.0.1:9';
const PING: JSONRPCMessage = { jsonrpc: '2.0', id: 1, method: 'ping' };

afterEach(() => {
  document.body.innerHTML = '';
});

function frame(): HTMLIFrameElement {
  const iframe = document.createElement('iframe');
  document.body.appendChild(iframe);
  return iframe;
}

/** A started transport for `iframe`, with what it passes on and what it reports. */
async function listening(iframe: HTMLIFrameElement) {
  const transport = new FrameTransport(iframe, SANDBOX);
  const received: unknown[] = [];
  const errors: string[] = [];
  transport.onmessage = (message) => received.push(message);
  transport.onerror = (error) => errors.push(error.message);
  await transport.start();
  return { transport, received, errors };
}

function deliver(data: unknown, init: { origin: string; source: Window | null }) {
  window.dispatchEvent(new MessageEvent('message', { data, ...init }));
}

/** A frame's transport behind a view's limits, with what passes, what is reported, the floods. */
async function guardedFrame(
  iframe: HTMLIFrameElement,
  limits: { burst: number; perSecond: number; charsPerMessage?: number },
) {
  const received: unknown[] = [];
  const errors: string[] = [];
  const floods: boolean[] = [];
  const guarded = new GuardedTransport(new FrameTransport(iframe, SANDBOX), {
    budget: new MessageBudget(limits),
    inFlight: 1_000,
    charsPerMessage: limits.charsPerMessage ?? DEFAULT_LIMITS.charsPerMessage,
    onFlood: (sized) => floods.push(sized),
  });
  guarded.onmessage = (message) => received.push(message);
  guarded.onerror = (error) => errors.push(error.message);
  await guarded.start();
  return { guarded, received, errors, floods };
}

describe("the host's end of a sandbox frame", () => {
  it('takes JSON-RPC from its frame on the sandbox origin, and nothing else', async () => {
    const iframe = frame();
    const other = frame();
    const { transport, received, errors } = await listening(iframe);

    deliver(PING, { origin: SANDBOX, source: iframe.contentWindow });
    deliver(PING, { origin: 'http://evil.example', source: iframe.contentWindow });
    deliver(PING, { origin: SANDBOX, source: other.contentWindow });
    deliver(PING, { origin: SANDBOX, source: window });
    deliver(PING, { origin: 'null', source: iframe.contentWindow });
    expect(received).toEqual([PING]);

    deliver({ hello: 'not json-rpc' }, { origin: SANDBOX, source: iframe.contentWindow });
    deliver('{"jsonrpc":"2.0"', { origin: SANDBOX, source: iframe.contentWindow });
    expect(errors).toEqual([
      'the view sent a message that is not JSON-RPC',
      'the view sent a message that is not JSON-RPC',
    ]);
    expect(received).toHaveLength(1);

    await transport.close();
    deliver(PING, { origin: SANDBOX, source: iframe.contentWindow });
    expect(received).toHaveLength(1);
  });

  it('closes when its proxy says the view navigated away and was removed, and reads nothing after', async () => {
    const iframe = frame();
    const other = frame();
    const transport = new FrameTransport(iframe, SANDBOX);
    const received: unknown[] = [];
    let closed = 0;
    transport.onmessage = (message) => received.push(message);
    transport.onclose = () => {
      closed += 1;
    };
    await transport.start();
    const gone = { jsonrpc: '2.0', method: VIEW_GONE, params: {} };
    // Only its own proxy can say so.
    deliver(gone, { origin: 'http://evil.example', source: iframe.contentWindow });
    deliver(gone, { origin: SANDBOX, source: other.contentWindow });
    expect(closed).toBe(0);
    expect(transport.closeReason).toBeUndefined();

    deliver(gone, { origin: SANDBOX, source: iframe.contentWindow });
    expect(closed).toBe(1);
    expect(transport.closeReason).toBe(
      'the view navigated away from its page, and its sandbox removed it',
    );
    deliver(PING, { origin: SANDBOX, source: iframe.contentWindow });
    deliver(gone, { origin: SANDBOX, source: iframe.contentWindow });
    expect(received).toEqual([]);
    expect(closed).toBe(1);
  });

  it('reports a message its proxy dropped (too long, or not JSON) as an error, from its own proxy only, and passes nothing on', async () => {
    const iframe = frame();
    const { received, errors } = await listening(iframe);
    const notice = (params: Record<string, unknown>) => ({
      jsonrpc: '2.0',
      method: MESSAGE_DROPPED,
      params,
    });
    deliver(notice({ reason: 'too-large', chars: 9_000_000, max: 8_388_608 }), {
      origin: 'http://evil.example',
      source: iframe.contentWindow,
    });
    expect(errors).toEqual([]);

    deliver(notice({ reason: 'too-large', chars: 9_000_000, max: 8_388_608 }), {
      origin: SANDBOX,
      source: iframe.contentWindow,
    });
    deliver(notice({ reason: 'too-large', max: 8_388_608 }), {
      origin: SANDBOX,
      source: iframe.contentWindow,
    });
    deliver(notice({ reason: 'not-json', max: 8_388_608 }), {
      origin: SANDBOX,
      source: iframe.contentWindow,
    });
    // Only numbers from the notice go into the text.
    deliver(notice({ reason: 'too-large', chars: '<b>', max: 'lots' }), {
      origin: SANDBOX,
      source: iframe.contentWindow,
    });
    expect(errors).toEqual([
      'the view sent a message longer than its sandbox relays (9,000,000 characters, at most 8,388,608), and its sandbox dropped it',
      'the view sent a message longer than its sandbox relays (at most 8,388,608), and its sandbox dropped it',
      'the view sent a message that is not JSON (a cycle, a BigInt), and its sandbox dropped it',
      'the view sent a message longer than its sandbox relays, and its sandbox dropped it',
    ]);
    expect(received).toEqual([]);
  });

  it('counts each message its proxy dropped against the view: one that keeps sending them is a flood', async () => {
    const iframe = frame();
    let floods = 0;
    const guarded = new GuardedTransport(new FrameTransport(iframe, SANDBOX), {
      budget: new MessageBudget({ burst: 3, perSecond: 0 }),
      inFlight: 16,
      charsPerMessage: DEFAULT_LIMITS.charsPerMessage,
      onFlood: () => {
        floods += 1;
      },
    });
    const errors: string[] = [];
    guarded.onerror = (error) => errors.push(error.message);
    await guarded.start();
    const notice = { jsonrpc: '2.0', method: MESSAGE_DROPPED, params: { reason: 'not-json' } };
    for (let i = 0; i < 5; i += 1) {
      deliver(notice, { origin: SANDBOX, source: iframe.contentWindow });
    }
    expect(errors).toHaveLength(3);
    expect(floods).toBe(1);
  });

  it('charges a long message by its size, as its own proxy says it: one message per 64 KiB begun, so a view that keeps sending big ones is a flood long before 200 messages', async () => {
    const iframe = frame();
    const { guarded, received, errors, floods } = await guardedFrame(iframe, {
      burst: 200,
      perSecond: 0,
    });
    const size = (chars: number) => ({ jsonrpc: '2.0', method: MESSAGE_SIZE, params: { chars } });
    const own = { origin: SANDBOX, source: iframe.contentWindow };
    // One message of the proxy's default limit (8 MiB): 128 of the 200.
    deliver(size(DEFAULT_MAX_MESSAGE_CHARS), own);
    deliver(PING, own);
    expect(received).toHaveLength(1);
    // 72 left: 71 short messages pass, and then one of 3 × 64 KiB (3) no longer does.
    for (let i = 0; i < 71; i += 1) deliver({ ...PING, id: 100 + i }, own);
    expect(received).toHaveLength(72);
    expect(floods).toEqual([]);
    deliver(size(3 * DEFAULT_LIMITS.charsPerMessage), own);
    deliver({ ...PING, id: 999 }, own);
    expect(received).toHaveLength(72);
    expect(floods).toEqual([true]);
    expect(errors).toEqual([]);
    await guarded.close();
  });

  it('a flood on the one a long message costs as a message, its size paid just before, is still a flood by size', async () => {
    const iframe = frame();
    const { received, floods } = await guardedFrame(iframe, { burst: 3, perSecond: 0 });
    const own = { origin: SANDBOX, source: iframe.contentWindow };
    // 3 × 64 KiB: 2 for its size, then its 1, which the budget no longer has after one message.
    deliver(PING, own);
    deliver({ jsonrpc: '2.0', method: MESSAGE_SIZE, params: { chars: 3 * 65_536 } }, own);
    deliver({ ...PING, id: 2 }, own);
    expect(received).toHaveLength(1);
    expect(floods).toEqual([true]);
  });

  it('takes a size notice from its own proxy only, and only a whole number of characters: anything else spends nothing of the view’s budget and refills nothing', async () => {
    const iframe = frame();
    const other = frame();
    const { received, errors, floods } = await guardedFrame(iframe, { burst: 4, perSecond: 0 });
    const size = (chars: unknown) => ({ jsonrpc: '2.0', method: MESSAGE_SIZE, params: { chars } });
    const own = { origin: SANDBOX, source: iframe.contentWindow };
    // Another origin, another frame, the host page itself: nothing is charged.
    deliver(size(100_000_000), { origin: 'http://evil.example', source: iframe.contentWindow });
    deliver(size(100_000_000), { origin: SANDBOX, source: other.contentWindow });
    deliver(size(100_000_000), { origin: SANDBOX, source: window });
    // A size that is no whole number of characters, or past any string's length, is reported
    // (it costs one, as a message that is not JSON-RPC): none of them refills the budget.
    deliver(size(-1_000_000_000), own);
    deliver(size('1000000'), own);
    expect(errors).toEqual([
      'the sandbox sent a message-size notice without a valid size',
      'the sandbox sent a message-size notice without a valid size',
    ]);
    // 2 of 4 left, and 64 KiB exactly (no notice would say it, but one that does) costs nothing more.
    deliver(size(SIZE_NOTICE_CHARS), own);
    deliver(PING, own);
    deliver({ ...PING, id: 2 }, own);
    expect(received).toHaveLength(2);
    expect(floods).toEqual([]);
    for (const invalid of [1.5, Number.NaN, 2 ** 31, null]) {
      deliver(size(invalid), own);
    }
    expect(floods).toEqual([false]);
    expect(received).toHaveLength(2);
  });

  it('a host that lifts charsPerMessage (Infinity) charges every message once, whatever its size', async () => {
    const iframe = frame();
    const { received, floods } = await guardedFrame(iframe, {
      burst: 2,
      perSecond: 0,
      charsPerMessage: Number.POSITIVE_INFINITY,
    });
    const own = { origin: SANDBOX, source: iframe.contentWindow };
    deliver({ jsonrpc: '2.0', method: MESSAGE_SIZE, params: { chars: 8_000_000 } }, own);
    deliver(PING, own);
    deliver({ jsonrpc: '2.0', method: MESSAGE_SIZE, params: { chars: 8_000_000 } }, own);
    deliver({ ...PING, id: 2 }, own);
    expect(received).toHaveLength(2);
    expect(floods).toEqual([]);
  });

  it('says which limit a flood broke: the count, or the count with long messages charged by size', () => {
    const limits = limitsOf({});
    expect(limits.charsPerMessage).toBe(65_536);
    expect(limitsOf({ charsPerMessage: Number.NaN }).charsPerMessage).toBe(65_536);
    expect(floodMessage(limits, false)).toBe(
      'the view sent more than 200 messages at once and was closed',
    );
    expect(floodMessage(limits, true)).toBe(
      'the view sent more than 200 messages at once (a long message counting once per 65,536 characters of its JSON) and was closed',
    );
  });

  it('posts to the sandbox origin only, never to "*"', async () => {
    const iframe = frame();
    const post = vi.spyOn(iframe.contentWindow as Window, 'postMessage');
    const transport = new FrameTransport(iframe, SANDBOX);
    await transport.start();
    await transport.send(PING);
    expect(post).toHaveBeenCalledWith(PING, SANDBOX);
    iframe.remove();
    await expect(transport.send(PING)).resolves.toBeUndefined();
  });
});

describe('the sandbox proxy page', () => {
  const HOST = 'http://127.0.0.1:5173';
  const options = { hostOrigins: [HOST] };
  const url = (query: Record<string, string>) =>
    `/sandbox?${new URLSearchParams(query).toString()}`;

  it('is served to an allowed host with the view’s CSP and frame-ancestors that host', () => {
    const csp = JSON.stringify({ connectDomains: ['https://api.example.com', "'unsafe-eval'"] });
    const response = sandboxProxyResponse(url({ host: HOST, csp }), options);
    expect(response.status).toBe(200);
    const policy = response.headers['Content-Security-Policy'];
    expect(policy).toContain('connect-src https://api.example.com;');
    expect(policy).not.toContain('unsafe-eval');
    expect(policy).toContain("default-src 'none'");
    expect(policy).toMatch(/; frame-ancestors http:\/\/127\.0\.0\.1:5173$/);
    expect(response.headers['Cache-Control']).toBe('no-store');
    expect(response.body).toContain(`const HOST = "${HOST}";`);
    expect(response.body).toContain("inner.setAttribute('sandbox', 'allow-scripts allow-forms');");
    // What the proxy tells the host when it removes a view that navigated away.
    expect(VIEW_GONE).toBe('ui/notifications/sandbox-view-gone');
    expect(response.body).toContain("RESERVED + 'view-gone'");
    expect(response.body).toContain('const RESERVED = "ui/notifications/sandbox-";');
  });

  it('bounds what a view may send at maxMessageChars, 8 MiB unless the server gives a number from 1 (Infinity lifts it)', () => {
    const limit = (maxMessageChars?: number) =>
      /const MAX = ([^;]+);/.exec(
        sandboxProxyResponse(url({ host: HOST, csp: '{}' }), { ...options, maxMessageChars }).body,
      )?.[1];
    expect(DEFAULT_MAX_MESSAGE_CHARS).toBe(8_388_608);
    expect(limit()).toBe('8388608');
    expect(limit(1_000)).toBe('1000');
    expect(limit(1)).toBe('1');
    expect(limit(Number.POSITIVE_INFINITY)).toBe('Infinity');
    for (const invalid of [0, 0.5, -1, Number.NaN, '1000' as unknown as number]) {
      expect(limit(invalid), String(invalid)).toBe('8388608');
    }
    // What the view posted goes up as its JSON, parsed again; what is dropped is said upward.
    const body = sandboxProxyResponse(url({ host: HOST, csp: '{}' }), options).body;
    expect(body).toContain('window.parent.postMessage(JSON.parse(json), HOST);');
    expect(MESSAGE_DROPPED).toBe('ui/notifications/sandbox-message-dropped');
    expect(body).toContain("RESERVED + 'message-dropped'");
    // Before a message longer than 64 KiB, the host is told its size, to charge it by that.
    expect(SIZE_NOTICE_CHARS).toBe(65_536);
    expect(MESSAGE_SIZE).toBe('ui/notifications/sandbox-message-size');
    expect(body).toContain("RESERVED + 'message-size'");
    expect(body).toContain(`const NOTICE = ${SIZE_NOTICE_CHARS};`);
  });

  it('is refused to a host that is not allowed, or not an origin, or with a CSP that is not JSON', () => {
    expect(
      sandboxProxyResponse(url({ host: 'http://evil.example', csp: '{}' }), options),
    ).toMatchObject({
      status: 403,
    });
    expect(sandboxProxyResponse(url({ host: `${HOST}/path`, csp: '{}' }), options)).toMatchObject({
      status: 400,
    });
    expect(sandboxProxyResponse(url({ csp: '{}' }), options)).toMatchObject({ status: 400 });
    expect(sandboxProxyResponse(url({ host: HOST, csp: '{nope' }), options)).toMatchObject({
      status: 400,
    });
    const allowAll = sandboxProxyResponse(url({ host: 'http://localhost:1', csp: '{}' }), {
      hostOrigins: (origin) => origin.startsWith('http://localhost:'),
    });
    expect(allowAll.status).toBe(200);
  });

  it('takes as host only a plain origin, before any predicate sees it: nothing can be spliced into frame-ancestors', () => {
    // A loose predicate, like a playground's "any *.localhost".
    const loose = { hostOrigins: (origin: string) => /\.localhost(:\d+)?$/.test(origin) };
    for (const host of [
      'http://evil.com;.localhost',
      'http://evil.com,.localhost',
      "http://a'b.localhost",
      'http://a"b.localhost',
      'http://*.localhost',
      'ws://app.localhost',
      'HTTP://APP.localhost',
      'http://app.localhost:80',
    ]) {
      const response = sandboxProxyResponse(url({ host, csp: '{}' }), loose);
      expect(response, host).toMatchObject({ status: 400 });
      expect(response.body).toBe(
        "the sandbox needs ?host=<origin of the embedding page> (scheme://host[:port], as the page's location.origin says it)\n",
      );
      expect(response.headers['Content-Security-Policy']).toBeUndefined();
    }
    const plain = sandboxProxyResponse(
      url({ host: 'http://app.localhost:5173', csp: '{}' }),
      loose,
    );
    expect(plain.status).toBe(200);
    expect(plain.headers['Content-Security-Policy']).toMatch(
      / frame-ancestors http:\/\/app\.localhost:5173$/,
    );
  });
});
