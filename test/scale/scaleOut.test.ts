/**
 * Issue 7: a stateless 2026-07-28 server scaled to 3 instances behind a plain round-robin load
 * balancer. The client's listen stream sits on one instance while changes are announced on any
 * of them; only a bus shared by all instances gets them to the client.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { diagnosticsOf } from '../support/diagnostics';
import { eventually, idle } from '../support/wait';
import {
  type Deployment,
  deploy,
  latestTexts,
  ms,
  percentile,
  type Sample,
  updateRoundRobin,
} from './deployment';
import { killBusConnections, REDIS_SERVER, redisForFile, SKIP_REASON } from './redisServer';

if (!REDIS_SERVER) console.warn(`[test/scale] ${SKIP_REASON}`);

const INSTANCES = 3;
const UPDATES = 100;
const URIS = ['item://0', 'item://1', 'item://2', 'item://3', 'item://4'];

function readsPerUri(deployment: Deployment): Record<string, string> {
  return Object.fromEntries(
    deployment.uris.map((uri) => [
      uri,
      `${deployment.store.reads(uri)} reads / ${deployment.notifications(uri)} notifications`,
    ]),
  );
}

function latencies(samples: Sample[], filter: (sample: Sample) => boolean): number[] {
  return samples
    .filter(filter)
    .map((sample) => sample.latencyMs)
    .filter((value): value is number => value !== undefined);
}

describe.skipIf(!REDIS_SERVER)('scale-out: 3 instances behind a round-robin proxy', () => {
  const file = redisForFile();
  let deployment: Deployment | undefined;
  const report: string[] = [];

  afterEach(async () => {
    await deployment?.close();
    deployment = undefined;
  });

  afterAll(() => {
    if (report.length > 0) console.log(`\n[scale-out]\n${report.join('\n')}\n`);
  });

  const start = (kind: 'redis' | 'memory') =>
    deploy({
      kind,
      instances: INSTANCES,
      uris: URIS,
      redisUrl: file.redis.url,
      channel: `scale:${randomUUID()}`,
    });

  it('with a Redis bus, 100 updates announced round-robin on 3 instances all reach the client', async () => {
    deployment = await start('redis');
    const d = deployment;
    const streamOn = d.streamInstance();
    const samples = await updateRoundRobin(d, UPDATES);

    expect(samples.filter((sample) => sample.latencyMs === undefined)).toEqual([]);
    await eventually(() => expect(d.texts()).toEqual(latestTexts(URIS, UPDATES)));
    expect(d.notifications()).toBe(UPDATES);
    await idle(d.sync.queryClient);
    // Rule 3: a notification costs at most one read (fewer when it lands on one in flight).
    for (const uri of URIS) expect(d.store.reads(uri)).toBeLessThanOrEqual(d.notifications(uri));
    expect(diagnosticsOf(d.sync).counters.updated).toBe(UPDATES);
    const stats = d.buses.map((bus) => bus.stats());
    expect(stats.reduce((sum, s) => sum + s.published, 0)).toBe(UPDATES);
    expect(stats.map((s) => s.malformed + s.dropped + s.failedPublishes + s.lost)).toEqual([
      0, 0, 0,
    ]);

    const local = latencies(samples, (sample) => sample.instance === streamOn);
    const remote = latencies(samples, (sample) => sample.instance !== streamOn);
    report.push(
      `redis bus:     delivered ${d.notifications()}/${UPDATES} (listen stream on instance ${streamOn}; proxy hits ${d.proxy.hits.join('/')})`,
      `  published on the stream's instance (in-process): n=${local.length} p50 ${ms(percentile(local, 50))} p95 ${ms(percentile(local, 95))}`,
      `  published on another instance (through Redis):  n=${remote.length} p50 ${ms(percentile(remote, 50))} p95 ${ms(percentile(remote, 95))}`,
      `  reads: ${JSON.stringify(readsPerUri(d))}`,
    );
    expect(local.length).toBeGreaterThan(30);
    expect(remote.length).toBeGreaterThan(60);
  });

  it('with in-memory buses, updates announced on the other instances never reach the client', async () => {
    deployment = await start('memory');
    const d = deployment;
    const streamOn = d.streamInstance();
    const samples = await updateRoundRobin(d, UPDATES, { mayMiss: true });
    await idle(d.sync.queryClient);

    const onStreamInstance = samples.filter((sample) => sample.instance === streamOn).length;
    const delivered = samples.filter((sample) => sample.latencyMs !== undefined);
    // Exactly the updates announced where the stream happens to be; two thirds are lost.
    expect(delivered.every((sample) => sample.instance === streamOn)).toBe(true);
    expect(d.notifications()).toBe(onStreamInstance);
    expect(diagnosticsOf(d.sync).counters.updated).toBeLessThan(UPDATES / 2);
    // The UI shows stale content for every resource whose last change was announced elsewhere.
    const latest = latestTexts(URIS, UPDATES);
    const stale = URIS.filter((_, i) => d.texts()[i] !== latest[i]);
    const lastAnnouncedElsewhere = URIS.filter((_, i) => {
      const last = UPDATES - 1 - ((UPDATES - 1 - i) % URIS.length);
      return last % INSTANCES !== streamOn;
    });
    expect(stale).toEqual(lastAnnouncedElsewhere);
    expect(stale.length).toBeGreaterThanOrEqual(3);
    // Not a loss the client could see: the stream is healthy, just silent.
    expect(diagnosticsOf(d.sync).stream.state).toBe('open');

    const local = latencies(samples, () => true);
    report.push(
      `memory buses:  delivered ${d.notifications()}/${UPDATES} (listen stream on instance ${streamOn}); stale ${stale.length}/${URIS.length} resources: ${stale.join(' ')}`,
      `  in-process delivery: n=${local.length} p50 ${ms(percentile(local, 50))} p95 ${ms(percentile(local, 95))}`,
      `  reads: ${JSON.stringify(readsPerUri(d))}`,
    );
  });

  it('a burst of 100 updates across the instances ends at the latest content with bounded reads', async () => {
    deployment = await start('redis');
    const d = deployment;
    for (let k = 0; k < UPDATES; k++) {
      const uri = URIS[k % URIS.length] as string;
      d.store.setText(uri, `v${k + 1}`);
      d.instances[k % INSTANCES]?.handler.notify.resourceUpdated(uri);
    }
    await eventually(() => expect(d.notifications()).toBe(UPDATES));
    await eventually(() => expect(d.texts()).toEqual(latestTexts(URIS, UPDATES)));
    await idle(d.sync.queryClient);
    const reads = URIS.map((uri) => d.store.reads(uri));
    for (const [i, uri] of URIS.entries()) {
      expect(reads[i]).toBeLessThanOrEqual(d.notifications(uri));
    }
    // 20 notifications per resource, arriving in a few clusters (local first, then Redis
    // batches): single flight with one trailing read keeps it to a handful of reads each.
    expect(Math.max(...reads)).toBeLessThanOrEqual(6);
    report.push(`burst:         reads ${JSON.stringify(readsPerUri(d))}`);
  });

  it('killing the bus reading connections mid-run loses nothing: the events published meanwhile arrive after the reconnect', async () => {
    deployment = await start('redis');
    const d = deployment;
    const before = await updateRoundRobin(d, 10);
    expect(before.every((sample) => sample.latencyMs !== undefined)).toBe(true);

    expect(await killBusConnections(file.admin)).toBe(INSTANCES);
    // Announced while the readers are down (they reconnect after 10–20 ms of backoff).
    for (let k = 10; k < 20; k++) {
      const uri = URIS[k % URIS.length] as string;
      d.store.setText(uri, `v${k + 1}`);
      d.instances[k % INSTANCES]?.handler.notify.resourceUpdated(uri);
    }
    await eventually(() => expect(d.notifications()).toBe(20));
    await eventually(() =>
      expect(d.buses.map((bus) => bus.stats().connected)).toEqual([true, true, true]),
    );
    const after = await updateRoundRobin(d, 10, { first: 20 });
    expect(after.every((sample) => sample.latencyMs !== undefined)).toBe(true);
    await eventually(() => expect(d.texts()).toEqual(latestTexts(URIS, 30)));

    const stats = d.buses.map((bus) => bus.stats());
    expect(stats.map((s) => s.reconnects)).toEqual([1, 1, 1]);
    expect(stats.map((s) => s.lost)).toEqual([0, 0, 0]);
    expect(d.notifications()).toBe(30);
    report.push(
      `reader kill:   delivered ${d.notifications()}/30 (10 announced while every reading connection was down); reconnects ${stats.map((s) => s.reconnects).join('/')}`,
    );
  });

  it('a Redis restart mid-run: events announced while it is down are queued and delivered after it returns', async () => {
    deployment = await start('redis');
    const d = deployment;
    const sent = () => d.buses.reduce((sum, bus) => sum + bus.stats().sent, 0);
    await updateRoundRobin(d, 10);
    // Every write answered first. An update announced on the stream's own instance reaches the
    // client in-process, without waiting for Redis to answer its XADD: killed with that answer
    // pending, the write fails and is queued again (counted as failed), and the counts below are
    // off by one.
    await eventually(() => expect(sent()).toBe(10));
    await file.redis.stop();
    // Both sides of every instance have noticed, so every event below waits in a queue rather
    // than racing a write into a dead socket (that case is retried too, counted as failed).
    await eventually(() => {
      expect(d.buses.map((bus) => bus.stats().connected)).toEqual([false, false, false]);
      expect(d.publishersReady()).toEqual([false, false, false]);
    });
    for (let k = 10; k < 20; k++) {
      const uri = URIS[k % URIS.length] as string;
      d.store.setText(uri, `v${k + 1}`);
      d.instances[k % INSTANCES]?.handler.notify.resourceUpdated(uri);
    }
    // The stream's own instance still delivers its share during the outage.
    const streamOn = d.streamInstance();
    const localShare = Array.from({ length: 10 }, (_, i) => i + 10).filter(
      (k) => k % INSTANCES === streamOn,
    ).length;
    await eventually(() => expect(d.notifications()).toBe(10 + localShare));
    const queued = d.buses.map((bus) => bus.stats().queued);
    expect(queued.reduce((a, b) => a + b)).toBe(10);

    await file.redis.start();
    await eventually(() => expect(d.notifications()).toBe(20), { timeout: 5000 });
    await eventually(() => expect(d.texts()).toEqual(latestTexts(URIS, 20)));
    // Every instance writes again. The client has all 20 once the other instances' queues reached
    // the stream's instance, which delivered its own share long ago: its own client may still be
    // reconnecting, and an update announced there meanwhile would wait in its queue as well.
    await eventually(() => {
      expect(d.publishersReady()).toEqual([true, true, true]);
      expect(d.buses.map((bus) => bus.stats().queued)).toEqual([0, 0, 0]);
    });
    const after = await updateRoundRobin(d, 10, { first: 20 });
    expect(after.every((sample) => sample.latencyMs !== undefined)).toBe(true);
    await eventually(() => expect(d.texts()).toEqual(latestTexts(URIS, 30)));

    // As before the outage: the last updates' writes may still await their answer.
    await eventually(() => expect(sent()).toBe(30));
    const stats = d.buses.map((bus) => bus.stats());
    expect(stats.reduce((sum, s) => sum + s.deferred, 0)).toBe(10);
    expect(stats.map((s) => [s.queued, s.dropped])).toEqual([
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
    expect(stats.map((s) => s.failedPublishes)).toEqual([0, 0, 0]);
    report.push(
      `redis restart: delivered ${d.notifications()}/30 (${10 - localShare} of 10 announced during the outage arrived after it; ${localShare} in-process at once); deferred ${stats.map((s) => s.deferred).join('/')}`,
    );
  });

  it('an entry whose params nest too deep to serialise is dropped as malformed, not thrown at every listen stream', async () => {
    const channel = `scale:${randomUUID()}`;
    deployment = await deploy({
      kind: 'redis',
      instances: INSTANCES,
      uris: URIS,
      redisUrl: file.redis.url,
      channel,
    });
    const d = deployment;
    // Under 64 kB, valid JSON, and a URI the client's listen stream names: the SDK's listen
    // stream cannot serialise the notification it would write (JSON.stringify overflows).
    const depth = 20_000;
    const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const event = `{"kind":"resource_updated","uri":"${URIS[0]}","params":{"_meta":{"d":${deep}}}}`;
    await file.admin.sendCommand([
      'XADD',
      channel,
      '*',
      'm',
      `{"v":1,"origin":"elsewhere","event":${event}}`,
    ]);
    await eventually(() => expect(d.buses.map((bus) => bus.stats().malformed)).toEqual([1, 1, 1]));
    expect(d.buses.map((bus) => bus.stats().listenerErrors)).toEqual([0, 0, 0]);
    const samples = await updateRoundRobin(d, 3);
    expect(samples.every((sample) => sample.latencyMs !== undefined)).toBe(true);
  });
});
