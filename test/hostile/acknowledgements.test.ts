/**
 * A server whose acknowledgements cannot be trusted: it claims URIs nobody asked for, honours
 * only some of what was asked, says it twice, or never says it at all. Only what was both
 * requested and acknowledged may count as pushed; everything else falls back to TTL freshness,
 * and waiting for an acknowledgement is always bounded.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JsonRpcMessage, TamperRules } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { text } from '../support/eras';
import { recordEvents } from '../support/events';
import { observeList } from '../support/observe';
import { eventually, idle } from '../support/wait';
import {
  ACK,
  HOSTILE_KINDS,
  type Hostile,
  honouring,
  isNotification,
  requestedUris,
  staleNow,
  startHostile,
  URI,
  updated,
} from './harness';

const B = 'note://b';
const LISTEN = 'subscriptions/listen';
const SUBSCRIBE = 'resources/subscribe';
const UNSUBSCRIBE = 'resources/unsubscribe';
const LIST = 'resources/list';
const BAD = 'bad://nope';

/**
 * Answers a listen whose requested URIs `refused` picks with a JSON-RPC error before its
 * acknowledgement, as a 2026-07-28 server rejects a filter it will not serve. `asking(uri)`:
 * how many listens asked for `uri`.
 */
function refusing(
  refused: (uris: string[]) => boolean,
  error = { code: -32602, message: 'unknown resource' },
) {
  const asked: string[][] = [];
  const rules: TamperRules = {
    rewrite: (message, exchange) => {
      if (!isNotification(message, ACK)) return undefined;
      const uris = requestedUris(exchange);
      asked.push(uris);
      return refused(uris) ? { jsonrpc: '2.0', id: exchange.id, error } : undefined;
    },
  };
  const asking = (uri: string) => asked.filter((uris) => uris.includes(uri)).length;
  return { rules, asking };
}

/** Every acknowledgement honours what was asked, except the resources list's `list_changed`. */
const withoutResourcesList: TamperRules = {
  rewrite: (message, exchange) => {
    if (!isNotification(message, ACK)) return undefined;
    const ack: JsonRpcMessage = honouring(message, requestedUris(exchange));
    delete (ack.params as { notifications: Record<string, unknown> }).notifications
      .resourcesListChanged;
    return ack;
  },
};

const subscribeOf = (exchange: { method: string | undefined; params: unknown }, uri: string) =>
  exchange.method === SUBSCRIBE && (exchange.params as { uri?: unknown } | undefined)?.uri === uri;

let h: Hostile | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await h?.close();
  h = undefined;
});

