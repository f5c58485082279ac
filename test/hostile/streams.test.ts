/**
 * A server that accepts the notification stream and hangs up on it at once, over and over: the
 * listen stream right after its acknowledgement, the 2025 session's SSE stream right after it
 * opened. Re-establishing is right (rule 6), but with a backoff that keeps growing while the
 * streams keep dying young; otherwise every client hammers the server with full reconnects, and
 * each one re-reads everything it shows.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TamperRules } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { recordEvents } from '../support/events';
import { eventually } from '../support/wait';
import { type Hostile, startHostile, URI } from './harness';

const LISTEN = 'subscriptions/listen';
const RECONNECT = { initialDelayMs: 100, maxDelayMs: 400 };
/**
 * Reopens to watch. Full jitter makes single delays as short as 0, so the bound is on the trend,
 * not on one gap: with a growing backoff a reopen takes ~300 ms here once the delays have grown
 * (8 take ~2.5 s); a backoff that restarts after every short-lived stream takes ~55 ms. One
 * reopen per 100 ms tells them apart.
 */
const REOPENS = 8;
const MIN_MS_PER_REOPEN = 100;

let h: Hostile | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

/**
 * Lets the server hang up REOPENS more times, then says what a storm would show: the highest
 * attempt count the client reported (its event log), and how many reopens per elapsed time.
 */
async function watch(hostile: Hostile, requestMethod: string) {
  const log = recordEvents(hostile.sync);
  const windowStart = Date.now();
  const before = hostile.proxy.stats(requestMethod).requests;
  await eventually(
    () =>
      expect(hostile.proxy.stats(requestMethod).requests).toBeGreaterThanOrEqual(before + REOPENS),
    { timeout: 15_000 },
  );
  const elapsed = Date.now() - windowStart;
  log.stop();
  const attempts = log.events.map((event) =>
    event.type === 'stream'
      ? event.status.attempt
      : event.type === 'connection'
        ? event.state.attempt
        : 0,
  );
  const reopens = hostile.proxy.stats(requestMethod).requests - before;
  return { maxAttempt: Math.max(0, ...attempts), reopens, elapsed };
}

/** Rules that answer every GET (the 2025 SSE stream) with this body, never asking the server. */
function answerGets(contentType: string, body: string): TamperRules {
  return {
    respond: (exchange) =>
      exchange.httpMethod === 'GET'
        ? { status: 200, headers: { 'content-type': contentType }, body }
        : undefined,
  };
}

