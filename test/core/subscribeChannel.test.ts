import type { ServerCapabilities } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type {
  ChannelReport,
  Coverage,
  CoverageDiff,
  DeclinedChanges,
} from '../../src/core/channel';
import type { StreamStatus } from '../../src/core/events';
import type { LegacyStreamState } from '../../src/core/httpTransport';
import type { Desire } from '../../src/core/interest';
import type { NotifiedList } from '../../src/core/lists';
import { Retention } from '../../src/core/retention';
import { SubscribeChannel } from '../../src/core/subscribeChannel';
import { withChange, withDeclined } from '../support/coverage';
import { type Deferred, deferred } from '../support/deferred';

const BACKOFF = { initialDelayMs: 1000, maxDelayMs: 8000 };
const REQUEST_TIMEOUT_MS = 4000;
const RELEASE_AFTER_MS = 60_000;
/** A tenth of the quiet period: how long subscribing must pause before unsubscribes go. */
const LINGER_MS = RELEASE_AFTER_MS / 10;
const FULL: ServerCapabilities = {
  resources: { subscribe: true, listChanged: true },
  tools: { listChanged: true },
};

interface Request {
  method: 'subscribe' | 'unsubscribe';
  uri: string;
  timeout: number | undefined;
  answer: Deferred<object>;
  settled: boolean;
}

const flush = () => vi.advanceTimersByTimeAsync(0);

/** An error the server answered with (a JSON-RPC code), or one with no answer behind it. */
const refusal = (message: string, code = -32602) => Object.assign(new Error(message), { code });

function setup(
  options: {
    capabilities?: ServerCapabilities | undefined;
    stream?: LegacyStreamState;
    history?: Pick<StreamStatus, 'reopenCount' | 'lastCloseReason'>;
  } = {},
) {
  const capabilities = 'capabilities' in options ? options.capabilities : FULL;
  const requests: Request[] = [];
  const request = (method: Request['method']) =>
    vi.fn((params: { uri: string }, opts?: { timeout?: number }) => {
      const answer = deferred<object>();
      requests.push({ method, uri: params.uri, timeout: opts?.timeout, answer, settled: false });
      return answer.promise;
    });
  const client = {
    subscribeResource: request('subscribe'),
    unsubscribeResource: request('unsubscribe'),
  };
  const coverages: Coverage[] = [];
  /** Every report as the channel made it: what moved. */
  const changes: CoverageDiff[] = [];
  let declined: ReadonlyMap<string, string> = new Map();
  /** Every declined report as the channel made it. */
  const declinedReports: DeclinedChanges[] = [];
  const statuses: StreamStatus[] = [];
  const report: ChannelReport = {
    coverage: (change) => {
      changes.push(change);
      coverages.push(withChange(coverages.at(-1) ?? { uris: new Set(), lists: new Set() }, change));
    },
    declined: (changes) => {
      declinedReports.push(changes);
      declined = withDeclined(declined, changes);
    },
    status: (next) => statuses.push(next),
  };
  const life = new AbortController();
  let clockReads = 0;
  const channel = new SubscribeChannel(client as never, report, {
    signal: life.signal,
    // The top of each backoff range, so retry times are exact.
    clock: {
      now: () => {
        clockReads += 1;
        return Date.now();
      },
      random: () => 1,
    },
    capabilities,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    backoff: BACKOFF,
    retention: new Retention(),
    releaseAfterMs: RELEASE_AFTER_MS,
    history: options.history ?? { reopenCount: 0, lastCloseReason: undefined },
    stream: options.stream ?? 'open',
  });
  const pending = (method: Request['method'], uri: string) => {
    const found = requests.find((r) => r.method === method && r.uri === uri && !r.settled);
    if (!found) throw new Error(`no ${method} of ${uri}`);
    return found;
  };
  const answer = async (method: Request['method'], uri: string, error?: unknown) => {
    const found = pending(method, uri);
    found.settled = true;
    if (error === undefined) found.answer.resolve({});
    else found.answer.reject(error);
    await flush();
  };
  return {
    channel,
    /** The session ends: the channel's lifetime is over, then it closes what is open. */
    async end() {
      life.abort();
      await channel.close();
    },
    client,
    requests,
    count: (method: Request['method'], uri?: string) =>
      requests.filter((r) => r.method === method && (uri === undefined || r.uri === uri)).length,
    answer,
    covered: () => [...(coverages.at(-1)?.uris ?? [])].sort(),
    listsCovered: () => [...(coverages.at(-1)?.lists ?? [])].sort(),
    coverages,
    changes,
    declined: () => declined,
    declinedReports,
    status: () => statuses.at(-1) as StreamStatus,
    statuses,
    /** How often the channel has read the clock: a measure of the work an update does. */
    clockReads: () => clockReads,
  };
}

