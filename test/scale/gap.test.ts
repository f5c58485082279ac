/**
 * A gap: events published on another instance were trimmed from the stream before this
 * instance's bus read them (a Redis outage longer than `retain`, or falling that far behind).
 * Nothing on the stream can bring them back, so the listen streams open on this instance must
 * not stay open as if nothing had been missed: their clients have to learn that they should
 * re-read what they show.
 */
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { diagnosticsOf } from '../support/diagnostics';
import { eventually } from '../support/wait';
import { type Deployment, deploy } from './deployment';
import { busConnectionIds, REDIS_SERVER, redisForFile, SKIP_REASON } from './redisServer';

if (!REDIS_SERVER) console.warn(`[test/scale] ${SKIP_REASON}`);

const URIS = ['item://0', 'item://1'];

describe.skipIf(!REDIS_SERVER)('a gap on the bus of the instance holding a listen stream', () => {
  const file = redisForFile();
  let deployment: Deployment | undefined;

  afterEach(async () => {
    await deployment?.close();
    deployment = undefined;
  });

  /** Two instances on a fresh channel; the client's stream is on one of them. */
  async function start() {
    const channel = `gap:${randomUUID()}`;
    deployment = await deploy({
      kind: 'redis',
      instances: 2,
      uris: URIS,
      redisUrl: file.redis.url,
      channel,
    });
    return { d: deployment, channel };
  }

  /**
   * Another instance announces a change of `uri`, and the entry is trimmed before any bus reads
   * it. Issued in one tick, node-redis pipelines the kills, the XADD and the XTRIM: all run
   * before a reading connection can reconnect, and each finds the gap when it does.
   */
  async function loseAnnouncement(channel: string, uri: string): Promise<void> {
    const { admin } = file;
    const ids = await busConnectionIds(admin);
    const entry = JSON.stringify({
      v: 1,
      origin: 'another-instance',
      event: { kind: 'resource_updated', uri },
    });
    await Promise.all([
      ...ids.map((id) => admin.sendCommand(['CLIENT', 'KILL', 'ID', id])),
      admin.sendCommand(['XADD', channel, '*', 'm', entry]),
      admin.sendCommand(['XTRIM', channel, 'MAXLEN', '0']),
    ]);
  }

  it('an McpCacheSync whose stream is on that instance re-reads what it shows', async () => {
    const { d, channel } = await start();
    const streamOn = d.streamInstance();

    d.store.setText('item://0', 'v1');
    await loseAnnouncement(channel, 'item://0');
    await eventually(() => expect(d.buses.map((bus) => bus.stats().gaps)).toEqual([1, 1]));
    expect(d.buses[streamOn]?.stats().lost).toBe(1);

    // The announcement itself is gone for good; the client shows the change only if it re-reads.
    await d.contentIs('item://0', 'v1');
    expect(d.notifications('item://0')).toBe(0);
    // It re-read because its stream ended: the one on that instance, nothing anywhere else.
    expect(d.buses.map((bus) => bus.stats().streamsEnded)).toEqual(
      d.buses.map((_, i) => (i === streamOn ? 1 : 0)),
    );
    // And it listens again, so later announcements reach it as before.
    await eventually(() => {
      expect(diagnosticsOf(d.sync).resources.filter((r) => r.acknowledged)).toHaveLength(2);
      expect(d.instances.reduce((sum, instance) => sum + instance.listenStreams(), 0)).toBe(1);
    });
    d.store.setText('item://1', 'v2');
    d.instances[1 - streamOn]?.handler.notify.resourceUpdated('item://1');
    await d.contentIs('item://1', 'v2');
    expect(d.notifications('item://1')).toBe(1);
  });

  it("an SDK client's listen stream on that instance ends as a disconnect, so it listens again", async () => {
    const { d, channel } = await start();
    const client = new Client(
      { name: 'spec-client', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${d.instances[0]?.origin}/mcp`)),
    );
    try {
      const subscription = await client.listen({ resourceSubscriptions: ['item://0'] });
      expect(subscription.honoredFilter.resourceSubscriptions).toEqual(['item://0']);
      let closed: string | undefined;
      void subscription.closed.then((reason) => {
        closed = reason;
      });

      await loseAnnouncement(channel, 'item://0');
      // The spec client's cue to re-listen and re-read ("re-listen if you still want events").
      await eventually(() => expect(d.buses[0]?.stats()).toMatchObject({ gaps: 1, lost: 1 }));
      await eventually(() => expect(closed).toBe('remote'));
    } finally {
      await client.close();
    }
  });
});
