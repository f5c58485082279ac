import { randomUUID } from 'node:crypto';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { ServerEvent } from '@modelcontextprotocol/server';
import {
  createClient,
  RESP_TYPES,
  type RedisClientOptions,
  type RedisFunctions,
  type RedisModules,
  type RedisScripts,
  type RespVersions,
} from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createRedisEventBus,
  type RedisEventBus,
  type RedisEventBusClient,
  type RedisEventBusError,
  type RedisEventBusOptions,
} from '../../src/server';
import { eventually } from '../support/wait';
import {
  busConnectionIds,
  killBusConnections,
  REDIS_SERVER,
  RedisServer,
  SKIP_REASON,
} from './redisServer';
import { startStallProxy } from './stallProxy';

if (!REDIS_SERVER) console.warn(`[test/scale] ${SKIP_REASON}`);

type ClientExtras = Omit<
  RedisClientOptions<RedisModules, RedisFunctions, RedisScripts, RespVersions>,
  'url' | 'socket'
>;

const updated = (uri: string): ServerEvent => ({ kind: 'resource_updated', uri });
const fast = { initialDelayMs: 20, maxDelayMs: 200 };
/** The largest part of a stream id Redis takes (2^64 - 1). */
const MAX_ID = '18446744073709551615';

describe.skipIf(!REDIS_SERVER)('createRedisEventBus against a real Redis', () => {
  let redis: RedisServer;
  let admin: Awaited<ReturnType<RedisServer['client']>>;
  const cleanups: Array<() => Promise<unknown> | unknown> = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
    admin = await redis.client();
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  afterAll(async () => {
    admin?.destroy();
    await redis?.stop();
  });

  /** `socketTimeout`: a short one makes short blocks (half of it), so idle reads come often. */
  async function connectClient(extra: ClientExtras = {}, url = redis.url, socketTimeout?: number) {
    const socket = { reconnectStrategy: 20, ...(socketTimeout !== undefined && { socketTimeout }) };
    const client = createClient({ url, socket, ...extra });
    // node-redis throws from its emitter without an 'error' listener; the outages are on purpose.
    client.on('error', () => {});
    await client.connect();
    cleanups.push(() => client.destroy());
    return client;
  }

  /** A Redis user that may run everything but `command`, removed after the test. */
  async function userWithout(command: string) {
    const username = `no-${command}-${randomUUID()}`;
    await admin.sendCommand([
      'ACL',
      'SETUSER',
      username,
      'on',
      '>pw',
      '~*',
      '&*',
      '+@all',
      `-${command}`,
    ]);
    cleanups.push(() => admin.sendCommand(['ACL', 'DELUSER', username]));
    return { username, password: 'pw' };
  }

  /** A socket timeout that makes 200 ms blocks: many idle reads in little time. */
  const SHORT_BLOCKS_MS = 400;

  /** One "process": its own client and bus, with everything it hears recorded. */
  async function instance(channel: string, options: Partial<RedisEventBusOptions> = {}) {
    const client = options.redis ?? (await connectClient());
    const errors: RedisEventBusError[] = [];
    const bus = createRedisEventBus({
      redis: client,
      channel,
      reconnect: fast,
      onerror: (error) => errors.push(error),
      ...options,
    });
    cleanups.push(() => bus.close());
    await bus.ready();
    const heard: ServerEvent[] = [];
    bus.subscribe((event) => heard.push(event));
    const uris = () => heard.map((event) => (event.kind === 'resource_updated' ? event.uri : '*'));
    const codes = () => errors.map((error) => error.code);
    return { client, bus, heard, uris, errors, codes };
  }

  const newChannel = () => `test:${randomUUID()}`;

  it('an event published on one instance reaches every instance once, in publish order', async () => {
    const channel = newChannel();
    const a = await instance(channel);
    const b = await instance(channel);
    const sent = Array.from({ length: 50 }, (_, i) => `note://${i}`);
    for (const uri of sent) a.bus.publish(updated(uri));

    // Local listeners hear it inside publish(), before any Redis round trip.
    expect(a.uris()).toEqual(sent);
    await eventually(() => expect(b.uris()).toEqual(sent));
    await eventually(() => expect(a.bus.stats().sent).toBe(50));
    // A's own entries came back from Redis too and were skipped, not delivered twice: B's
    // marker comes after them on the stream, so once A has it, A has read past them.
    b.bus.publish(updated('marker://b'));
    await eventually(() => expect(a.uris()).toEqual([...sent, 'marker://b']));
    expect(a.bus.stats()).toMatchObject({ published: 50, delivered: 51, received: 1 });
    expect(b.bus.stats()).toMatchObject({
      published: 1,
      received: 50,
      delivered: 51,
      malformed: 0,
    });
  });

  it('crossing to another instance costs about one Redis round trip; local delivery costs none', async () => {
    const channel = newChannel();
    const a = await instance(channel);
    const b = await instance(channel);
    const hops: number[] = [];
    for (let i = 0; i < 50; i++) {
      const arrived = new Promise<number>((resolve) => {
        const off = b.bus.subscribe(() => {
          off();
          resolve(performance.now());
        });
      });
      const start = performance.now();
      a.bus.publish(updated(`hop://${i}`));
      expect(a.uris().at(-1)).toBe(`hop://${i}`);
      hops.push((await arrived) - start);
    }
    hops.sort((x, y) => x - y);
    const p50 = hops[25] as number;
    console.log(
      `[redis bus] publish on A -> listener on B: p50 ${p50.toFixed(2)}ms, p95 ${(hops[47] as number).toFixed(2)}ms (local listeners: synchronous)`,
    );
    expect(p50).toBeLessThan(50);
  });

  it('every event kind and its forwarded params survive the trip', async () => {
    const channel = newChannel();
    const a = await instance(channel);
    const b = await instance(channel);
    const events: ServerEvent[] = [
      { kind: 'resources_list_changed' },
      { kind: 'tools_list_changed' },
      { kind: 'prompts_list_changed', params: { _meta: { trace: 'abc' } } },
      { kind: 'resource_updated', uri: 'config://app', params: { _meta: { 'x/y': 1 } } },
    ];
    for (const event of events) a.bus.publish(event);
    await eventually(() => expect(b.heard).toEqual(events));
  });

  it.each([
    ['RESP2', { RESP: 2 }],
    // node-redis 5's default is RESP2, 6's RESP3: each major gets both.
    ['RESP3', { RESP: 3 }],
    ['Buffer-mapping', { commandOptions: { typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } } }],
  ] as const)('works the same over a %s client, gap accounting included', async (_, extra) => {
    const channel = newChannel();
    const a = await instance(channel, { redis: await connectClient(extra) });
    const b = await instance(channel, { redis: await connectClient(extra) });
    a.bus.publish(updated('x://1'));
    await eventually(() => expect(b.uris()).toEqual(['x://1']));

    const ids = await busConnectionIds(admin);
    await Promise.all([
      ...ids.map((id) => admin.sendCommand(['CLIENT', 'KILL', 'ID', id])),
      admin.sendCommand(['XADD', channel, '*', 'm', 'lost']),
      admin.sendCommand(['XTRIM', channel, 'MAXLEN', '0']),
    ]);
    a.bus.publish(updated('x://2'));
    // '*': the three list_changed a gap hands every local listener.
    await eventually(() => expect(b.uris()).toEqual(['x://1', '*', '*', '*', 'x://2']));
    expect(b.bus.stats()).toMatchObject({ gaps: 1, lost: 1, malformed: 0, reconnects: 1 });
  });

  it('a listener that publishes from inside itself does not hear that event; others do', async () => {
    const channel = newChannel();
    const a = await instance(channel);
    const b = await instance(channel);
    const publisherHeard: string[] = [];
    a.bus.subscribe((event) => {
      if (event.kind !== 'resource_updated') return;
      publisherHeard.push(event.uri);
      if (event.uri === 'cause://1') a.bus.publish(updated('effect://1'));
    });
    a.bus.publish(updated('cause://1'));
    expect(publisherHeard).toEqual(['cause://1']);
    expect(a.uris()).toEqual(['cause://1', 'effect://1']);
    await eventually(() => expect(b.uris()).toEqual(['cause://1', 'effect://1']));
  });

  it('a throwing listener is counted and reported; the other listeners still get the event', async () => {
    const a = await instance(newChannel());
    a.bus.subscribe(() => {
      throw new Error('listener bug');
    });
    a.bus.publish(updated('x://1'));
    a.bus.publish(updated('x://2'));
    expect(a.uris()).toEqual(['x://1', 'x://2']);
    expect(a.bus.stats().listenerErrors).toBe(2);
    expect(a.codes()).toEqual(['listener', 'listener']);
  });

  it('malformed entries on the stream are counted and dropped; valid ones keep flowing', async () => {
    const channel = newChannel();
    const b = await instance(channel, { maxEventSize: 1024 });
    const a = await instance(channel);
    const envelope = (event: unknown) => JSON.stringify({ v: 1, origin: 'someone', event });
    const hostile: string[][] = [
      ['m', 'not json {'],
      ['m', '[1,2,3]'],
      ['m', JSON.stringify({ v: 2, origin: 'someone', event: updated('x://v2') })],
      ['m', envelope({ kind: 'everything_changed' })],
      ['m', envelope({ kind: 'resource_updated', uri: 42 })],
      ['m', envelope({ kind: 'resource_updated', uri: '' })],
      ['m', envelope({ kind: 'resource_updated', uri: 'x://p', params: 'nope' })],
      ['m', envelope({ kind: 'resource_updated', uri: 'x://m', params: { _meta: 'abc' } })],
      ['m', envelope(updated(`x://${'y'.repeat(2000)}`))],
      ['message', envelope(updated('x://wrong-field'))],
    ];
    for (const fields of hostile) {
      await admin.sendCommand(['XADD', channel, '*', ...fields]);
    }
    a.bus.publish(updated('x://valid'));
    await eventually(() => expect(b.uris()).toEqual(['x://valid']));
    expect(b.bus.stats()).toMatchObject({ malformed: hostile.length, received: 1, delivered: 1 });
    // Reported at the 1st, 2nd, 4th and 8th occurrence: visible without a log line per entry.
    expect(b.codes()).toEqual(['malformed', 'malformed', 'malformed', 'malformed']);
    expect(b.errors[3]?.message).toMatch(/8 so far/);
  });

  it('an entry too large to be an event is dropped by its size in bytes, never decoded', async () => {
    const channel = newChannel();
    const b = await instance(channel, { maxEventSize: 1024 });
    const a = await instance(channel);
    const big = 'x'.repeat(1 << 20);
    // A payload far beyond maxEventSize, and a field name as large before a valid payload: neither
    // is turned into a string (one past V8's longest string would wedge the reader for good).
    await admin.sendCommand(['XADD', channel, '*', 'm', big]);
    const valid = JSON.stringify({ v: 1, origin: 'someone', event: updated('x://named') });
    await admin.sendCommand(['XADD', channel, '*', big, 'junk', 'm', valid]);
    a.bus.publish(updated('x://valid'));
    await eventually(() => expect(b.uris()).toEqual(['x://named', 'x://valid']));
    expect(b.bus.stats()).toMatchObject({ malformed: 1, received: 2 });
    expect(b.codes()).toEqual(['malformed']);
    expect(b.errors[0]?.message).toMatch(
      /: 1048576 bytes, more than 1024 characters can take \(not decoded\)$/,
    );
  });

  it('an event of exactly maxEventSize characters, nearly all of them multibyte in UTF-8, arrives', async () => {
    const channel = newChannel();
    const b = await instance(channel, { maxEventSize: 1024 });
    const a = await instance(channel, { maxEventSize: 1024 });
    const size = (uri: string) =>
      JSON.stringify({ v: 1, origin: a.bus.id, event: updated(uri) }).length;
    // 3 bytes of UTF-8 per character, and 4 per surrogate pair (2 characters).
    let uri = `x://${'😀'.repeat(100)}`;
    uri += '語'.repeat(1024 - size(uri));
    expect(size(uri)).toBe(1024);
    a.bus.publish(updated(uri));
    a.bus.publish(updated(`${uri}!`));
    expect(a.bus.stats()).toMatchObject({ published: 1, rejected: 1 });
    await eventually(() => expect(b.uris()).toEqual([uri]));
    expect(b.bus.stats()).toMatchObject({ malformed: 0, received: 1 });
  });

  it('an invalid event given to publish() is refused and reported, never written', async () => {
    const channel = newChannel();
    const a = await instance(channel, { maxEventSize: 256 });
    const b = await instance(channel);
    a.bus.publish({ kind: 'resource_updated', uri: 42 } as unknown as ServerEvent);
    a.bus.publish({ kind: 'nonsense' } as unknown as ServerEvent);
    a.bus.publish(updated(`x://${'z'.repeat(300)}`));
    a.bus.publish(updated('x://fine'));
    expect(a.uris()).toEqual(['x://fine']);
    expect(a.bus.stats()).toMatchObject({ rejected: 3, published: 1 });
    expect(a.codes()).toEqual(['rejected', 'rejected']);
    await eventually(() => expect(b.uris()).toEqual(['x://fine']));
    expect(b.bus.stats().malformed).toBe(0);
  });

  it('a killed reading connection reconnects and delivers what was published meanwhile', async () => {
    const channel = newChannel();
    const b = await instance(channel);
    const a = await instance(channel);
    a.bus.publish(updated('before://1'));
    await eventually(() => expect(b.uris()).toEqual(['before://1']));

    expect(await killBusConnections(admin)).toBe(2);
    const during = Array.from({ length: 10 }, (_, i) => `during://${i}`);
    for (const uri of during) a.bus.publish(updated(uri));

    await eventually(() => expect(b.uris()).toEqual(['before://1', ...during]));
    await eventually(() => expect(b.bus.stats()).toMatchObject({ reconnects: 1, connected: true }));
    expect(b.codes()).toEqual(['disconnected']);
    expect(b.bus.stats().gaps).toBe(0);
    // Own entries read again after A's reconnect are still skipped (B's marker comes after them).
    b.bus.publish(updated('marker://b'));
    await eventually(() => expect(a.uris()).toEqual(['before://1', ...during, 'marker://b']));
  });

  it('a client whose commands time out sooner than a block (commandOptions.timeout) reads idle without errors and still hears others', async () => {
    const channel = newChannel();
    const b = await instance(channel, {
      // Blocks of 200 ms (half the socket timeout), each longer than the command timeout.
      redis: await connectClient({ commandOptions: { timeout: 100 } }, redis.url, SHORT_BLOCKS_MS),
    });
    const xreads = async () => {
      const lines = String(await admin.sendCommand(['INFO', 'commandstats'])).split('\n');
      const line = lines.find((text) => text.startsWith('cmdstat_xread:')) ?? '';
      return Number(/calls=(\d+)/.exec(line)?.[1] ?? 0);
    };
    const start = await xreads();
    // Idle reads, each ended by its block, not by the client's timeout (node-redis times a
    // command out only while it waits to be written).
    await eventually(async () => expect(await xreads()).toBeGreaterThanOrEqual(start + 4));
    expect(b.codes()).toEqual([]);
    expect(b.bus.stats()).toMatchObject({ reconnects: 0, connected: true });
    const a = await instance(channel);
    a.bus.publish(updated('after://idle'));
    await eventually(() => expect(b.uris()).toEqual(['after://idle']));
    expect(b.codes()).toEqual([]);
  });

  it('a reading connection that stops answering (a frozen network path) is dropped and reconnected', async () => {
    const proxy = await startStallProxy(redis.port);
    cleanups.push(() => proxy.close());
    const channel = newChannel();
    // No socketTimeout, as in the README: node-redis would wait for an answer for good.
    const b = await instance(channel, { redis: await connectClient({}, proxy.url) });
    const a = await instance(channel);
    a.bus.publish(updated('before://1'));
    await eventually(() => expect(b.uris()).toEqual(['before://1']));

    proxy.freeze();
    a.bus.publish(updated('during://1'));
    // The blocked XREAD never answers; the bus must notice within a few block periods.
    await eventually(() => expect(b.uris()).toEqual(['before://1', 'during://1']), {
      timeout: 15_000,
    });
    expect(b.codes()).toEqual(['disconnected']);
    await eventually(() => expect(b.bus.stats()).toMatchObject({ reconnects: 1, connected: true }));
  }, 20_000);

  it('entries trimmed before a reconnected instance could read them are reported as a gap', async () => {
    const channel = newChannel();
    const b = await instance(channel);
    const a = await instance(channel);
    const ids = await busConnectionIds(admin);
    // Issued in one tick: node-redis pipelines them, so all run before B can reconnect.
    await Promise.all([
      ...ids.map((id) => admin.sendCommand(['CLIENT', 'KILL', 'ID', id])),
      admin.sendCommand(['XADD', channel, '*', 'm', 'lost']),
      admin.sendCommand(['XTRIM', channel, 'MAXLEN', '0']),
    ]);
    a.bus.publish(updated('after://1'));
    await eventually(() => expect(b.uris()).toEqual(['*', '*', '*', 'after://1']));
    expect(b.bus.stats()).toMatchObject({ gaps: 1, lost: 1, received: 1, streamsEnded: 0 });
    expect(b.codes()).toEqual(['disconnected', 'gap']);
    // Lost events are unknown: every local listen stream is told its lists may have changed
    // (and those of attached handlers end, test/scale/gap.test.ts).
    expect(b.heard.slice(0, 3)).toEqual([
      { kind: 'resources_list_changed' },
      { kind: 'tools_list_changed' },
      { kind: 'prompts_list_changed' },
    ]);
  });

  it('entries trimmed while a connected instance had not read them yet are reported as a gap', async () => {
    const channel = newChannel();
    const b = await instance(channel, { retain: 100 });
    // Other instances (retain 100 too) publish 1,000 events between two of B's reads: one script,
    // so all of them are written, and the stream trimmed, before B's blocked read is answered.
    const burst = `for i = 1, tonumber(ARGV[1]) do
      redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'm',
        '{"v":1,"origin":"elsewhere","event":{"kind":"resource_updated","uri":"burst://' .. i .. '"}}')
    end`;
    await admin.sendCommand(['EVAL', burst, '1', channel, '1000', '100']);
    // The last resource event: the gap's list_changed may come after it (the last batch showed it).
    await eventually(() => expect(b.uris().findLast((uri) => uri !== '*')).toBe('burst://1000'));
    // The check follows the delivery of the batch that showed it.
    await eventually(() => expect(b.bus.stats().gaps).toBe(1));
    const { received, lost, gaps } = b.bus.stats();
    expect(received).toBeLessThan(1000);
    expect({ total: received + lost, gaps }).toEqual({ total: 1000, gaps: 1 });
    expect(b.codes()).toEqual(['gap']);
  });

  it('a stream recreated below the last id read (a far-future junk id, then a Redis restart) is read from its start', async () => {
    const channel = newChannel();
    const b = await instance(channel);
    const a = await instance(channel);
    await admin.sendCommand(['XADD', channel, '99999999999999-0', 'm', 'junk']);
    await eventually(() => expect(b.bus.stats().malformed).toBe(1));

    await redis.stop();
    await redis.start();
    await eventually(() => expect(b.bus.stats()).toMatchObject({ reconnects: 1, connected: true }));
    a.bus.publish(updated('after://1'));
    await eventually(() => expect(b.uris()).toEqual(['after://1']));
    expect(b.bus.stats()).toMatchObject({ received: 1, gaps: 0 });
  });

  it('an entry with the largest possible id: every write refused is reported as such, and deleting the key heals writers and readers', async () => {
    const channel = newChannel();
    const a = await instance(channel);
    const b = await instance(channel);
    await admin.sendCommand(['XADD', channel, `${MAX_ID}-${MAX_ID}`, 'm', 'junk']);
    // Both have read it (dropped as malformed): they now read on from the largest possible id.
    await eventually(() => expect([a, b].map((x) => x.bus.stats().malformed)).toEqual([1, 1]));

    a.bus.publish(updated('x://1'));
    expect(a.uris()).toEqual(['x://1']);
    // Retried with backoff, not given up: each retry fails the same way, reported thinned out.
    // Not written, whether it waits for the next retry or is in flight as one.
    await eventually(() => expect(a.bus.stats().failedPublishes).toBeGreaterThanOrEqual(3));
    expect(a.bus.stats()).toMatchObject({ sent: 0, queued: 1 });
    const refused = a.errors.filter((error) => error.code !== 'malformed');
    expect(refused.slice(0, 2).map((error) => error.code)).toEqual([
      'publish-failed',
      'unavailable',
    ]);
    for (const error of refused) {
      expect(error.message).toMatch(/largest possible id/);
      expect(error.message).toContain(channel);
    }

    // What the message says to do: the next retry writes it, and B, whose position is past
    // every id the new stream can get, finds the stream recreated below it and reads it.
    await admin.sendCommand(['DEL', channel]);
    await eventually(() => expect(a.bus.stats()).toMatchObject({ sent: 1, queued: 0 }));
    await eventually(() => expect(b.uris()).toEqual(['x://1']), { timeout: 10_000 });
    expect(b.bus.stats()).toMatchObject({ received: 1, gaps: 0, reconnects: 0 });
    expect(b.codes()).toEqual(['malformed']);
  });

  it('while Redis refuses writes, each retry tries one waiting event, not all of them; once one is written the rest follow, in publish order', async () => {
    const channel = newChannel();
    // Every retry waits the whole backoff (no jitter): one retry between two looks.
    vi.spyOn(Math, 'random').mockReturnValue(1);
    cleanups.push(() => vi.restoreAllMocks());
    const a = await instance(channel, { reconnect: { initialDelayMs: 150, maxDelayMs: 150 } });
    const b = await instance(channel);
    await admin.sendCommand(['XADD', channel, `${MAX_ID}-${MAX_ID}`, 'm', 'junk']);
    await eventually(() => expect([a, b].map((x) => x.bus.stats().malformed)).toEqual([1, 1]));

    const sent = Array.from({ length: 5 }, (_, i) => `x://${i}`);
    for (const uri of sent) a.bus.publish(updated(uri));
    // Nothing had failed yet: all five went out at once, and came back refused.
    await eventually(() => expect(a.bus.stats().failedPublishes).toBe(5));
    // The first retry: one more refusal, not five.
    const first = await eventually(() => {
      const failed = a.bus.stats().failedPublishes;
      return failed > 5 && failed;
    });
    expect(first).toBe(6);
    expect(a.bus.stats()).toMatchObject({ sent: 0, queued: 5 });

    await admin.sendCommand(['DEL', channel]);
    await eventually(() => expect(b.uris()).toEqual(sent), { timeout: 10_000 });
    // B may read the last entry before A has Redis' answer to writing it.
    await eventually(() => expect(a.bus.stats()).toMatchObject({ sent: 5, queued: 0 }));
  });

  it("a stream recreated below a junk id only seconds ahead of the clock is read from its start: Redis' clock decides, not a margin", async () => {
    const channel = newChannel();
    const a = await instance(channel);
    const b = await instance(channel);
    // Ahead of Redis' clock by less than a margin for clock skew (the same junk id from a Redis
    // whose clock runs a minute behind this host's): every id of a stream recreated now is below it.
    await admin.sendCommand(['XADD', channel, `${Date.now() + 30_000}-0`, 'm', 'junk']);
    await eventually(() => expect([a, b].map((x) => x.bus.stats().malformed)).toEqual([1, 1]));

    await admin.sendCommand(['DEL', channel]);
    a.bus.publish(updated('x://1'));
    await eventually(() => expect(a.bus.stats().sent).toBe(1));
    // Well before Redis' clock reaches the junk id (and x://1 stays below it for good).
    await eventually(() => expect(b.uris()).toEqual(['x://1']), { timeout: 10_000 });
    expect(b.bus.stats()).toMatchObject({ received: 1, gaps: 0, reconnects: 0 });
    expect(b.codes()).toEqual(['malformed']);
  });

  it('a bus whose Redis user may not run TIME reads on without errors and still heals after the largest possible id', async () => {
    const channel = newChannel();
    const user = await userWithout('time');
    const limited = () => connectClient(user);
    const a = await instance(channel, { redis: await limited() });
    const b = await instance(channel, { redis: await limited() });
    await admin.sendCommand(['XADD', channel, `${MAX_ID}-${MAX_ID}`, 'm', 'junk']);
    await eventually(() => expect([a, b].map((x) => x.bus.stats().malformed)).toEqual([1, 1]));
    // Idle reads past the clock: each would ask Redis the time.
    await admin.sendCommand(['DEL', channel]);
    a.bus.publish(updated('x://1'));
    await eventually(() => expect(b.uris()).toEqual(['x://1']), { timeout: 10_000 });
    expect(b.bus.stats()).toMatchObject({ received: 1, gaps: 0, reconnects: 0 });
    expect(b.codes()).toEqual(['malformed']);
  });

  it('a bus whose Redis user may not run XLEN still finds the stream recreated below a junk id, without errors', async () => {
    const channel = newChannel();
    // Short blocks: the ten idle reads between two looks pass quickly.
    const limited = await connectClient(await userWithout('xlen'), redis.url, SHORT_BLOCKS_MS);
    const b = await instance(channel, { redis: limited });
    const a = await instance(channel);
    await admin.sendCommand(['XADD', channel, `${Date.now() + 86_400_000}-0`, 'm', 'junk']);
    await eventually(() => expect([a, b].map((x) => x.bus.stats().malformed)).toEqual([1, 1]));
    await admin.sendCommand(['DEL', channel]);
    a.bus.publish(updated('x://1'));
    await eventually(() => expect(b.uris()).toEqual(['x://1']), { timeout: 15_000 });
    expect(b.bus.stats()).toMatchObject({ received: 1, gaps: 0 });
    expect(b.codes()).toEqual(['malformed']);
  }, 20_000);

  it('a quiet reader past the clock does not fetch the junk entry on every idle read, and still finds the stream recreated', async () => {
    const channel = newChannel();
    const b = await instance(channel, {
      redis: await connectClient({}, redis.url, SHORT_BLOCKS_MS),
    });
    // Far ahead, and as large as a writer likes: XINFO STREAM returns it whole (its last entry).
    const junk = `${Date.now() + 86_400_000}-0`;
    await admin.sendCommand(['XADD', channel, junk, 'm', 'x'.repeat(1 << 20)]);
    await eventually(() => expect(b.bus.stats().malformed).toBe(1));
    const calls = async () => {
      const lines = String(await admin.sendCommand(['INFO', 'commandstats'])).split('\n');
      const count = (name: string) => {
        const line = lines.find((text) => text.startsWith(`cmdstat_${name}:`)) ?? '';
        return Number(/calls=(\d+)/.exec(line)?.[1] ?? 0);
      };
      return { time: count('time'), xinfo: count('xinfo|stream') };
    };
    const start = await calls();
    const reconnects = b.bus.stats().reconnects;
    // Idle reads past the clock (each asks Redis the time): a look every tenth, not each one
    // (and one on a reconnect).
    const idle = await eventually(
      async () => {
        const now = await calls();
        return now.time - start.time >= 9 && { ...now, time: now.time - start.time };
      },
      { timeout: 20_000 },
    );
    const reconnected = b.bus.stats().reconnects - reconnects;
    expect(idle.xinfo - start.xinfo).toBeLessThanOrEqual(
      1 + Math.floor(idle.time / 10) + reconnected,
    );

    // Recreated below with as many entries as that look saw (one): found all the same.
    await admin.sendCommand(['DEL', channel]);
    const valid = JSON.stringify({ v: 1, origin: 'someone', event: updated('x://1') });
    await admin.sendCommand(['XADD', channel, '*', 'm', valid]);
    await eventually(() => expect(b.uris()).toEqual(['x://1']), { timeout: 20_000 });
    expect(b.bus.stats()).toMatchObject({ received: 1, gaps: 0 });
  });

  /**
   * A Redis restored from an older copy of the stream while B was reading (a restart from an
   * older RDB snapshot, a failover to a lagging replica): the copy, taken after r://1..3 (r://1
   * trimmed: entries added exceed its length), comes back under B, which read r://4..6 after it,
   * and B's connection drops. Pipelined: nothing runs on Redis between the two, so B finds the
   * older stream on its reconnect, before anyone writes to it.
   */
  async function restoreUnder(extra: ClientExtras = {}) {
    const channel = newChannel();
    const b = await instance(channel, { redis: await connectClient(extra) });
    const a = await instance(channel);
    const first = ['r://1', 'r://2', 'r://3'];
    for (const uri of first) a.bus.publish(updated(uri));
    await eventually(() => expect(b.uris()).toEqual(first));
    await admin.sendCommand(['XTRIM', channel, 'MAXLEN', '2']);
    const copy = (await admin.sendCommand(['DUMP', channel], {
      typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer },
    })) as unknown as Buffer;
    expect(copy).toBeInstanceOf(Buffer);
    const read = [...first, 'r://4', 'r://5', 'r://6'];
    for (const uri of read.slice(3)) a.bus.publish(updated(uri));
    await eventually(() => expect(b.uris()).toEqual(read));
    const ids = await busConnectionIds(admin);
    await Promise.all([
      admin.sendCommand(['RESTORE', channel, '0', copy, 'REPLACE']),
      ...ids.map((id) => admin.sendCommand(['CLIENT', 'KILL', 'ID', id])),
    ]);
    // B has looked at the stream it reconnected to: it either read the copy again or found the gap.
    await eventually(() => expect(b.heard.length).toBeGreaterThan(read.length));
    a.bus.publish(updated('after://1'));
    await eventually(() => expect(b.uris()).toContain('after://1'));
    // Nothing B read is delivered again (and none of it is counted as lost): the gap's three
    // list_changed, then what was published after the restore, once.
    expect(b.uris()).toEqual([...read, '*', '*', '*', 'after://1']);
    expect(b.bus.stats()).toMatchObject({ received: 7, gaps: 1, lost: 0, reconnects: 1 });
    expect(b.codes()).toEqual(['disconnected', 'gap']);
    expect(b.errors[1]?.message).toMatch(/older/);
    // Reading on from there: the next event arrives once too.
    a.bus.publish(updated('after://2'));
    await eventually(() => expect(b.uris().at(-1)).toBe('after://2'));
    expect(b.uris().filter((uri) => uri.startsWith('after://'))).toEqual([
      'after://1',
      'after://2',
    ]);
  }

  it('a Redis restored from an older copy of the stream (a snapshot, a lagging replica): nothing read is delivered again, the gap is reported, later events arrive once', async () => {
    await restoreUnder();
  });

  it('the same restore under a Redis user that may not run TIME (the reader judges by its own clock)', async () => {
    await restoreUnder(await userWithout('time'));
  });

  it('events published while Redis is down are queued, reported and written after it returns', async () => {
    const channel = newChannel();
    const a = await instance(channel);
    const b = await instance(channel);
    await redis.stop();
    await eventually(() =>
      expect([a.client.isReady, a.bus.stats().connected]).toEqual([false, false]),
    );

    const uris = ['down://0', 'down://1', 'down://2', 'down://3', 'down://4'];
    for (const uri of uris) a.bus.publish(updated(uri));
    a.bus.publish(updated('down://0'));
    a.bus.publish(updated('down://1'));
    // The instance's own listen streams are served through the outage.
    expect(a.uris()).toEqual([...uris, 'down://0', 'down://1']);
    expect(a.bus.stats()).toMatchObject({ deferred: 7, queued: 5, coalesced: 2, sent: 0 });
    expect(a.codes()).toEqual(['disconnected', 'unavailable']);

    await redis.start();
    await eventually(() => expect(b.uris()).toEqual(uris), { timeout: 5000 });
    // B may read the last entry before A has Redis' answer to writing it.
    await eventually(() => expect(a.bus.stats()).toMatchObject({ queued: 0, sent: 5, dropped: 0 }));
    await eventually(() => expect(b.bus.stats().connected).toBe(true));
    expect(b.bus.stats().reconnects).toBe(1);
    // Back to normal: a later event flows without queueing.
    a.bus.publish(updated('up://1'));
    await eventually(() => expect(b.uris()).toEqual([...uris, 'up://1']));
    expect(a.bus.stats().deferred).toBe(7);
  });

  it('writes a frozen connection never answers: reported, later events queue (bounded), close() returns', async () => {
    const proxy = await startStallProxy(redis.port);
    cleanups.push(() => proxy.close());
    const channel = newChannel();
    // The caller's client sets no socketTimeout: node-redis waits for an answer for good.
    const a = await instance(channel, {
      redis: await connectClient({}, proxy.url),
      maxQueued: 5,
    });
    const b = await instance(channel);
    a.bus.publish(updated('before://1'));
    await eventually(() => expect(b.uris()).toEqual(['before://1']));

    proxy.freeze();
    a.bus.publish(updated('stuck://0'));
    await eventually(() => expect(a.codes()).toContain('unavailable'), { timeout: 10_000 });
    for (let i = 1; i <= 20; i++) a.bus.publish(updated(`stuck://${i}`));
    // Its own listen streams are still served; the rest waits in the bounded queue.
    expect(a.uris().at(-1)).toBe('stuck://20');
    // Five wait (the bound) and stuck://0 is still in flight: six not written, as close() says.
    expect(a.bus.stats()).toMatchObject({ queued: 6, dropped: 15, sent: 1 });

    await a.bus.close();
    const unsent = a.errors.find((error) => error.code === 'unsent');
    expect(unsent?.message).toMatch(/^6 event\(s\)/);
  }, 20_000);

  it('a full queue drops its oldest event, counts it and reports it', async () => {
    const channel = newChannel();
    const a = await instance(channel, { maxQueued: 3 });
    const b = await instance(channel);
    await redis.stop();
    await eventually(() =>
      expect([a.client.isReady, a.bus.stats().connected]).toEqual([false, false]),
    );
    for (let i = 0; i < 5; i++) a.bus.publish(updated(`full://${i}`));
    expect(a.bus.stats()).toMatchObject({ queued: 3, dropped: 2, deferred: 5 });
    expect(a.codes()).toEqual(['disconnected', 'unavailable', 'overflow', 'overflow']);

    await redis.start();
    await eventually(() => expect(b.uris()).toEqual(['full://2', 'full://3', 'full://4']));
  });

  it('close() ends its own connection, keeps the caller client open and leaves no handles', async () => {
    const client = await connectClient();
    const channel = newChannel();
    // Sockets of earlier tests' clients close a moment after they were destroyed, and Redis lists
    // an earlier bus's connection until it has processed that bus's goodbye: wait until every
    // socket this process holds is a connection Redis lists, and none is a bus's.
    // Bounded at 15 s: the previous test leaves a bus that reconnects after a Redis restart,
    // and with the redis 5 client its goodbye reached Redis after the default 5 s once (the
    // matrix's newest-of-older-majors row).
    await eventually(
      async () => {
        expect(await busConnectionIds(admin)).toHaveLength(0);
        expect(countHandles().TCPSocketWrap).toBe(await redisClients(admin));
      },
      { timeout: 15_000 },
    );
    const before = countHandles();
    const errors: RedisEventBusError[] = [];
    const bus: RedisEventBus = createRedisEventBus({
      redis: client,
      channel,
      reconnect: fast,
      onerror: (error) => errors.push(error),
    });
    await bus.ready();
    bus.subscribe(() => {});
    bus.publish(updated('x://1'));
    await eventually(() => expect(bus.stats().sent).toBe(1));
    expect(await busConnectionIds(admin)).toHaveLength(1);

    await bus.close();
    await bus.close();
    await eventually(() => {
      const after = countHandles();
      expect(after.TCPSocketWrap).toBe(before.TCPSocketWrap);
      // Timers of unrelated tests may come and go; the bus must not leave any of its own.
      expect(after.Timeout ?? 0).toBeLessThanOrEqual(before.Timeout ?? 0);
    });
    expect(await busConnectionIds(admin)).toHaveLength(0);
    expect(client.isReady).toBe(true);
    expect(await client.sendCommand(['PING'])).toBe('PONG');
    expect(bus.stats()).toMatchObject({ listeners: 0, connected: false, queued: 0 });

    bus.publish(updated('x://late'));
    expect(bus.stats()).toMatchObject({ rejected: 1, published: 1 });
    expect(errors.map((error) => error.code)).toEqual(['rejected']);
  });

  it('close() before Redis ever answered does not hang and reports what was never sent', async () => {
    const client = createClient({ url: 'redis://127.0.0.1:1', socket: { reconnectStrategy: 20 } });
    client.on('error', () => {});
    const errors: RedisEventBusError[] = [];
    const bus = createRedisEventBus({
      redis: client,
      channel: newChannel(),
      reconnect: fast,
      onerror: (error) => errors.push(error),
    });
    const ready = bus.ready();
    bus.publish(updated('x://never'));
    // It has tried to connect, and failed.
    await eventually(() => expect(errors.map((error) => error.code)).toContain('disconnected'));
    await bus.close();
    await expect(ready).rejects.toThrow(/closed before it was ready/);
    expect(errors.map((error) => error.code)).toContain('unsent');
    expect(bus.stats()).toMatchObject({ queued: 0, connected: false });
  });

  it('close() while its reading connection is still connecting leaves no connection on Redis', async () => {
    const client = await connectClient();
    const bus = createRedisEventBus({ redis: client, channel: newChannel(), reconnect: fast });
    // Nothing is queued, so close() reaches the reading connection before its TCP connect
    // completes. node-redis (6.3) still finishes that connect after destroy(), names the
    // connection and reports it ready: the bus must end it then.
    await bus.close();
    await expect(bus.ready()).rejects.toThrow(/closed before it was ready/);
    await eventually(async () => expect(await busConnectionIds(admin)).toHaveLength(0));
    expect(bus.stats()).toMatchObject({ connected: false });
  });

  it('close() while its reading connection reconnects ends that connection once it has connected', async () => {
    const client = await connectClient();
    const events = watchReadingConnection(client);
    let closing: Promise<void> | undefined;
    const bus = createRedisEventBus({
      redis: client,
      channel: newChannel(),
      reconnect: fast,
      // Reported as node-redis learns of the drop, right before it connects again at once.
      onerror: (error) => {
        if (error.code === 'disconnected') closing ??= bus.close();
      },
    });
    await bus.ready();
    expect(await killBusConnections(admin)).toBe(1);
    await eventually(() => expect(closing).toBeDefined());
    await closing;
    // The connect under way is let finish, then ended: never named and ready, never left open.
    await eventually(() =>
      expect(events.slice(events.lastIndexOf('connect'))).toEqual(['connect', 'end']),
    );
    await eventually(async () => expect(await busConnectionIds(admin)).toHaveLength(0));
  });

  it('close() while the server has accepted the connection but not answered ends it at once', async () => {
    // Accepts, reads, never answers: node-redis waits for the answer to its HELLO for good.
    const accepted = new Set<Socket>();
    const silent = createServer((socket) => {
      accepted.add(socket);
      socket.on('close', () => accepted.delete(socket));
      socket.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => {
      for (const socket of accepted) socket.destroy();
      return new Promise((resolve) => silent.close(resolve));
    });
    const { port } = silent.address() as AddressInfo;
    const client = createClient({
      url: `redis://127.0.0.1:${port}`,
      socket: { reconnectStrategy: 20 },
    });
    client.on('error', () => {});
    const bus = createRedisEventBus({ redis: client, channel: newChannel(), reconnect: fast });
    // The bus's reading connection (the caller's client never connects here).
    await eventually(() => expect(accepted.size).toBe(1));
    await bus.close();
    await eventually(() => expect(accepted.size).toBe(0));
  });
});

/** Connections Redis lists (every one comes from this process: each test file has its own Redis). */
async function redisClients(admin: { sendCommand(args: string[]): Promise<unknown> }) {
  const list = String(await admin.sendCommand(['CLIENT', 'LIST']));
  return list.split('\n').filter((line) => line.startsWith('id=')).length;
}

/** Handles that would keep vitest's worker alive, by kind. */
function countHandles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) {
    if (kind === 'TCPSocketWrap' || kind === 'Timeout') {
      counts[kind] = (counts[kind] ?? 0) + 1;
    }
  }
  return counts;
}

/** What node-redis reports of the bus's own reading connection (the one it `duplicate()`s). */
function watchReadingConnection(client: RedisEventBusClient): string[] {
  const events: string[] = [];
  const duplicate = client.duplicate.bind(client);
  Object.assign(client, {
    duplicate(overrides: Parameters<RedisEventBusClient['duplicate']>[0]) {
      const connection = duplicate(overrides);
      for (const event of ['connect', 'ready', 'end'] as const) {
        (connection as unknown as NodeJS.EventEmitter).on(event, () => events.push(event));
      }
      return connection;
    },
  });
  return events;
}