function desire(
  held: readonly string[],
  { lingering = [], lists = ['resources'] }: { lingering?: string[]; lists?: NotifiedList[] } = {},
): Desire {
  return {
    uris: [...new Set([...held, ...lingering])].sort(),
    held: new Set(held),
    lists: new Set(lists),
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('SubscribeChannel', () => {
  it('subscribes each wanted URI once, with the request timeout, and covers it once subscribed', async () => {
    const t = setup();
    t.channel.update(desire(['a://1', 'b://2']));
    t.channel.update(desire(['a://1', 'b://2']));
    expect(t.count('subscribe', 'a://1')).toBe(1);
    expect(t.count('subscribe', 'b://2')).toBe(1);
    expect(t.requests[0]?.timeout).toBe(REQUEST_TIMEOUT_MS);
    expect(t.covered()).toEqual([]);
    expect(t.channel.mayCover('a://1')).toBe(true);

    await t.answer('subscribe', 'a://1');
    expect(t.covered()).toEqual(['a://1']);
    await t.answer('subscribe', 'b://2');
    expect(t.covered()).toEqual(['a://1', 'b://2']);
    t.channel.update(desire(['a://1', 'b://2']));
    expect(t.count('subscribe')).toBe(2);
  });

  it('names only the URI an answer is about, not the covered set: a thousand subscriptions cost nothing per answer', async () => {
    const t = setup();
    const uris = Array.from({ length: 1000 }, (_, i) => `r://${i}`);
    t.channel.update(desire(uris));
    const reports = t.changes.length;
    for (const uri of uris) await t.answer('subscribe', uri);
    expect(t.covered()).toHaveLength(1000);
    expect(t.changes.slice(reports).map((c) => [c.gained, c.lost])).toEqual(
      uris.map((uri) => [[uri], []]),
    );

    t.channel.update(desire(uris.slice(1)));
    const before = t.changes.length;
    await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS);
    // Once things are quiet it is unsubscribed: no longer covered, named alone.
    expect(t.count('unsubscribe')).toBe(1);
    const after = t.changes.slice(before).filter((c) => c.gained.length + c.lost.length > 0);
    expect(after.map((c) => [c.gained, c.lost])).toEqual([[[], ['r://0']]]);
  });

  it('sends at most 32 subscribes at once; the rest go in the order they were wanted as answers come, each timed from when it is sent', async () => {
    const t = setup();
    const uris = Array.from({ length: 40 }, (_, i) => `q://${String(i).padStart(2, '0')}`);
    t.channel.update(desire(uris));
    expect(t.requests.map((r) => r.uri)).toEqual(uris.slice(0, 32));
    // Waiting its turn is not covered, but may still be: reads wait for it (rule 4).
    expect(t.channel.mayCover('q://35')).toBe(true);

    // Longer than the request timeout in the queue costs nothing: the SDK's timer starts when sent.
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS * 2);
    await t.answer('subscribe', 'q://05');
    await t.answer('subscribe', 'q://00', refusal('Resource not found'));
    expect(t.requests.slice(32).map((r) => [r.uri, r.timeout])).toEqual([
      ['q://32', REQUEST_TIMEOUT_MS],
      ['q://33', REQUEST_TIMEOUT_MS],
    ]);

    // Let go while waiting its turn: never sent.
    t.channel.update(desire(uris.filter((uri) => uri !== 'q://34')));
    for (const uri of uris.slice(1, 32)) if (uri !== 'q://05') await t.answer('subscribe', uri);
    expect(t.count('subscribe', 'q://34')).toBe(0);
    for (const uri of uris.slice(32)) if (uri !== 'q://34') await t.answer('subscribe', uri);
    expect(t.count('subscribe')).toBe(39);
    expect(t.covered()).toEqual(uris.filter((uri) => uri !== 'q://00' && uri !== 'q://34'));
  });

  it('a URI released while its subscribe is in flight is unsubscribed only after the subscribe settles', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    t.channel.update(desire([]));
    await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS); // idle settle: a://1 is no longer kept
    expect(t.count('unsubscribe')).toBe(0);

    await t.answer('subscribe', 'a://1');
    expect(t.count('unsubscribe', 'a://1')).toBe(1);
    expect(t.covered()).toEqual([]);

    // Wanted again while the unsubscribe is in flight: subscribed again after it settles.
    t.channel.update(desire(['a://1']));
    expect(t.count('subscribe', 'a://1')).toBe(1);
    await t.answer('unsubscribe', 'a://1');
    expect(t.count('subscribe', 'a://1')).toBe(2);
    await t.answer('subscribe', 'a://1');
    expect(t.covered()).toEqual(['a://1']);
  });

  it('a refusal (an error with a numeric code) declines the URI and is not retried', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    await t.answer('subscribe', 'a://1', refusal('Resource not found'));
    expect(t.declined().get('a://1')).toBe('the server refused: Resource not found');
    expect(t.channel.mayCover('a://1')).toBe(false);
    expect(t.covered()).toEqual([]);

    t.channel.update(desire(['a://1']));
    await vi.advanceTimersByTimeAsync(10 * BACKOFF.maxDelayMs);
    expect(t.count('subscribe', 'a://1')).toBe(1);

    // Let go and wanted again later: asking again is fair.
    t.channel.update(desire([]));
    expect(t.declined().has('a://1')).toBe(false);
    t.channel.update(desire(['a://1']));
    expect(t.count('subscribe', 'a://1')).toBe(2);
  });

  it('a refusal names its URI alone, not every URI declined so far: a thousand refusals cost nothing each', async () => {
    const t = setup();
    const uris = Array.from({ length: 1000 }, (_, i) => `r://${i}`);
    t.channel.update(desire(uris));
    for (const uri of uris) await t.answer('subscribe', uri, refusal('Resource not found'));
    expect(t.declined().size).toBe(1000);
    expect(t.declinedReports).toEqual(
      uris.map((uri) => [[uri, 'the server refused: Resource not found']]),
    );

    // Let go: each one is no longer declined, in one report.
    t.channel.update(desire(uris.slice(10)));
    expect(t.declinedReports.at(-1)).toEqual(uris.slice(0, 10).map((uri) => [uri, null]));
    expect(t.declined().size).toBe(990);
  });

  it('a failure with no code declines the URI as retrying, and retries it with backoff until it succeeds', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    await t.answer('subscribe', 'a://1', new Error('Request timed out'));
    expect(t.declined().get('a://1')).toBe('subscribe failed: Request timed out; retrying');
    expect(t.channel.mayCover('a://1')).toBe(false);

    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs - 1);
    expect(t.count('subscribe', 'a://1')).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.count('subscribe', 'a://1')).toBe(2);
    expect(t.declined().has('a://1')).toBe(false);

    await t.answer('subscribe', 'a://1', new Error('fetch failed'));
    await vi.advanceTimersByTimeAsync(2 * BACKOFF.initialDelayMs - 1);
    expect(t.count('subscribe', 'a://1')).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.count('subscribe', 'a://1')).toBe(3);

    await t.answer('subscribe', 'a://1');
    expect(t.declined().size).toBe(0);
    expect(t.covered()).toEqual(['a://1']);
  });

  it('a URI let go while its retry waits is not retried', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    await t.answer('subscribe', 'a://1', new Error('Request timed out'));
    t.channel.update(desire([]));
    await vi.advanceTimersByTimeAsync(10 * BACKOFF.maxDelayMs);
    expect(t.count('subscribe', 'a://1')).toBe(1);
    expect(t.declined().size).toBe(0);
  });

  it('covers only while the SSE stream delivers: not while it is opening', async () => {
    const t = setup({ stream: 'opening' });
    expect(t.status().state).toBe('opening');
    t.channel.update(desire(['a://1'], { lists: ['resources', 'tools'] }));
    await t.answer('subscribe', 'a://1');
    expect(t.covered()).toEqual([]);
    expect(t.listsCovered()).toEqual([]);
    // A read may still wait for it: the coverage can come.
    expect(t.channel.mayCover('a://1')).toBe(true);

    t.channel.streamChanged('open', false);
    expect(t.status().state).toBe('open');
    expect(t.covered()).toEqual(['a://1']);
    expect(t.listsCovered()).toEqual(['resources', 'tools']);
  });

  it("a custom transport's stream (unknown) is assumed open, with a note saying so", async () => {
    const t = setup({ stream: 'unknown' });
    expect(t.status()).toMatchObject({ state: 'open' });
    expect(t.status().note).toContain('custom transport');
    t.channel.update(desire(['a://1']));
    await t.answer('subscribe', 'a://1');
    expect(t.covered()).toEqual(['a://1']);
  });

  it('a resumed stream keeps coverage; one that had to start afresh re-covers (a gap, for the re-read)', async () => {
    const t = setup({ history: { reopenCount: 2, lastCloseReason: 'graceful' } });
    t.channel.update(desire(['a://1']));
    await t.answer('subscribe', 'a://1');
    expect(t.status()).toMatchObject({ state: 'open', reopenCount: 2 });

    t.channel.streamChanged('resuming', false);
    expect(t.status()).toMatchObject({
      state: 'reopening',
      reopenCount: 3,
      lastCloseReason: 'remote',
      attempt: 1,
    });
    expect(t.covered()).toEqual(['a://1']);

    let reports = t.coverages.length;
    t.channel.streamChanged('open', true); // Last-Event-ID replayed what was missed
    expect(t.status()).toMatchObject({ state: 'open', attempt: 0 });
    expect(t.coverages.slice(reports).every((c) => c.uris.has('a://1'))).toBe(true);

    t.channel.streamChanged('resuming', false);
    reports = t.coverages.length;
    t.channel.streamChanged('open', false); // started afresh: whatever was sent meanwhile is lost
    const after = t.coverages.slice(reports).map((c) => [...c.uris]);
    expect(after).toEqual([[], ['a://1']]);
    expect(t.status().reopenCount).toBe(4);
  });

  it('an unsupported stream (GET 405) makes the channel unsupported: nothing covered, nothing may be', async () => {
    const t = setup();
    t.channel.update(desire(['a://1'], { lists: ['resources', 'tools'] }));
    await t.answer('subscribe', 'a://1');
    expect(t.covered()).toEqual(['a://1']);

    t.channel.streamChanged('unsupported', false);
    expect(t.status().state).toBe('unsupported');
    expect(t.status().note).toContain('405');
    expect(t.covered()).toEqual([]);
    expect(t.listsCovered()).toEqual([]);
    expect(t.channel.mayCover('a://1')).toBe(false);
    expect(t.channel.mayCover('b://2')).toBe(false);
    expect(t.channel.mayCoverList('resources')).toBe(false);
  });

  it('once the stream is unsupported every wanted URI is declined saying so, and nothing more is asked', async () => {
    const t = setup();
    t.channel.update(desire(['a://1', 'b://2']));
    await t.answer('subscribe', 'a://1');
    t.channel.streamChanged('unsupported', false);
    const reason = t.status().note as string;
    expect(reason).toContain('notifications cannot arrive');
    expect(t.declined()).toEqual(
      new Map([
        ['a://1', reason],
        ['b://2', reason],
      ]),
    );
    // The subscribe in flight is answered; later URIs and retries ask nothing.
    await t.answer('subscribe', 'b://2');
    t.channel.update(desire(['a://1', 'b://2', 'c://3'], { lingering: ['d://4'] }));
    expect(t.declined().get('c://3')).toBe(reason);
    expect(t.declined().get('d://4')).toBe(reason);
    expect(t.count('subscribe')).toBe(2);
    expect(t.covered()).toEqual([]);
    // A URI let go forgets the reason, as any declined URI does.
    t.channel.update(desire(['a://1']));
    expect([...t.declined().keys()]).toEqual(['a://1']);
  });

  it("a subscribe in flight when the stream turns unsupported that then gets no answer, or a refusal, stays declined with the stream's note and is not retried", async () => {
    const t = setup();
    t.channel.update(desire(['a://1', 'b://2']));
    t.channel.streamChanged('unsupported', false);
    const reason = t.status().note as string;
    await t.answer('subscribe', 'a://1', new Error('Request timed out'));
    await t.answer('subscribe', 'b://2', refusal('Resource not found'));
    expect(t.declined().get('a://1')).toBe(reason);
    expect(t.declined().get('b://2')).toBe(reason);
    // No retry is waiting: a backoff's worth later nothing was asked, nothing undeclined.
    await vi.advanceTimersByTimeAsync(BACKOFF.maxDelayMs * 4);
    expect(t.count('subscribe')).toBe(2);
    expect(t.declined().get('a://1')).toBe(reason);
    expect(vi.getTimerCount()).toBe(1); // the quiet timer of the last update, nothing else
  });

  it('a stream unsupported from the start declines at the first update and asks nothing', () => {
    const t = setup({ stream: 'unsupported' });
    t.channel.update(desire(['a://1']));
    expect(t.declined().get('a://1')).toContain('notifications cannot arrive');
    expect(t.requests).toHaveLength(0);
  });

  it('without resources.subscribe every wanted URI is declined and nothing is asked; lists are still covered', () => {
    const t = setup({ capabilities: { resources: { listChanged: true } } });
    t.channel.update(desire(['a://1'], { lingering: ['b://2'] }));
    const reason = 'the server did not declare resources.subscribe';
    expect(t.declined()).toEqual(
      new Map([
        ['a://1', reason],
        ['b://2', reason],
      ]),
    );
    expect(t.requests).toHaveLength(0);
    expect(t.channel.mayCover('a://1')).toBe(false);
    expect(t.listsCovered()).toEqual(['resources']);
    expect(t.channel.mayCoverList('resources')).toBe(true);
    expect(t.channel.mayCoverList('tools')).toBe(false);
  });

  describe('retention', () => {
    it('a released URI within the budget stays subscribed (and covered) until things are quiet', async () => {
      const t = setup();
      t.channel.update(desire(['a://1', 'b://2']));
      await t.answer('subscribe', 'a://1');
      await t.answer('subscribe', 'b://2');

      t.channel.update(desire(['a://1'], { lingering: ['b://2'] }));
      t.channel.update(desire(['a://1']));
      await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS - 1);
      expect(t.count('unsubscribe')).toBe(0);
      expect(t.covered()).toEqual(['a://1', 'b://2']);

      await vi.advanceTimersByTimeAsync(1);
      expect(t.count('unsubscribe', 'b://2')).toBe(1);
      expect(t.count('unsubscribe', 'a://1')).toBe(0);
      expect(t.covered()).toEqual(['a://1']);
    });

    it('an update restarts the quiet period', async () => {
      const t = setup();
      t.channel.update(desire(['a://1', 'b://2']));
      await t.answer('subscribe', 'a://1');
      await t.answer('subscribe', 'b://2');
      t.channel.update(desire(['a://1']));
      await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS - 10);
      t.channel.update(desire(['a://1', 'c://3']));
      await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS - 1);
      expect(t.count('unsubscribe')).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(t.count('unsubscribe', 'b://2')).toBe(1);
    });

    it('released URIs over the budget are unsubscribed once subscribing has paused for a linger period, the earliest released first, four at a time', async () => {
      const t = setup();
      const all = Array.from({ length: 70 }, (_, i) => `r://${String(i).padStart(2, '0')}`);
      t.channel.update(desire(all));
      for (const uri of all) await t.answer('subscribe', uri);
      t.channel.update(desire([]));
      // 70 released, 2 × 32 kept: 6 go, but not while subscribes were just sent.
      expect(t.count('unsubscribe')).toBe(0);
      expect(t.covered()).toHaveLength(70);
      await vi.advanceTimersByTimeAsync(LINGER_MS);
      const gone = () => t.requests.filter((r) => r.method === 'unsubscribe').map((r) => r.uri);
      expect(gone()).toEqual(all.slice(0, 4));
      await t.answer('unsubscribe', all[0] as string);
      expect(gone()).toEqual(all.slice(0, 5));
      await t.answer('unsubscribe', all[1] as string);
      expect(gone()).toEqual(all.slice(0, 6));
      expect(t.covered()).toEqual(all.slice(6));
    });

    it('letting go of many URIs at once weighs the unsubscribes once, not once per URI (a scrolling list lets go of a wave every frame)', async () => {
      const t = setup();
      const rows = Array.from({ length: 400 }, (_, i) => `r://${String(i).padStart(3, '0')}`);
      t.channel.update(desire(rows));
      for (const uri of rows) await t.answer('subscribe', uri);
      t.channel.update(desire(['next://1'])); // all 400 let go while a subscribe was just sent
      const before = t.clockReads();
      t.channel.update(desire(['next://1', 'next://2']));
      // Every URI is looked at, but the clock is read a handful of times, not 400.
      expect(t.clockReads() - before).toBeLessThan(10);
      expect(t.count('unsubscribe')).toBe(1); // over 256 waiting: one at a time while busy
      expect(vi.getTimerCount()).toBeLessThanOrEqual(3);
    });

    it('while subscribes are being sent, unsubscribes wait (a URI wanted again meanwhile costs no request), until more than 256 wait: then one at a time', async () => {
      const t = setup();
      const wave = (k: number) =>
        Array.from({ length: 100 }, (_, i) => `w${k}://${String(i).padStart(2, '0')}`);
      // Waves of 100 new URIs every 100 ms: each releases the one before.
      for (let k = 0; k < 6; k++) {
        t.channel.update(desire(wave(k)));
        for (const uri of wave(k)) await t.answer('subscribe', uri);
        await vi.advanceTimersByTimeAsync(100);
      }
      // 500 released; retention keeps 200, 300 wait for their unsubscribe.
      expect(t.count('unsubscribe')).toBe(1);
      await t.answer('unsubscribe', 'w0://00');
      expect(t.count('unsubscribe')).toBe(2);
      // Wanted again while it waits: still subscribed, nothing to send.
      t.channel.update(desire([...wave(5), 'w0://50']));
      expect(t.covered()).toContain('w0://50');
      expect(t.count('subscribe', 'w0://50')).toBe(1);
      expect(t.count('unsubscribe', 'w0://50')).toBe(0);
    });
  });

  it('the end of its session stops retries and the quiet timer, and late answers report nothing', async () => {
    const t = setup();
    t.channel.update(desire(['a://1', 'b://2', 'c://3']));
    await t.answer('subscribe', 'a://1', new Error('Request timed out')); // retry pending
    await t.answer('subscribe', 'b://2');
    t.channel.update(desire(['a://1', 'c://3'])); // b://2 released: quiet timer running
    const reports = t.coverages.length;
    await t.end();
    await t.answer('subscribe', 'c://3');
    await vi.advanceTimersByTimeAsync(10 * RELEASE_AFTER_MS);
    expect(t.count('subscribe')).toBe(3);
    expect(t.count('unsubscribe')).toBe(0);
    expect(t.coverages.length).toBe(reports);
  });
});
