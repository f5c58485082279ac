import type { McpSubscription, ServerCapabilities } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChannelReport, Coverage } from '../../src/core/channel';
import type { StreamStatus } from '../../src/core/events';
import type { Desire } from '../../src/core/interest';
import { ListenChannel } from '../../src/core/listenChannel';
import { MAX_STREAMS, MAX_WAIT_MS, QUIET_MS } from '../../src/core/listenPlan';
import type { NotifiedList } from '../../src/core/lists';
import { Retention } from '../../src/core/retention';
import { withChange, withDeclined } from '../support/coverage';
import { type Deferred, deferred } from '../support/deferred';

const BACKOFF = { initialDelayMs: 1000, maxDelayMs: 8000 };
const ACK_TIMEOUT_MS = 5000;
const RELEASE_AFTER_MS = 60_000;
const FULL: ServerCapabilities = {
  resources: { subscribe: true, listChanged: true },
  tools: { listChanged: true },
  prompts: { listChanged: true },
};

interface Filter {
  resourcesListChanged?: true;
  toolsListChanged?: true;
  promptsListChanged?: true;
  resourceSubscriptions?: string[];
}

/** One `listen` request: acknowledge it, fail it, or end its stream by hand. */
interface FakeStream {
  id: number;
  state: 'requested' | 'open' | 'closed' | 'failed';
  filter: Filter;
  timeout: number | undefined;
  request: Deferred<McpSubscription>;
  close: ReturnType<typeof vi.fn>;
  closed: Deferred<'local' | 'graceful' | 'remote'>;
  /** The server's acknowledgement: by default it honours exactly what was asked. */
  ack(honored?: Filter): Promise<void>;
  /** The stream ends on the server's side. */
  end(reason: 'graceful' | 'remote'): Promise<void>;
  fail(error: unknown): Promise<void>;
}

const flush = () => vi.advanceTimersByTimeAsync(0);

function setup(
  options: {
    capabilities?: ServerCapabilities | undefined;
    random?: () => number;
    /** Every request is acknowledged (as asked) this long after it is made. */
    ackAfterMs?: number;
  } = {},
) {
  const capabilities = 'capabilities' in options ? options.capabilities : FULL;
  const random = options.random ?? (() => 1);
  const log: string[] = [];
  const streams: FakeStream[] = [];
  /** Most streams requested or open at once, and most open at once. */
  const peak = { live: 0, open: 0 };
  const count = (...states: FakeStream['state'][]) =>
    streams.filter((stream) => states.includes(stream.state)).length;
  const measure = () => {
    peak.live = Math.max(peak.live, count('requested', 'open'));
    peak.open = Math.max(peak.open, count('open'));
  };
  const client = {
    listen: vi.fn((filter: Filter, listenOptions?: { timeout?: number }) => {
      const id = streams.length + 1;
      const request = deferred<McpSubscription>();
      const closed = deferred<'local' | 'graceful' | 'remote'>();
      const close = vi.fn(async () => {
        log.push(`close #${id}`);
        stream.state = 'closed';
        closed.resolve('local');
      });
      const stream: FakeStream = {
        id,
        state: 'requested',
        filter: structuredClone(filter),
        timeout: listenOptions?.timeout,
        request,
        close,
        closed,
        async ack(honored = filter) {
          log.push(`ack #${id}`);
          stream.state = 'open';
          request.resolve({ honoredFilter: honored, close, closed: closed.promise });
          await flush();
          measure();
        },
        async end(reason) {
          log.push(`end #${id}`);
          stream.state = 'closed';
          closed.resolve(reason);
          await flush();
        },
        async fail(error) {
          stream.state = 'failed';
          request.reject(error);
          await flush();
        },
      };
      streams.push(stream);
      log.push(`listen #${id}`);
      // Counted once the turn that asked ends: what it closes behind the
      // request goes in the same turn, before anything reaches the wire.
      queueMicrotask(measure);
      if (options.ackAfterMs !== undefined) {
        setTimeout(() => void stream.ack(), options.ackAfterMs);
      }
      return request.promise;
    }),
  };
  let coverage: Coverage = { uris: new Set(), lists: new Set() };
  let declined: ReadonlyMap<string, string> = new Map();
  const statuses: StreamStatus[] = [];
  /** When each URI was first covered (fake time). */
  const coveredAt = new Map<string, number>();
  const report: ChannelReport = {
    coverage(change) {
      const next = withChange(coverage, change);
      coverage = next;
      for (const uri of next.uris) if (!coveredAt.has(uri)) coveredAt.set(uri, Date.now());
      log.push(`coverage ${[...next.uris].sort().join(',')}`);
    },
    declined(changes) {
      declined = withDeclined(declined, changes);
    },
    status(next) {
      statuses.push(next);
    },
  };
  const retention = new Retention();
  const life = new AbortController();
  const channel = new ListenChannel(client, report, {
    signal: life.signal,
    backoff: BACKOFF,
    ackTimeoutMs: ACK_TIMEOUT_MS,
    capabilities,
    retention,
    releaseAfterMs: RELEASE_AFTER_MS,
    clock: { now: () => Date.now(), random },
  });
  const stream = (n: number) => {
    const found = streams[n - 1];
    if (!found) throw new Error(`no stream #${n} (${streams.length} opened)`);
    return found;
  };
  return {
    channel,
    /** The session ends: the channel's lifetime is over, then it closes what is open. */
    async end() {
      life.abort();
      await channel.close();
    },
    client,
    streams,
    stream,
    last: () => stream(streams.length),
    log,
    retention,
    covered: () => [...coverage.uris].sort(),
    /** The ids of the streams acknowledged and not closed. */
    open: () => streams.filter((stream) => stream.state === 'open').map((stream) => stream.id),
    peak,
    coveredAt,
    /** `resourceSubscriptions` entries over every request made. */
    entries: () =>
      streams.reduce((sum, stream) => sum + (stream.filter.resourceSubscriptions?.length ?? 0), 0),
    listsCovered: () => [...coverage.lists].sort(),
    declined: () => declined,
    status: () => statuses.at(-1) as StreamStatus,
    statuses,
  };
}