describe('a 2026-07-28 server that hangs up right after every acknowledgement (rule 6)', () => {
  it('re-listens with a growing backoff, and each reopen costs at most one read', async () => {
    h = await startHostile(
      'modern',
      { reconnect: RECONNECT },
      { endStream: (exchange) => (exchange.method === LISTEN ? 1 : undefined) },
    );
    const view = h.mount(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    const readsBefore = h.server.store.reads(URI);
    const { maxAttempt, reopens, elapsed } = await watch(h, LISTEN);
    expect(reopens).toBeLessThanOrEqual(1 + elapsed / MIN_MS_PER_REOPEN);
    // The attempt count is not reset by a stream that lived only a moment.
    expect(maxAttempt).toBeGreaterThanOrEqual(3);
    expect(diagnosticsOf(h.sync).stream.reopenCount).toBeGreaterThanOrEqual(reopens - 1);
    expect(h.server.store.reads(URI) - readsBefore).toBeLessThanOrEqual(reopens + 1);
    expect(view.text()).toBe('v1');
  });
});

describe('a 2025 server that cuts the SSE stream right after it opens (rule 6)', () => {
  // The SDK resumes the stream in the same session and resets its own attempt count after every
  // successful reconnection, so a server that accepts the GET and hangs up at once would be
  // re-asked at the initial delay forever. The resumption scheduler keeps a count of streams that
  // died young and backs off on it.
  it('resumes with a growing backoff, in the same session, not at the initial delay forever', async () => {
    h = await startHostile(
      'legacy-v2',
      { reconnect: RECONNECT },
      { endStream: (exchange) => (exchange.httpMethod === 'GET' ? 0 : undefined) },
    );
    h.mount(URI);
    const { maxAttempt, reopens, elapsed } = await watch(h, 'GET');
    expect(maxAttempt).toBeGreaterThanOrEqual(1);
    expect(reopens).toBeLessThanOrEqual(1 + elapsed / MIN_MS_PER_REOPEN);
    expect(h.proxy.stats('initialize').requests).toBe(1);
  });

  // Guards a fixed bug: the content is never shown, although every read the server gets is answered. A read
  // takes the client of the connection that is ready now (McpCacheSync #read → whenReady), then
  // waits for the subscription to be covered; when that connection is lost meanwhile, the read
  // goes on with the closed client and fails with "Not connected". Its retries meet the same
  // fate, and once they are spent nothing reads again: the URI never becomes covered, so no
  // re-read on coverage. The read should follow the connection (take the new client after the
  // wait, or fail as retryable and wait for the next ready).
  it('still shows the content, which reads serve fine', async () => {
    h = await startHostile(
      'legacy-v2',
      { reconnect: RECONNECT },
      { endStream: (exchange) => (exchange.httpMethod === 'GET' ? 0 : undefined) },
    );
    const view = h.mount(URI);
    await eventually(() => expect(view.text()).toBe('v1'), { timeout: 2000 });
  });
});

describe('a 2025 server whose GET is answered with an HTML page (an app fallback route)', () => {
  it('is told apart from a stream: unsupported, said why, never reopened, and the content shows', async () => {
    const hostile = await startHostile(
      'legacy-v2',
      { reconnect: RECONNECT },
      answerGets('text/html', '<!doctype html><div id="root"></div>'),
    );
    h = hostile;
    const view = hostile.mount(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    await eventually(() => expect(diagnosticsOf(hostile.sync).stream.state).toBe('unsupported'));
    expect(diagnosticsOf(hostile.sync).stream.note).toContain('not with an event stream');
    // Never taken for a stream that opened and ended; the SDK is told 405, which it never re-asks.
    expect(diagnosticsOf(hostile.sync).stream.reopenCount).toBe(0);
    expect(hostile.proxy.stats('GET').requests).toBe(1);
    expect(hostile.proxy.stats('initialize').requests).toBe(1);
  });
});

describe('a 2025 server whose SSE stream, open before, is refused once on resuming (rule 6)', () => {
  it('takes it for a lost session, not for a server without a stream: a new session hears again', async () => {
    let gets = 0;
    const hostile = await startHostile(
      'legacy-v2',
      { reconnect: RECONNECT },
      {
        // The first stream ends right after it opens; its resumption is refused (a proxy or an
        // instance in the middle of a deploy); every later GET is served.
        respond: (exchange) => {
          if (exchange.httpMethod !== 'GET') return undefined;
          gets += 1;
          return gets === 2 ? { status: 405 } : undefined;
        },
        endStream: () => (gets === 1 ? 0 : undefined),
      },
    );
    h = hostile;
    const view = hostile.mount(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    await eventually(() => expect(gets).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
    await hostile.acknowledged(URI, 10_000);
    expect(diagnosticsOf(hostile.sync).stream.state).toBe('open');
    expect(hostile.proxy.stats('initialize').requests).toBe(2);
    hostile.server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
  });
});

describe('a 2025 server whose SSE stream says its media type in capitals', () => {
  // Media types are case-insensitive (RFC 9110 §8.3.1), and the SDK itself reads them so: a
  // stream answered `Text/Event-Stream; charset=UTF-8` is a stream, not a page.
  const capitalised: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method !== 'GET' || !response.headers.get('content-type')?.includes('event-stream')) {
      return response;
    }
    const headers = new Headers(response.headers);
    headers.set('content-type', 'Text/Event-Stream; charset=UTF-8');
    return new Response(response.body, { status: response.status, headers });
  };
  for (const kind of ['legacy-v2', 'legacy-v1'] as const) {
    it(`${kind}: takes it for the stream it is, and updates arrive`, async () => {
      h = await startHostile(kind, { fetch: capitalised });
      const view = h.mount(URI);
      await eventually(() => expect(view.text()).toBe('v1'));
      await h.acknowledged(URI);
      expect(diagnosticsOf(h.sync).stream.state).toBe('open');
      h.server.setText(URI, 'v2');
      await eventually(() => expect(view.text()).toBe('v2'));
    });
  }
});

describe('a 2025 server whose SSE stream asks for an absurd retry: delay and hangs up (rule 6)', () => {
  // `retry:` takes any run of digits, and past 2^31 - 1 ms a timer fires at once: a server that
  // said `retry: 99999999999` and ended the stream was asked again in a tight loop, forever. A
  // server's delay is respected up to the reconnect backoff's cap.
  it('resumes after at most the backoff cap, not in a tight loop', async () => {
    h = await startHostile(
      'legacy-v2',
      { reconnect: RECONNECT },
      answerGets('text/event-stream', 'id: 1\nretry: 99999999999\ndata: \n\n'),
    );
    const view = h.mount(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    const { reopens, elapsed } = await watch(h, 'GET');
    expect(reopens).toBeLessThanOrEqual(1 + elapsed / MIN_MS_PER_REOPEN);
  });
});

describe('a 2025 server whose SSE events name their id twice (rule 6)', () => {
  // The SDK resumes with the id an event ends up with (the last `id:` line of an event with
  // data); a stream resumed with an id other than the one the package saw was taken for a
  // response stream, so its reopening was never seen: `resuming` forever, and no backoff.
  it('still sees each resumption open, so the stream is not stuck resuming', async () => {
    h = await startHostile(
      'legacy-v2',
      { reconnect: RECONNECT },
      answerGets('text/event-stream', 'id: 5\nid: 6\ndata: \n\n'),
    );
    h.mount(URI);
    const { reopens } = await watch(h, 'GET');
    expect(diagnosticsOf(h.sync).stream.reopenCount).toBeGreaterThanOrEqual(reopens - 1);
  });
});

describe('a 2025 server whose read answers are streams that end at once, asking for retry: 0', () => {
  // A response stream with an event id that ends before its answer is resumed (GET with
  // Last-Event-ID) after the server's retry:, its attempt count starting over at each resumption
  // that opened. Resumed the same way again and again, it was asked in a tight loop until the
  // read timed out.
  it('resumes it with a backoff, not in a tight loop, until the read gives up', async () => {
    const stream = 'id: p1\nretry: 0\ndata: \n\n';
    let gets = 0;
    const hostile = await startHostile(
      'legacy-v2',
      { reconnect: RECONNECT, requestTimeoutMs: 1000 },
      {
        // The first GET is the session's own stream, left to the server (it stays open).
        respond: (exchange) => {
          if (exchange.httpMethod === 'GET') gets += 1;
          const cut =
            exchange.method === 'resources/read' || (exchange.httpMethod === 'GET' && gets > 1);
          return cut
            ? { status: 200, headers: { 'content-type': 'text/event-stream' }, body: stream }
            : undefined;
        },
      },
    );
    h = hostile;
    const view = hostile.mount(URI);
    const { reopens, elapsed } = await watch(hostile, 'GET');
    // Each resumption waits RECONNECT.initialDelayMs at least: half of that tells a tight loop apart.
    expect(reopens).toBeLessThanOrEqual(1 + elapsed / (RECONNECT.initialDelayMs / 2));
    // Each attempt (the first and TanStack's retries) ends at the request timeout.
    await eventually(() => expect(view.result().status).toBe('error'), { timeout: 20_000 });
  });
});