describe('acknowledgements from a hostile 2026-07-28 server', () => {
  it('URIs and lists acknowledged without being requested are not treated as covered', async () => {
    h = await startHostile(
      'modern',
      {},
      {
        rewrite: (message, exchange) =>
          isNotification(message, ACK)
            ? honouring(message, [...requestedUris(exchange), 'evil://x', 'other://y'], {
                toolsListChanged: true,
                promptsListChanged: true,
              })
            : undefined,
      },
    );
    h.server.store.upsert(text('evil://x', 'evil'));
    const view = h.mount(URI);
    await h.acknowledged(URI);
    await eventually(() => expect(view.text()).toBe('v1'));

    const diagnostics = diagnosticsOf(h.sync);
    for (const uri of ['evil://x', 'other://y']) {
      expect(diagnostics.resources.find((r) => r.uri === uri)?.acknowledged ?? false).toBe(false);
    }
    expect(diagnostics.lists).toMatchObject({ resources: true, tools: false, prompts: false });

    // A notification for a URI the ack smuggled in is still one nobody subscribed.
    h.proxy.inject(updated('evil://x'));
    await eventually(() => expect(diagnosticsOf(h?.sync)?.counters.unmatched).toBe(1));
    await idle(h.queryClient); // a read would have started as it was handled
    expect(h.server.store.reads('evil://x')).toBe(0);
    expect(h.server.store.reads('other://y')).toBe(0);
  });

  it('an acknowledgement whose filter is malformed covers nothing and breaks nothing', async () => {
    h = await startHostile(
      'modern',
      {},
      {
        rewrite: (message) =>
          isNotification(message, ACK)
            ? {
                ...message,
                params: {
                  ...(message.params as object),
                  notifications: { resourceSubscriptions: URI, resourcesListChanged: 'yes' },
                },
              }
            : undefined,
      },
    );
    const view = h.mount(URI);
    await eventually(() => expect(h?.resource(URI)?.declined).toBeDefined());
    await eventually(() => expect(view.text()).toBe('v1'));
    expect(h.resource(URI)?.acknowledged).toBe(false);
    expect(diagnosticsOf(h.sync).lists.resources).toBe(false);
    expect(h.sync.getState().status).toBe('ready');
    // Not pushed, so not fresh: the data follows its TTL (none here).
    expect(staleNow(view)).toBe(true);
  });

  it('URIs left out of the acknowledgement are reported declined and follow their TTL', async () => {
    h = await startHostile(
      'modern',
      {},
      {
        rewrite: (message, exchange) =>
          isNotification(message, ACK)
            ? honouring(
                message,
                requestedUris(exchange).filter((uri) => uri !== B),
              )
            : undefined,
      },
    );
    h.server.store.upsert(text(B, 'b1', { ttlMs: 600 }));
    const a = h.mount(URI);
    const b = h.mount(B);
    await h.acknowledged(URI);
    await eventually(() => expect(h?.resource(B)?.declined).toContain('not in the acknowledged'));
    await eventually(() => expect([a.text(), b.text()]).toEqual(['v1', 'b1']));
    expect(h.resource(B)?.acknowledged).toBe(false);
    expect(h.server.store.reads(B)).toBe(1);

    // Pushed data is fresh until notified even with ttlMs 0; declined data only for its TTL.
    expect(staleNow(a)).toBe(false);
    expect(staleNow(b)).toBe(false);
    // The TTL runs out: only the clock moves (staleness is computed from it when asked).
    const readAt = b.result().dataUpdatedAt;
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(readAt + 600);
      expect(staleNow(b)).toBe(true);
      expect(staleNow(a)).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('duplicate acknowledgements, late ones and ones for unknown streams are harmless', async () => {
    h = await startHostile(
      'modern',
      {},
      { rewrite: (message) => (isNotification(message, ACK) ? [message, message] : undefined) },
    );
    const view = h.mount(URI);
    await h.acknowledged(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    // A late ack on the live stream that now honours nothing, and one for a stream never opened.
    h.proxy.inject({
      jsonrpc: '2.0',
      method: ACK,
      params: { notifications: { resourceSubscriptions: [] } },
    });
    h.proxy.inject(
      {
        jsonrpc: '2.0',
        method: ACK,
        params: {
          notifications: { resourceSubscriptions: [URI] },
          _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen:999' },
        },
      },
      { stamp: false },
    );
    // A real update on the same stream, after them: once it is shown, they were handled.
    h.server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
    await idle(h.queryClient);
    expect(h.resource(URI)?.acknowledged).toBe(true);
    expect(h.server.store.reads(URI)).toBe(2); // the first read and the update's: nothing else
    expect(h.proxy.stats(LISTEN).requests).toBe(1);
  });

  it('a server that never acknowledges: bounded waits, backoff between attempts, reads go ahead', async () => {
    const ackTimeoutMs = 200;
    const reconnect = { initialDelayMs: 200, maxDelayMs: 800 };
    h = await startHostile(
      'modern',
      { ackTimeoutMs, reconnect },
      { rewrite: (message) => (isNotification(message, ACK) ? null : undefined) },
    );
    const log = recordEvents(h.sync);
    const started = Date.now();
    const view = h.mount(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    // The read waits for the acknowledgement at most ackTimeoutMs, then reads anyway.
    expect(Date.now() - started).toBeLessThan(ackTimeoutMs + 700);

    // Attempt after attempt, none acknowledged: wait for three more, then read the client's log.
    const windowStart = Date.now();
    const listens = h.proxy.stats(LISTEN).requests;
    await eventually(
      () => expect(h?.proxy.stats(LISTEN).requests).toBeGreaterThanOrEqual(listens + 3),
      {
        timeout: 10_000,
      },
    );
    await eventually(() => expect(diagnosticsOf(h?.sync)?.stream.nextRetryAt).toBeDefined());
    expect(h.sync.getState().nextRetryAt).toBe(diagnosticsOf(h.sync).stream.nextRetryAt);
    const streams = log.events.flatMap((event) => (event.type === 'stream' ? [event] : []));
    const retries = streams.filter(({ status }) => status.nextRetryAt !== undefined);
    expect(retries.length).toBeGreaterThanOrEqual(2);
    for (const { at, status } of retries) {
      expect(status.nextRetryAt).toBeLessThanOrEqual(at + reconnect.maxDelayMs);
    }
    expect(Math.max(0, ...streams.map(({ status }) => status.attempt))).toBeGreaterThanOrEqual(2);
    expect(streams.some(({ status }) => status.state === 'reopening')).toBe(true);
    expect(
      log.events.some((event) => event.type === 'status' && event.status === 'reconnecting'),
    ).toBe(true);
    expect(
      log.events.some((event) => event.type === 'coverage' && event.acknowledged.includes(URI)),
    ).toBe(false);
    // Each attempt waits out the ack timeout (then a jittered, growing delay): never a hot loop.
    const attempts = h.proxy.stats(LISTEN).times.filter((at) => at >= windowStart).length;
    expect(attempts).toBeLessThanOrEqual(Math.ceil((Date.now() - windowStart) / ackTimeoutMs) + 1);
    expect(diagnosticsOf(h.sync).stream.lastError).toMatch(/ack/i);
    // Abandoned attempts are closed: no pile of half-open listen streams. The client drops one
    // at once, but the next attempt comes after a fully jittered delay, which can be ~0 ms: it
    // may reach the server before the server has seen the last one close (CI saw 2 at once).
    // A pile would be one more in flight per attempt.
    expect(h.proxy.stats(LISTEN).maxInFlight).toBeLessThanOrEqual(2);
    await eventually(() => expect(h?.proxy.stats(LISTEN).inFlight).toBeLessThanOrEqual(1));
    expect(view.text()).toBe('v1');
    expect(view.result().fetchStatus).toBe('idle');

    // The server comes to its senses: the next attempt is acknowledged and the stream is open.
    h.proxy.setRules(undefined);
    await h.acknowledged(URI);
    await eventually(() =>
      expect(h?.sync.getState()).toMatchObject({ status: 'ready', attempt: 0 }),
    );
    h.server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
  });

  it('a server that stops acknowledging keeps the old stream, and new URIs are read within the ack timeout', async () => {
    const ackTimeoutMs = 300;
    let acks = 0;
    h = await startHostile(
      'modern',
      { ackTimeoutMs, reconnect: { initialDelayMs: 200, maxDelayMs: 800 } },
      {
        rewrite: (message) => {
          if (!isNotification(message, ACK)) return undefined;
          acks += 1;
          return acks === 1 ? message : null;
        },
      },
    );
    h.server.store.upsert(text(B, 'b1'));
    const a = h.mount(URI);
    await h.acknowledged(URI);
    await eventually(() => expect(a.text()).toBe('v1'));

    const started = Date.now();
    const b = h.mount(B);
    await eventually(() => expect(b.text()).toBe('b1'));
    expect(Date.now() - started).toBeLessThan(ackTimeoutMs + 700);
    // The replacement stream is tried again after its ack timeout, and again fails.
    const listens = h.proxy.stats(LISTEN).requests;
    await eventually(() => expect(h?.proxy.stats(LISTEN).requests).toBeGreaterThan(listens), {
      timeout: 10_000,
    });
    expect(h.resource(B)?.acknowledged).toBe(false);
    // Make-before-break: the acknowledged stream is kept while its replacement fails.
    expect(h.resource(URI)?.acknowledged).toBe(true);
    h.server.setText(URI, 'v2');
    await eventually(() => expect(a.text()).toBe('v2'));
  });

  it('fetches of a list the acknowledgement left out do not wait for its coverage', async () => {
    // The ack timeout is far longer than `eventually` waits: a fetch that waited for the list's
    // coverage would fail the test, one that goes ahead passes it.
    const patient = { ackTimeoutMs: 60_000, requestTimeoutMs: 120_000 };
    h = await startHostile('modern', patient, withoutResourcesList);
    const list = observeList(h.sync);
    await eventually(() => expect(list.uris()).toContain(URI));
    expect(diagnosticsOf(h.sync).lists.resources).toBe(false);
    expect(h.sync.getState().status).toBe('ready');
    const refetched = list.observer.refetch();
    await eventually(() => expect(h?.proxy.stats(LIST).requests).toBe(2));
    await refetched;
    list.unmount();
  });
});

describe('listens refused by a hostile 2026-07-28 server', () => {
  it('a refused URI among several is declined with the server message, the others are covered, and it is not asked again', async () => {
    const server = refusing((uris) => uris.includes(BAD));
    h = await startHostile('modern', {}, server.rules);
    h.server.store.upsert(text(B, 'b1'));
    h.server.store.upsert(text(BAD, 'x'));
    const a = h.mount(URI);
    const b = h.mount(B);
    const bad = h.mount(BAD);
    await h.acknowledged(URI);
    await h.acknowledged(B);
    await eventually(() => expect(h?.resource(BAD)?.declined).toContain('unknown resource'));
    await eventually(() => expect([a.text(), b.text(), bad.text()]).toEqual(['v1', 'b1', 'x']));
    // With everything, then in the half the first (acknowledged) half left, then alone.
    expect(server.asking(BAD)).toBe(3);
    // No retry waits, and the next request, for a new URI, leaves it out.
    const stream = diagnosticsOf(h.sync).stream;
    expect(stream).toMatchObject({ state: 'open', attempt: 0, nextRetryAt: undefined });
    h.server.store.upsert(text('note://c', 'c1'));
    h.mount('note://c');
    await h.acknowledged('note://c');
    expect(server.asking(BAD)).toBe(3);
    expect(h.resource(BAD)?.acknowledged).toBe(false);
    expect(h.sync.getState().status).toBe('ready');
    // Not pushed: the refused URI follows its TTL (none here), the others are fresh.
    expect(staleNow(bad)).toBe(true);
    expect(staleNow(a)).toBe(false);
  });

  it('a URI refused alone is declined without reconnecting, and asked again once let go and wanted anew', async () => {
    const server = refusing((uris) => uris.includes(BAD));
    h = await startHostile('modern', {}, server.rules);
    h.server.store.upsert(text(BAD, 'x'));
    const log = recordEvents(h.sync);
    const view = h.mount(BAD);
    await eventually(() => expect(h?.resource(BAD)?.declined).toContain('unknown resource'));
    await eventually(() => expect(view.text()).toBe('x'));
    await eventually(() => expect(diagnosticsOf(h?.sync)?.lists.resources).toBe(true));
    expect(h.sync.getState()).toMatchObject({ status: 'ready', attempt: 0 });
    expect(server.asking(BAD)).toBe(2); // with the list, then alone

    view.unmount();
    const forgotten = (event: (typeof log.events)[number]) =>
      event.type === 'declined' && event.changes.some(([uri, why]) => uri === BAD && !why);
    await eventually(() => expect(log.events.some(forgotten)).toBe(true));
    h.proxy.setRules(undefined);
    h.mount(BAD);
    await h.acknowledged(BAD);
    expect(
      log.events.some((event) => event.type === 'stream' && event.status.state === 'reopening'),
    ).toBe(false);
  });

  it('a server that refuses every listen: everything is declined after a bounded number of requests, and reads and lists go ahead', async () => {
    const uris = [URI, B, 'note://c', 'note://d'];
    h = await startHostile('modern', {}, refusing(() => true).rules);
    for (const uri of uris.slice(1)) h.server.store.upsert(text(uri, uri));
    const views = uris.map((uri) => h?.mount(uri) as ReturnType<Hostile['mount']>);
    const list = observeList(h.sync);
    await eventually(() =>
      expect(uris.map((uri) => h?.resource(uri)?.declined)).toEqual(
        uris.map(() => expect.any(String)),
      ),
    );
    await eventually(() =>
      expect(views.map((view) => view.text())).toEqual(['v1', ...uris.slice(1)]),
    );
    await eventually(() => expect(list.uris()).toEqual(expect.arrayContaining(uris)));
    // All of it, then halves down to one URI, then each URI and the list alone; no retry waits.
    expect(h.proxy.stats(LISTEN).requests).toBeLessThanOrEqual(
      2 + Math.log2(uris.length) + uris.length,
    );
    // Idle, and saying why: not "nothing to listen to" while URIs are wanted.
    expect(diagnosticsOf(h.sync).stream).toMatchObject({
      state: 'idle',
      nextRetryAt: undefined,
      note: expect.stringContaining('refused'),
    });
    expect(diagnosticsOf(h.sync).lists.resources).toBe(false);
    expect(h.sync.getState()).toMatchObject({ status: 'ready', attempt: 0 });
    list.unmount();
  });
});

describe('listens a full 2026-07-28 server turns away for now', () => {
  it('a server at its subscription limit (-32603) declines nothing: the listen is asked again with backoff and covers once there is room', async () => {
    let full = 3;
    const server = refusing(() => full-- > 0, {
      code: -32603,
      message: 'Subscription limit reached',
    });
    h = await startHostile('modern', {}, server.rules);
    h.server.store.upsert(text(B, 'b1'));
    const log = recordEvents(h.sync);
    h.mount(URI);
    h.mount(B);
    await h.acknowledged(URI);
    await h.acknowledged(B);
    expect(server.asking(B)).toBe(4);
    expect(log.events.some((event) => event.type === 'declined')).toBe(false);
    expect(diagnosticsOf(h.sync).stream).toMatchObject({ state: 'open', attempt: 0 });
  });
});

describe('a 2026-07-28 server without subscriptions/listen', () => {
  // Its listens are answered "method not found" (-32601): a server that negotiated 2026-07-28
  // and declared resources.subscribe but has no handler for it. Asking again cannot help; it was
  // asked again with backoff forever, the status `reconnecting` for good.
  it('is unsupported after one listen: every URI declined with the reason, no retries, status ready', async () => {
    const server = refusing(() => true, { code: -32601, message: 'Method not found' });
    h = await startHostile('modern', {}, server.rules);
    h.server.store.upsert(text(B, 'b1'));
    const a = h.mount(URI);
    const b = h.mount(B);
    const hostile = h;
    await eventually(() =>
      expect(diagnosticsOf(hostile.sync).stream).toMatchObject({
        state: 'unsupported',
        note: expect.stringContaining('Method not found'),
      }),
    );
    await eventually(() =>
      expect([URI, B].map((uri) => hostile.resource(uri)?.declined)).toEqual([
        expect.stringContaining('Method not found'),
        expect.stringContaining('Method not found'),
      ]),
    );
    await eventually(() => expect([a.text(), b.text()]).toEqual(['v1', 'b1']));
    await idle(hostile.queryClient);
    expect(hostile.proxy.stats(LISTEN).requests).toBe(1);
    expect(hostile.sync.getState()).toMatchObject({ status: 'ready' });
  });
});

describe('subscribe answers from a hostile 2025 server', () => {
  it('a refused subscription is reported declined, is not retried in a loop, and follows its TTL', async () => {
    // Subscribes counted as the client sends them.
    let subscribes = 0;
    h = await startHostile(
      'legacy-v2',
      {
        fetch: (input, init) => {
          if (typeof init?.body === 'string' && init.body.includes(`"${SUBSCRIBE}"`))
            subscribes += 1;
          return fetch(input, init);
        },
      },
      {
        rewrite: (message, exchange) =>
          subscribeOf(exchange, B) && 'result' in message
            ? { jsonrpc: '2.0', id: message.id, error: { code: -32602, message: 'not for you' } }
            : undefined,
      },
    );
    h.server.store.upsert(text(B, 'b1'));
    // From here on timers are fake: a retry of the refusal would be scheduled on them.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const a = h.mount(URI);
    const b = h.mount(B);
    await h.acknowledged(URI);
    await eventually(() => expect(h?.resource(B)?.declined).toContain('not for you'));
    await eventually(() => expect([a.text(), b.text()]).toEqual(['v1', 'b1']));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(subscribes).toBe(2);
    expect(h.proxy.stats(SUBSCRIBE).requests).toBe(2);
    expect(h.resource(B)?.acknowledged).toBe(false);
    // 2025 results carry no ttlMs: not pushed means stale at once.
    expect(staleNow(b)).toBe(true);
    expect(staleNow(a)).toBe(false);
  });

  it('duplicate answers to a subscribe are harmless', async () => {
    h = await startHostile(
      'legacy-v2',
      {},
      {
        rewrite: (message, exchange) =>
          exchange.method === SUBSCRIBE && 'result' in message ? [message, message] : undefined,
      },
    );
    const view = h.mount(URI);
    await h.acknowledged(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    h.server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
    await idle(h.queryClient);
    expect(h.server.store.reads(URI)).toBe(2);
    expect(h.proxy.stats(SUBSCRIBE).requests).toBe(1);
  });

  // Rule 4 with many rows at once on 2025: 80 subscribes, answered one at a time every 10 ms,
  // take far longer than ackTimeoutMs in all. At most 32 go out at once (the rest wait in the
  // channel, not in the HTTP client where the SDK's timeout would run), and each answer is
  // progress: the reads keep waiting for their own subscription, so each URI is read once.
  it('80 rows at once, subscribes answered slowly one by one: at most 32 in flight, and every URI read exactly once', async () => {
    // Each answer is held until 10 ms after the one before it.
    let nextRelease = 0;
    h = await startHostile(
      'legacy-v2',
      // Half of what the 80 answers take in all; between two answers there are 10 ms.
      { ackTimeoutMs: 400 },
      {
        hold: (exchange) => {
          if (exchange.method !== SUBSCRIBE) return undefined;
          const now = Date.now();
          nextRelease = Math.max(nextRelease, now) + 10;
          return nextRelease - now;
        },
      },
    );
    const uris = Array.from({ length: 80 }, (_, i) => `note://row/${i}`);
    for (const uri of uris) h.server.store.upsert(text(uri, `t:${uri}`));
    const views = uris.map((uri) => h?.mount(uri) as ReturnType<Hostile['mount']>);
    await eventually(
      () => expect(views.map((view) => view.text())).toEqual(uris.map((uri) => `t:${uri}`)),
      {
        timeout: 10_000,
      },
    );
    await idle(h.queryClient);
    const subscribes = h.proxy.stats(SUBSCRIBE);
    expect(subscribes.requests).toBe(80);
    expect(subscribes.maxInFlight).toBeLessThanOrEqual(32);
    expect(subscribes.maxInFlight).toBeGreaterThanOrEqual(8);
    expect(uris.map((uri) => h?.server.store.reads(uri))).toEqual(uris.map(() => 1));
  });

  it('a subscribe never answered: the read waits at most the ack timeout, and the URI is reported', async () => {
    const ackTimeoutMs = 300;
    h = await startHostile(
      'legacy-v2',
      { ackTimeoutMs, requestTimeoutMs: 500 },
      { hold: (exchange) => (exchange.method === SUBSCRIBE ? 'hang' : undefined) },
    );
    const started = Date.now();
    const view = h.mount(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    expect(Date.now() - started).toBeLessThan(ackTimeoutMs + 700);
    await eventually(() => expect(h?.resource(URI)?.declined).toMatch(/subscribe failed/));
    expect(h.resource(URI)?.acknowledged).toBe(false);
    // Unanswered subscribes are asked again, but one at a time: each waits out its timeout
    // (500 ms) before the next, never a storm.
    await eventually(() => expect(h?.proxy.stats(SUBSCRIBE).requests).toBeGreaterThanOrEqual(3), {
      timeout: 10_000,
    });
    const elapsed = Date.now() - started;
    expect(h.proxy.stats(SUBSCRIBE).requests).toBeLessThanOrEqual(1 + Math.ceil(elapsed / 500));
    expect(h.sync.getState().status).toBe('ready');
  });

  // A request that got no answer may still have been carried out: the server subscribed, only
  // the answer was lost (a cut connection, a timeout). The chaos run on legacy caught the leak
  // this used to cause: the URI was let go while "declined, retrying", its retry was dropped, and
  // the live session kept the subscription for good.
  it('a subscribe whose answer was lost is undone on the server once the URI is let go', async () => {
    h = await startHostile(
      'legacy-v2',
      { ackTimeoutMs: 200, requestTimeoutMs: 300 },
      { hold: (exchange) => (exchange.method === SUBSCRIBE ? 'hang' : undefined) },
    );
    const view = h.mount(URI);
    await eventually(() => expect(h?.resource(URI)?.declined).toMatch(/subscribe failed/));
    expect(h.server.subscribedUris()).toEqual([URI]);
    view.unmount();
    await eventually(() => expect(h?.server.subscribedUris()).toEqual([]));
    expect(h.sync.getState().status).toBe('ready');
  });

  it('an unsubscribe that got no answer is sent again until the server has let go', async () => {
    let cut = 0;
    h = await startHostile('legacy-v2', {
      // The network fails the first unsubscribe before it leaves the browser.
      fetch: async (input, init) => {
        if (cut === 0 && typeof init?.body === 'string' && init.body.includes(UNSUBSCRIBE)) {
          cut += 1;
          throw new TypeError('fetch failed');
        }
        return fetch(input, init);
      },
    });
    const view = h.mount(URI);
    await h.acknowledged(URI);
    view.unmount();
    await eventually(() => expect(cut).toBe(1));
    await eventually(() => expect(h?.server.subscribedUris()).toEqual([]));
    expect(h.proxy.stats(UNSUBSCRIBE).requests).toBe(1);
    expect(h.sync.getState().status).toBe('ready');
  });

  // Guards a fixed bug: a subscribe that timed out is declined for the rest of the session. SubscribeChannel
  // #subscribe files every failure under #declined (reason "subscribe failed: …") and #step never
  // subscribes a declined URI again; the comment there expects the connection to recover from
  // timeouts, but a timeout does not end the session, so nothing ever does. The URI silently
  // stays unpushed (TTL freshness) although the server is fine again. The 2026 era retries a
  // listen that was not acknowledged in time, with backoff.
  it('a subscribe that timed out once is tried again once the server answers', async () => {
    let hung = 0;
    h = await startHostile(
      'legacy-v2',
      // Generous: under a loaded CI machine a 300 ms timeout also cut the retry short.
      { ackTimeoutMs: 200, requestTimeoutMs: 1000 },
      {
        hold: (exchange) => {
          if (exchange.method !== SUBSCRIBE || hung > 0) return undefined;
          hung += 1;
          return 'hang';
        },
      },
    );
    // The "declined, retrying" state lasts one backoff delay (a few ms): seen through the
    // event stream, not by polling for it.
    const reasons: string[] = [];
    h.sync.subscribeEvents((event) => {
      if (event.type !== 'declined') return;
      for (const [, reason] of event.changes) if (reason) reasons.push(reason);
    });
    const view = h.mount(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    await eventually(() =>
      expect(reasons.some((reason) => /subscribe failed/.test(reason))).toBe(true),
    );
    // A timeout is not an answer: the server never said no, and it answers now.
    await h.acknowledged(URI, 10_000);
    h.server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
  });

  // An internal error (-32603) or a gateway's (-32000) says nothing of the URI: the 2026 era asks
  // such a listen again with backoff. A 2025 subscribe so answered was declined for the rest of
  // the session: a server's passing trouble left the URI unpushed for hours.
  it('a subscribe answered with a passing server error is asked again, and covers once it succeeds', async () => {
    let failures = 0;
    h = await startHostile(
      'legacy-v2',
      {},
      {
        rewrite: (message, exchange) => {
          if (!subscribeOf(exchange, URI) || !('result' in message) || failures > 0)
            return undefined;
          failures += 1;
          return { jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'db busy' } };
        },
      },
    );
    const view = h.mount(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    await h.acknowledged(URI, 10_000);
    expect(h.proxy.stats(SUBSCRIBE).requests).toBe(2);
    h.server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
  });
});

describe.each(HOSTILE_KINDS)('a URI the $kind server refused, after a reconnect', ({ kind }) => {
  /** The server says no to BAD: a 2026-07-28 listen asking for it, or its 2025 subscribe. */
  const refusingBad: TamperRules = {
    rewrite: (message, exchange) => {
      const refused =
        kind === 'modern'
          ? isNotification(message, ACK) && requestedUris(exchange).includes(BAD)
          : 'result' in message && subscribeOf(exchange, BAD);
      if (!refused) return undefined;
      return {
        jsonrpc: '2.0',
        id: exchange.id,
        error: { code: -32602, message: 'unknown resource' },
      };
    },
  };

  it('is no longer shown declined once the new connection covers it', async () => {
    h = await startHostile(kind, {}, refusingBad);
    h.server.store.upsert(text(BAD, 'x'));
    const view = h.mount(BAD);
    await eventually(() => expect(h?.resource(BAD)?.declined).toContain('unknown resource'));
    await eventually(() => expect(view.text()).toBe('x'));
    // The server takes it now (the resource was created, a deploy): a new connection asks again.
    h.proxy.setRules(undefined);
    h.sync.reconnect();
    await h.acknowledged(BAD);
    expect(h.resource(BAD)?.declined).toBeUndefined();
  });
});