/** Three streams, acknowledged one after the other, carrying `sizes` URIs (a://, b://, c://). */
async function threeStreams(
  t: ReturnType<typeof setup>,
  ...sizes: [number, number, number]
): Promise<[string[], string[], string[]]> {
  const [a, b, c] = ['a://', 'b://', 'c://'].map((prefix, i) => uris(prefix, sizes[i] as number));
  const waves = [a, b, c] as [string[], string[], string[]];
  const wanted: string[] = [];
  for (const [i, wave] of waves.entries()) {
    wanted.push(...wave);
    t.channel.update(desire([...wanted]));
    await t.stream(i + 1).ack();
  }
  return waves;
}

/** A desire as the interest registry flushes it. */
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

const uris = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('ListenChannel', () => {
  it('opens one stream whose filter names the held URIs and wanted lists, bounded by the ack timeout', async () => {
    const t = setup();
    t.channel.update(desire(['b://2', 'a://1'], { lists: ['resources', 'tools'] }));
    expect(t.client.listen).toHaveBeenCalledTimes(1);
    expect(t.stream(1).filter).toEqual({
      resourcesListChanged: true,
      toolsListChanged: true,
      resourceSubscriptions: ['a://1', 'b://2'],
    });
    expect(t.stream(1).timeout).toBe(ACK_TIMEOUT_MS);
    expect(t.status().state).toBe('opening');
    expect(t.covered()).toEqual([]);

    await t.stream(1).ack();
    expect(t.covered()).toEqual(['a://1', 'b://2']);
    expect(t.listsCovered()).toEqual(['resources', 'tools']);
    expect(t.status()).toMatchObject({ state: 'open', attempt: 0, reopenCount: 0 });
  });

  it('URIs added while a stream is open go into a stream of their own: nothing already covered is sent again', async () => {
    const t = setup();
    t.channel.update(desire(['a://1'], { lists: ['resources', 'tools'] }));
    await t.stream(1).ack();
    t.channel.update(desire(['a://1', 'b://2'], { lists: ['resources', 'tools'] }));
    // Only the newcomer, and no list bits: the first stream still carries those.
    expect(t.stream(2).filter).toEqual({ resourceSubscriptions: ['b://2'] });
    await t.stream(2).ack();
    expect(t.stream(1).close).not.toHaveBeenCalled();
    expect(t.open()).toEqual([1, 2]);
    expect(t.covered()).toEqual(['a://1', 'b://2']);
    expect(t.listsCovered()).toEqual(['resources', 'tools']);
    expect(t.entries()).toBe(2);
  });

  it('changes that arrive while a stream is opening go into one next stream', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    t.channel.update(desire(['a://1', 'b://2']));
    t.channel.update(desire(['a://1', 'b://2', 'c://3']));
    t.channel.update(desire(['a://1', 'b://2', 'c://3', 'd://4']));
    expect(t.client.listen).toHaveBeenCalledTimes(1);

    await t.stream(1).ack();
    expect(t.client.listen).toHaveBeenCalledTimes(2);
    expect(t.stream(2).filter.resourceSubscriptions).toEqual(['b://2', 'c://3', 'd://4']);
    await t.stream(2).ack();
    expect(t.client.listen).toHaveBeenCalledTimes(2);
    expect(t.covered()).toEqual(['a://1', 'b://2', 'c://3', 'd://4']);
  });

  it(`at most ${MAX_STREAMS} streams stay open: the next addition merges with the smallest, which closes only once the merge is acknowledged (make-before-break)`, async () => {
    const t = setup();
    const [a, b, c] = await threeStreams(t, 10, 5, 2);
    expect(t.open()).toEqual([1, 2, 3]);

    t.channel.update(desire([...a, ...b, ...c, 'd://1']));
    expect(t.stream(4).filter.resourceSubscriptions).toEqual([...c, 'd://1']);
    await vi.advanceTimersByTimeAsync(ACK_TIMEOUT_MS - 1);
    // While the merge is unacknowledged, the stream it replaces still covers its URIs.
    expect(t.stream(3).close).not.toHaveBeenCalled();
    expect(t.covered()).toEqual([...a, ...b, ...c].sort());

    t.log.length = 0;
    await t.stream(4).ack();
    // The new coverage was in place before the replaced stream went: never both closed.
    expect(t.log).toEqual([
      'ack #4',
      `coverage ${[...a, ...b, ...c, 'd://1'].sort().join(',')}`,
      'close #3',
    ]);
    expect(t.open()).toEqual([1, 2, 4]);
    expect(t.peak).toEqual({ live: MAX_STREAMS + 1, open: MAX_STREAMS });
    // The replaced stream's own end is ours: it is not taken for a loss.
    await flush();
    expect(t.status()).toMatchObject({ state: 'open', reopenCount: 0 });
    expect(t.covered()).toEqual([...a, ...b, ...c, 'd://1'].sort());
  });

  it('an acknowledgement reports its coverage first (the reads it releases go out) and closes what it replaced on the next turn, or right behind the next listen request', async () => {
    const t = setup();
    const [a, b, c] = await threeStreams(t, 3, 2, 1);
    t.channel.update(desire([...a, ...b, ...c, 'd://1']));
    expect(t.stream(4).filter.resourceSubscriptions).toEqual([...c, 'd://1']);

    t.log.length = 0;
    t.stream(4).request.resolve({
      honoredFilter: t.stream(4).filter,
      close: t.stream(4).close,
      closed: t.stream(4).closed.promise,
    } as unknown as McpSubscription);
    await Promise.resolve();
    await Promise.resolve();
    expect(t.log).toEqual([`coverage ${[...a, ...b, ...c, 'd://1'].sort().join(',')}`]);
    expect(t.stream(3).close).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(t.log.at(-1)).toBe('close #3');

    // A merge acknowledged while a newcomer waits: what it replaced goes right behind the next request.
    t.channel.update(desire([...a, ...b, ...c, 'd://1', 'e://1']));
    expect(t.stream(5).filter.resourceSubscriptions).toEqual([...b, 'e://1']);
    t.channel.update(desire([...a, ...b, ...c, 'd://1', 'e://1', 'f://1']));
    t.log.length = 0;
    await t.stream(5).ack();
    expect(t.log.slice(0, 4)).toEqual([
      'ack #5',
      `coverage ${[...a, ...b, ...c, 'd://1', 'e://1'].sort().join(',')}`,
      'listen #6',
      'close #2',
    ]);
    expect(t.peak.live).toBeLessThanOrEqual(MAX_STREAMS + 1);
  });

  it.each([5, 40])(
    `a list that only grows (25 URIs every 30 ms to 3,000, acknowledged after %i ms) costs about two filter entries per URI, in at most ${MAX_STREAMS + 1} streams at once, each URI covered within MAX_WAIT_MS`,
    async (ackAfterMs) => {
      const t = setup({ ackAfterMs });
      const all = uris('row://', 3000);
      const wantedAt = new Map<string, number>();
      for (let n = 25; n <= all.length; n += 25) {
        for (const uri of all.slice(n - 25, n)) wantedAt.set(uri, Date.now());
        t.channel.update(desire(all.slice(0, n)));
        await vi.advanceTimersByTimeAsync(30);
      }
      await vi.advanceTimersByTimeAsync(MAX_WAIT_MS + 2 * ackAfterMs);
      expect(t.covered()).toEqual([...all].sort());
      // One whole filter per change would be ~60 entries per URI here.
      expect(t.entries()).toBeLessThanOrEqual(2.2 * all.length);
      expect(t.peak.live).toBeLessThanOrEqual(MAX_STREAMS + 1);
      expect(t.open().length).toBeLessThanOrEqual(MAX_STREAMS);
      // A newcomer waits at most MAX_WAIT_MS, plus the request in flight and its own.
      const waits = all.map(
        (uri) => (t.coveredAt.get(uri) as number) - (wantedAt.get(uri) as number),
      );
      expect(Math.max(...waits)).toBeLessThanOrEqual(MAX_WAIT_MS + 2 * ackAfterMs);
      // Open streams never carry the same URI twice (each would deliver its updates).
      const carried = t.open().flatMap((id) => t.stream(id).filter.resourceSubscriptions ?? []);
      expect(new Set(carried).size).toBe(carried.length);
    },
  );

  it.each([5, 40])(
    'a list that loads its next page only once the last is covered (acknowledged after %i ms): after a wait that brought no newcomer, pages open at once, log-structured',
    async (ackAfterMs) => {
      const t = setup({ ackAfterMs });
      const all = uris('row://', 1000);
      const waits: number[] = [];
      for (let n = 25; n <= all.length; n += 25) {
        const page = all.slice(n - 25, n);
        const asked = Date.now();
        t.channel.update(desire(all.slice(0, n)));
        // The app shows the page once it is covered (and read), then asks for the next.
        while (!page.every((uri) => t.coveredAt.has(uri))) await vi.advanceTimersByTimeAsync(1);
        waits.push(Date.now() - asked);
        await vi.advanceTimersByTimeAsync(10);
      }
      // Before: every page past the third waited out the quiet for newcomers that come only
      // after it (~300 ms a page), and each merge re-sent the smallest stream (7 entries per URI).
      const waited = waits.filter((ms) => ms > 2 * ackAfterMs + 1).length;
      expect(waited).toBeLessThanOrEqual(8);
      // Once waits have brought nothing twice in a row, the waits that check whether waiting pays
      // again last QUIET_MS.
      const long = waits.filter((ms) => ms > QUIET_MS + 2 * ackAfterMs + 1).length;
      expect(long).toBeLessThanOrEqual(1);
      expect(t.entries()).toBeLessThanOrEqual(4 * all.length);
      expect(t.peak.live).toBeLessThanOrEqual(MAX_STREAMS + 1);
      expect(t.covered()).toEqual([...all].sort());
    },
  );

  it('a list that starts growing on its own after loading page by page: rows that come while a request is in flight end the pages opened at once', async () => {
    const ackAfterMs = 40;
    const t = setup({ ackAfterMs });
    const all = uris('row://', 1500);
    // 500 rows a page at a time, each once the last is covered: pages open at once by now.
    let n = 25;
    for (; n <= 500; n += 25) {
      const page = all.slice(n - 25, n);
      t.channel.update(desire(all.slice(0, n)));
      while (!page.every((uri) => t.coveredAt.has(uri))) await vi.advanceTimersByTimeAsync(1);
      await vi.advanceTimersByTimeAsync(10);
    }
    const before = t.entries();
    // Then 25 rows every 10 ms whatever is covered: most come while a request is in flight.
    for (; n <= all.length; n += 25) {
      t.channel.update(desire(all.slice(0, n)));
      await vi.advanceTimersByTimeAsync(10);
    }
    await vi.advanceTimersByTimeAsync(MAX_WAIT_MS + 2 * ackAfterMs);
    expect(t.covered()).toEqual([...all].sort());
    // Merged at once group after group (the run of 16 the pages earned), as before the channel
    // noticed rows coming in flight, these 1,000 rows cost 2,275 entries; seen to grow on their
    // own, they are waited for and coalesced again.
    expect(t.entries() - before).toBeLessThanOrEqual(2 * 1000);
  });

  it('covers only the intersection of what was requested and what was acknowledged (rule 5)', async () => {
    const t = setup();
    t.channel.update(desire(['a://1', 'b://2']));
    await t.stream(1).ack({
      resourcesListChanged: true,
      toolsListChanged: true, // honoured but never requested
      resourceSubscriptions: ['a://1', 'x://not-asked'],
    });
    expect(t.covered()).toEqual(['a://1']);
    expect(t.listsCovered()).toEqual(['resources']);
    expect(t.declined()).toEqual(new Map([['b://2', 'not in the acknowledged filter']]));
    expect(t.channel.mayCover('a://1')).toBe(true);
    expect(t.channel.mayCover('b://2')).toBe(false);
  });

  it('an acknowledgement without the list bit leaves the list uncovered', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    await t.stream(1).ack({ resourceSubscriptions: ['a://1'] });
    expect(t.covered()).toEqual(['a://1']);
    expect(t.listsCovered()).toEqual([]);
  });

  it('a list asked for and left out of the acknowledgement cannot be covered until a later stream asks for it again (rule 5)', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    expect(t.channel.mayCoverList('resources')).toBe(true);
    await t.stream(1).ack({ resourceSubscriptions: ['a://1'] });
    expect(t.channel.mayCoverList('resources')).toBe(false);

    // A list wanted later and left out too: its acknowledgement moves no coverage, and is
    // reported all the same (the session re-checks the fetches waiting for the list then).
    t.channel.update(desire(['a://1'], { lists: ['resources', 'tools'] }));
    expect(t.channel.mayCoverList('tools')).toBe(true);
    const reports = () => t.log.filter((entry) => entry.startsWith('coverage')).length;
    const before = reports();
    await t.stream(2).ack({ resourceSubscriptions: ['a://1'] });
    expect(reports()).toBe(before + 1);
    expect(t.listsCovered()).toEqual([]);
    expect(t.channel.mayCoverList('tools')).toBe(false);

    // The stream ends: the lists are asked again with it, and may be granted this time.
    await t.stream(2).end('remote');
    expect(t.channel.mayCoverList('tools')).toBe(true);
    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
    await t.stream(3).ack();
    expect(t.listsCovered()).toEqual(['resources', 'tools']);
  });

  it.each<'remote' | 'graceful'>(['remote', 'graceful'])(
    'a stream that ends (%s) loses coverage and is re-opened after the backoff',
    async (reason) => {
      const t = setup();
      t.channel.update(desire(['a://1']));
      await t.stream(1).ack();
      await vi.advanceTimersByTimeAsync(100);

      const endedAt = Date.now();
      await t.stream(1).end(reason);
      expect(t.covered()).toEqual([]);
      expect(t.listsCovered()).toEqual([]);
      expect(t.status()).toMatchObject({
        state: 'reopening',
        reopenCount: 1,
        lastCloseReason: reason,
        attempt: 1,
        nextRetryAt: endedAt + BACKOFF.initialDelayMs,
      });

      await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs - 1);
      expect(t.client.listen).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(t.client.listen).toHaveBeenCalledTimes(2);
      expect(t.stream(2).filter).toEqual(t.stream(1).filter);
      await t.stream(2).ack();
      expect(t.covered()).toEqual(['a://1']);
      expect(t.status()).toMatchObject({
        state: 'open',
        reopenCount: 1,
        lastCloseReason: reason,
        attempt: 0,
        nextRetryAt: undefined,
      });
    },
  );

  it('a stream that dies right after its acknowledgement keeps backing off; one that lived ≥ maxDelayMs starts over', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    await t.stream(1).ack();
    await vi.advanceTimersByTimeAsync(BACKOFF.maxDelayMs);

    const gaps: number[] = [];
    const endLast = async () => {
      const at = Date.now();
      await t.last().end('remote');
      const next = t.status().nextRetryAt as number;
      gaps.push(next - at);
      await vi.advanceTimersByTimeAsync(next - at);
      await t.last().ack();
    };
    await endLast(); // lived long: initial delay
    await endLast(); // died at once: doubled
    await endLast();
    await vi.advanceTimersByTimeAsync(BACKOFF.maxDelayMs);
    await endLast(); // lived long again
    expect(gaps).toEqual([1000, 2000, 4000, 1000]);
    expect(t.status().reopenCount).toBe(4);
  });

  it('a failed listen is retried with backoff, showing reopening and the last error until a stream opens', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    const at = Date.now();
    await t.stream(1).fail(new Error('ack timed out'));
    expect(t.status()).toMatchObject({
      state: 'reopening',
      attempt: 1,
      nextRetryAt: at + BACKOFF.initialDelayMs,
      lastError: 'ack timed out',
    });
    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
    expect(t.client.listen).toHaveBeenCalledTimes(2);
    await t.stream(2).fail(new Error('still down'));
    expect(t.status()).toMatchObject({ attempt: 2, lastError: 'still down' });
    expect((t.status().nextRetryAt as number) - Date.now()).toBe(2000);

    // Changes during the wait are batched into the retry, not sent early.
    t.channel.update(desire(['a://1', 'b://2']));
    expect(t.client.listen).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(2000);
    expect(t.client.listen).toHaveBeenCalledTimes(3);
    expect(t.stream(3).filter.resourceSubscriptions).toEqual(['a://1', 'b://2']);
    await t.stream(3).ack();
    expect(t.status()).toMatchObject({ state: 'open', attempt: 0, lastError: undefined });
  });

  it('a listen refused with a JSON-RPC error is not retried with backoff: its new URIs are halved at once, and the one refused alone is declined until let go', async () => {
    const t = setup();
    const refusal = Object.assign(new Error('unknown resource'), { code: -32602 });
    t.channel.update(desire(['a://1', 'a://2', 'a://3'], { lists: [] }));
    await t.stream(1).fail(refusal);
    expect(t.stream(2).filter.resourceSubscriptions).toEqual(['a://1', 'a://2']);
    await t.stream(2).ack();
    expect(t.stream(3).filter.resourceSubscriptions).toEqual(['a://3']);
    await t.stream(3).fail(refusal);
    expect(t.declined()).toEqual(new Map([['a://3', 'the server refused: unknown resource']]));
    expect(t.channel.mayCover('a://3')).toBe(false);
    expect(t.covered()).toEqual(['a://1', 'a://2']);
    expect(t.status()).toMatchObject({ state: 'open', attempt: 0, nextRetryAt: undefined });
    await vi.advanceTimersByTimeAsync(BACKOFF.maxDelayMs * 2);
    expect(t.client.listen).toHaveBeenCalledTimes(3);

    // Let go, it forgets the refusal; wanted again, it is asked again.
    t.channel.update(desire(['a://1', 'a://2'], { lists: [] }));
    expect(t.declined()).toEqual(new Map());
    t.channel.update(desire(['a://1', 'a://2', 'a://3'], { lists: [] }));
    expect(t.client.listen).toHaveBeenCalledTimes(4);
    expect(t.last().filter.resourceSubscriptions).toEqual(['a://3']);
  });

  it('a listen refused with a transient JSON-RPC error (the SDK server full at -32603, a gateway -32000) is asked again with backoff, nothing declined', async () => {
    const t = setup();
    const full = Object.assign(new Error('Subscription limit reached'), { code: -32603 });
    t.channel.update(desire(['a://1'], { lists: [] }));
    await t.stream(1).fail(full);
    expect(t.declined()).toEqual(new Map());
    expect(t.channel.mayCover('a://1')).toBe(true);
    expect(t.status()).toMatchObject({
      state: 'reopening',
      attempt: 1,
      lastError: 'Subscription limit reached',
    });
    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
    expect(t.stream(2).filter.resourceSubscriptions).toEqual(['a://1']);
    await t.stream(2).fail(Object.assign(new Error('bad gateway'), { code: -32000 }));
    expect(t.declined()).toEqual(new Map());
    await vi.advanceTimersByTimeAsync(2000);
    await t.stream(3).ack();
    expect(t.covered()).toEqual(['a://1']);
  });

  it('-32002 (resource not found) is a refusal, like -32602', async () => {
    const t = setup();
    const missing = Object.assign(new Error('Resource not found'), { code: -32002 });
    t.channel.update(desire(['a://1'], { lists: [] }));
    await t.stream(1).fail(missing);
    expect(t.declined()).toEqual(new Map([['a://1', 'the server refused: Resource not found']]));
    expect(t.client.listen).toHaveBeenCalledTimes(1);
  });

  it('new lists in a refused listen go with its later half; a list refused alone cannot be covered and is not asked again', async () => {
    const t = setup();
    const refusal = Object.assign(new Error('not supported'), { code: -32602 });
    t.channel.update(desire(['a://1'], { lists: ['resources'] }));
    await t.stream(1).fail(refusal);
    expect(t.stream(2).filter).toEqual({ resourceSubscriptions: ['a://1'] });
    await t.stream(2).ack();
    expect(t.stream(3).filter).toEqual({ resourcesListChanged: true });
    await t.stream(3).fail(refusal);
    expect(t.channel.mayCoverList('resources')).toBe(false);
    expect(t.status()).toMatchObject({ state: 'open', attempt: 0 });
    await vi.advanceTimersByTimeAsync(BACKOFF.maxDelayMs * 2);
    expect(t.client.listen).toHaveBeenCalledTimes(3);
  });

  it('a merge refused for a URI an open stream already carries: that URI is narrowed down and declined, and the newcomers are covered', async () => {
    const t = setup();
    const [a, b] = await threeStreams(t, 5, 5, 1);
    const gone = Object.assign(new Error('unknown resource'), { code: -32602 });
    const before = t.streams.length;
    const added = ['d://1', 'd://2', 'd://3'];
    t.channel.update(desire([...a, ...b, 'c://000', ...added]));
    // The server now refuses any filter naming c://000 (deleted) and honours the rest.
    for (let i = 0; i < 20; i++) {
      await vi.advanceTimersByTimeAsync(MAX_WAIT_MS);
      const asked = t.streams.find((stream) => stream.state === 'requested');
      if (!asked) break;
      if (asked.filter.resourceSubscriptions?.includes('c://000')) await asked.fail(gone);
      else await asked.ack();
    }
    // The merge, then probes (each closed once acknowledged), then the merge without it.
    expect(t.streams.slice(before).map((x) => [x.state, x.filter.resourceSubscriptions])).toEqual([
      ['failed', ['c://000', ...added]],
      ['failed', ['c://000', 'd://1']],
      ['failed', ['c://000']],
      ['closed', ['d://1']],
      ['closed', ['d://2', 'd://3']],
      ['open', added],
    ]);
    expect(t.declined()).toEqual(new Map([['c://000', 'the server refused: unknown resource']]));
    expect(t.covered()).toEqual([...a, ...b, ...added].sort());
    // What it carried (4 URIs) narrowed down within n + 2 + log2 n listens, no backoff.
    expect(t.streams.length - before).toBeLessThanOrEqual(4 + 2 + 2);
    expect(t.peak.open).toBeLessThanOrEqual(MAX_STREAMS);
    expect(t.peak.live).toBeLessThanOrEqual(MAX_STREAMS + 1);
    expect(t.status()).toMatchObject({ state: 'open', attempt: 0 });
    const asked = t.streams.length;
    await vi.advanceTimersByTimeAsync(BACKOFF.maxDelayMs * 2);
    expect(t.streams.length).toBe(asked);
  });

  it('a merge refused again once probes cleared all it carried is not about its URIs: asked again with backoff, nothing declined, no probe storm', async () => {
    const t = setup();
    const [a, b, c] = await threeStreams(t, 2, 2, 2);
    const tooBig = Object.assign(new Error('filter too large'), { code: -32602 });
    const before = t.streams.length;
    t.channel.update(desire([...a, ...b, ...c, 'd://1']));
    const answer = async () => {
      for (let asked = t.last(); asked.state === 'requested'; asked = t.last()) {
        const n = asked.filter.resourceSubscriptions?.length ?? 0;
        await (n >= 3 ? asked.fail(tooBig) : asked.ack());
      }
    };
    await answer();
    // The merge, its two halves as probes (acknowledged), the merge again: then a backoff.
    expect(t.streams.length - before).toBe(4);
    expect(t.status()).toMatchObject({ state: 'open', attempt: 1 });
    expect(t.declined()).toEqual(new Map());
    expect(t.covered()).toEqual([...a, ...b, ...c]);
    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
    await answer();
    expect(t.streams.length - before).toBe(8);
    expect(t.status()).toMatchObject({ attempt: 2 });
  });

  it('a failed merge keeps the streams it would replace and their coverage, and tries again after the backoff', async () => {
    const t = setup();
    for (const [i, prefix] of ['a://', 'b://', 'c://'].entries()) {
      t.channel.update(desire(['a://', 'b://', 'c://'].slice(0, i + 1).flatMap((p) => uris(p, 3))));
      await t.stream(i + 1).ack();
      expect(t.stream(i + 1).filter.resourceSubscriptions).toEqual(uris(prefix, 3));
    }
    const all = ['a://', 'b://', 'c://'].flatMap((p) => uris(p, 3));
    t.channel.update(desire([...all, 'd://1']));
    const merge = t.stream(4).filter.resourceSubscriptions ?? [];
    await t.stream(4).fail(new Error('rejected'));
    expect(t.open()).toEqual([1, 2, 3]);
    expect(t.covered()).toEqual(all);
    expect(t.status()).toMatchObject({ state: 'open', attempt: 1 });
    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
    expect(t.stream(5).filter.resourceSubscriptions).toEqual(merge);
  });

  it('a stream that ends loses only its own URIs; they are asked again, alone, after the backoff', async () => {
    const t = setup();
    t.channel.update(desire(['a://1', 'a://2']));
    await t.stream(1).ack();
    t.channel.update(desire(['a://1', 'a://2', 'b://1']));
    await t.stream(2).ack();
    await vi.advanceTimersByTimeAsync(100);

    const endedAt = Date.now();
    await t.stream(2).end('remote');
    expect(t.covered()).toEqual(['a://1', 'a://2']);
    expect(t.listsCovered()).toEqual(['resources']);
    expect(t.status()).toMatchObject({
      state: 'open',
      reopenCount: 1,
      lastCloseReason: 'remote',
      attempt: 1,
      nextRetryAt: endedAt + BACKOFF.initialDelayMs,
    });
    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs - 1);
    expect(t.client.listen).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.stream(3).filter).toEqual({ resourceSubscriptions: ['b://1'] });
    await t.stream(3).ack();
    expect(t.covered()).toEqual(['a://1', 'a://2', 'b://1']);
    expect(t.open()).toEqual([1, 3]);
  });

  it('the end of its session closes the current stream, stops retries, closes a stream acknowledged afterwards, and reports nothing more', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    await t.stream(1).ack();
    await t.stream(1).end('remote'); // a retry is now pending
    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
    t.channel.update(desire(['a://1', 'b://2']));
    await t.stream(2).ack();
    t.channel.update(desire(['a://1', 'b://2', 'c://3'])); // stream 3 opening

    await t.end();
    expect(t.stream(2).close).toHaveBeenCalledTimes(1);
    const reports = () => [t.statuses.length, t.log.filter((l) => l.startsWith('coverage')).length];
    const reported = reports();

    await t.stream(3).ack();
    expect(t.stream(3).close).toHaveBeenCalledTimes(1);
    await t.stream(2).end('remote');
    await vi.advanceTimersByTimeAsync(10 * RELEASE_AFTER_MS);
    expect(t.client.listen).toHaveBeenCalledTimes(3);
    expect(reports()).toEqual(reported);
  });

  it('the end of its session during a backoff wait: the retry never fires', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    await t.stream(1).fail(new Error('down'));
    await t.end();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(t.client.listen).toHaveBeenCalledTimes(1);
  });

  it('without resources.subscribe, every wanted URI is declined with that reason and the lists are still listened to', async () => {
    const t = setup({ capabilities: { resources: { listChanged: true } } });
    t.channel.update(desire(['a://1'], { lingering: ['b://2'] }));
    const reason = 'the server did not declare resources.subscribe';
    expect(t.declined()).toEqual(
      new Map([
        ['a://1', reason],
        ['b://2', reason],
      ]),
    );
    expect(t.channel.mayCover('a://1')).toBe(false);
    expect(t.stream(1).filter).toEqual({ resourcesListChanged: true });
    await t.stream(1).ack();
    expect(t.listsCovered()).toEqual(['resources']);
    expect(t.covered()).toEqual([]);
    expect(t.declined().get('a://1')).toBe(reason);
    expect(t.channel.mayCoverList('resources')).toBe(true);
    expect(t.channel.mayCoverList('tools')).toBe(false);
    expect(t.status().state).toBe('open');
  });

  it.each<[string, ServerCapabilities | undefined]>([
    ['nothing declared', {}],
    ['no capabilities at all', undefined],
    ['resources without subscribe or listChanged', { resources: {}, tools: {} }],
  ])(
    'is unsupported when the server declares neither subscribe nor any listChanged (%s)',
    async (_, capabilities) => {
      const t = setup({ capabilities });
      expect(t.status().state).toBe('unsupported');
      expect(t.status().note).toContain('neither');
      t.channel.update(desire(['a://1'], { lists: ['resources', 'tools'] }));
      await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS);
      expect(t.client.listen).not.toHaveBeenCalled();
      expect(t.channel.mayCover('a://1')).toBe(false);
      expect(t.channel.mayCoverList('resources')).toBe(false);
      expect(t.status().state).toBe('unsupported');
    },
  );

  it('a newly wanted list replaces the stream that carries the lists; the other streams stay', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    await t.stream(1).ack();
    t.channel.update(desire(['a://1', 'b://2']));
    await t.stream(2).ack();
    t.channel.update(desire(['a://1', 'b://2'], { lists: ['resources', 'prompts'] }));
    expect(t.stream(3).filter).toEqual({
      resourcesListChanged: true,
      promptsListChanged: true,
      resourceSubscriptions: ['a://1'],
    });
    await t.stream(3).ack();
    expect(t.listsCovered()).toEqual(['prompts', 'resources']);
    expect(t.open()).toEqual([2, 3]);
    expect(t.covered()).toEqual(['a://1', 'b://2']);
  });

  it('a stream that carries only lists is merged into the next one for free', async () => {
    const t = setup();
    t.channel.update(desire([]));
    expect(t.stream(1).filter).toEqual({ resourcesListChanged: true });
    await t.stream(1).ack();
    t.channel.update(desire(['a://1']));
    expect(t.stream(2).filter).toEqual({
      resourcesListChanged: true,
      resourceSubscriptions: ['a://1'],
    });
    await t.stream(2).ack();
    expect(t.open()).toEqual([2]);
    expect(t.listsCovered()).toEqual(['resources']);
  });

  it('a list the server does not declare is left out of the filter', () => {
    const t = setup({ capabilities: { resources: { subscribe: true, listChanged: true } } });
    t.channel.update(desire(['a://1'], { lists: ['resources', 'tools', 'prompts'] }));
    expect(t.stream(1).filter).toEqual({
      resourcesListChanged: true,
      resourceSubscriptions: ['a://1'],
    });
  });

  it('nothing to listen to: no stream, and an open one is closed', async () => {
    const t = setup({ capabilities: { resources: { subscribe: true } } });
    t.channel.update(desire([], { lists: ['resources'] }));
    expect(t.client.listen).not.toHaveBeenCalled();
    t.channel.update(desire(['a://1']));
    await t.stream(1).ack();
    await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS); // idle settle: a://1 is still held
    expect(t.client.listen).toHaveBeenCalledTimes(1);
    t.channel.update(desire([]));
    // Released: retention keeps it until things are quiet.
    expect(t.stream(1).close).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS);
    expect(t.covered()).toEqual([]);
    await vi.advanceTimersByTimeAsync(1); // closed on the next turn (nothing urgent waits here)
    expect(t.stream(1).close).toHaveBeenCalledTimes(1);
    expect(t.status()).toMatchObject({ state: 'idle' });
  });

  describe('retention', () => {
    it('a released URI stays in its stream: neither a removal nor an addition sends it again', async () => {
      const t = setup();
      t.channel.update(desire(['a://1', 'b://2']));
      await t.stream(1).ack();
      t.channel.update(desire(['a://1'], { lingering: ['b://2'] }));
      t.channel.update(desire(['a://1']));
      await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS - 1);
      expect(t.client.listen).toHaveBeenCalledTimes(1);
      expect(t.covered()).toEqual(['a://1', 'b://2']);

      t.channel.update(desire(['a://1', 'c://3']));
      expect(t.stream(2).filter.resourceSubscriptions).toEqual(['c://3']);
      await t.stream(2).ack();
      expect(t.covered()).toEqual(['a://1', 'b://2', 'c://3']);
    });

    it('a stream whose URIs retention let go closes with no request of its own (once the next stream is acknowledged), and nothing kept is sent again', async () => {
      const t = setup();
      const [a, b, c, d] = ['a://', 'b://', 'c://', 'd://'].map((prefix) => uris(prefix, 40));
      const only = (held: string[] | undefined) => desire(held as string[], { lists: [] });
      for (const [i, wave] of [a, b, c].entries()) {
        t.channel.update(only(wave));
        await t.stream(i + 1).ack();
        expect(t.stream(i + 1).filter.resourceSubscriptions).toEqual(wave);
      }
      // a and b are released extras (80 ≤ 2 × 40). With d, 120 are released:
      // the 40 released first (a) go, and with them the stream that carried them.
      t.log.length = 0;
      t.channel.update(only(d));
      expect(t.stream(4).filter.resourceSubscriptions).toEqual(d);
      // It goes with the new stream's acknowledgement, as a replaced one does:
      // the request is not held up by a close, and 4 streams at most are live.
      expect(t.stream(1).close).not.toHaveBeenCalled();
      await t.stream(4).ack();
      await vi.advanceTimersByTimeAsync(1);
      expect(t.stream(1).close).toHaveBeenCalledTimes(1);
      expect(t.log).toEqual([
        'listen #4',
        'ack #4',
        `coverage ${[...(b as string[]), ...(c as string[]), ...(d as string[])].join(',')}`,
        'close #1',
      ]);
      expect(t.peak.live).toBeLessThanOrEqual(MAX_STREAMS + 1);
      expect(t.open()).toEqual([2, 3, 4]);
      expect(t.covered()).toEqual([...(b as string[]), ...(c as string[]), ...(d as string[])]);
      expect(t.entries()).toBe(160);
    });

    it('when things are quiet, the open streams become one with exactly what is held and listed', async () => {
      const t = setup();
      t.channel.update(desire(['a://1'], { lists: ['resources', 'tools'] }));
      await t.stream(1).ack();
      t.channel.update(desire(['a://1', 'b://2'], { lists: ['resources', 'tools'] }));
      await t.stream(2).ack();
      t.channel.update(desire(['a://1', 'b://2', 'c://3'], { lists: ['resources'] }));
      await t.stream(3).ack();
      t.channel.update(desire(['b://2', 'c://3'], { lingering: ['a://1'] }));
      expect(t.client.listen).toHaveBeenCalledTimes(3);

      await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS);
      expect(t.stream(4).filter).toEqual({
        resourcesListChanged: true,
        resourceSubscriptions: ['b://2', 'c://3'],
      });
      expect(t.open()).toEqual([1, 2, 3]);
      await t.stream(4).ack();
      expect(t.open()).toEqual([4]);
      expect(t.covered()).toEqual(['b://2', 'c://3']);
      expect(t.listsCovered()).toEqual(['resources']);
    });

    it('after releaseAfterMs with no updates, released URIs and unwanted list bits go (idle settle)', async () => {
      const t = setup();
      t.channel.update(desire(['a://1', 'b://2'], { lists: ['resources', 'tools'] }));
      await t.stream(1).ack();
      await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS / 2);
      t.channel.update(desire(['a://1'], { lists: ['resources'] }));
      // A list nobody shows stays in the open stream meanwhile: no new stream.
      expect(t.client.listen).toHaveBeenCalledTimes(1);
      // The idle timer restarts with every update.
      await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS - 1);
      expect(t.client.listen).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(t.client.listen).toHaveBeenCalledTimes(2);
      expect(t.stream(2).filter).toEqual({
        resourcesListChanged: true,
        resourceSubscriptions: ['a://1'],
      });
      await t.stream(2).ack();
      expect(t.stream(1).close).toHaveBeenCalledTimes(1);
      expect(t.covered()).toEqual(['a://1']);
      expect(t.listsCovered()).toEqual(['resources']);
    });

    it('after the quiet period a list bit nobody wants goes, even with the same URIs', async () => {
      const t = setup();
      t.channel.update(desire(['a://1'], { lists: ['resources', 'tools'] }));
      await t.stream(1).ack();
      t.channel.update(desire(['a://1'], { lists: ['resources'] }));
      expect(t.client.listen).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(RELEASE_AFTER_MS);
      expect(t.stream(2).filter).toEqual({
        resourcesListChanged: true,
        resourceSubscriptions: ['a://1'],
      });
    });

    it('idle settle with nothing released opens no new stream', async () => {
      const t = setup();
      t.channel.update(desire(['a://1']));
      await t.stream(1).ack();
      await vi.advanceTimersByTimeAsync(3 * RELEASE_AFTER_MS);
      expect(t.client.listen).toHaveBeenCalledTimes(1);
    });
  });

  // When the current stream ends while its replacement is opening, a reopen retry is
  // scheduled; the replacement's acknowledgement must cancel it, or every change made before it
  // fires (up to maxDelayMs later) is held back.
  it('an acknowledgement that arrives while a reopen retry is pending leaves no stale retry', async () => {
    const t = setup();
    t.channel.update(desire(['a://1']));
    await t.stream(1).ack();
    t.channel.update(desire(['a://1', 'b://2'])); // stream 2 opening
    await t.stream(1).end('remote'); // the old stream dies meanwhile: a reopen is scheduled
    await t.stream(2).ack(); // …but the new one comes up
    expect(t.status()).toMatchObject({ state: 'open', nextRetryAt: undefined });
    // Status says open with nothing scheduled, so a new interest opens a stream now.
    t.channel.update(desire(['a://1', 'b://2', 'c://3']));
    expect(t.client.listen).toHaveBeenCalledTimes(3);
  });
});
