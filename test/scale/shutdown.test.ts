/**
 * Shutting an instance down: whatever order the host closes its handler and its bus in, no
 * listen stream of an attached handler is left open and silent. The README's order (handler,
 * then bus) ends them with the SDK's graceful result; a bus closed first ends them as a
 * disconnect, so their clients listen again, on another instance behind the load balancer.
 */
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { diagnosticsOf } from '../support/diagnostics';
import { eventually } from '../support/wait';
import { type Deployment, deploy } from './deployment';
import { REDIS_SERVER, redisForFile, SKIP_REASON } from './redisServer';

if (!REDIS_SERVER) console.warn(`[test/scale] ${SKIP_REASON}`);

const URIS = ['item://0', 'item://1'];

describe.skipIf(!REDIS_SERVER)('closing an instance with a Redis bus', () => {
  const file = redisForFile();
  let deployment: Deployment | undefined;
  const clients: Client[] = [];

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    await deployment?.close();
    deployment = undefined;
  });

  async function start() {
    deployment = await deploy({
      kind: 'redis',
      instances: 2,
      uris: URIS,
      redisUrl: file.redis.url,
      channel: `shutdown:${randomUUID()}`,
    });
    return deployment;
  }

  /** An SDK client talking to instance `index` directly, not through the proxy. */
  async function sdkClient(d: Deployment, index: number) {
    const client = new Client(
      { name: 'spec-client', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    clients.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${d.instances[index]?.origin}/mcp`)),
    );
    return client;
  }

  /** A listen stream on instance `index`, and how it closed once it has. */
  async function listenOn(d: Deployment, index: number) {
    const before = d.instances[index]?.listenStreams() ?? 0;
    const subscription = await (await sdkClient(d, index)).listen({
      resourceSubscriptions: ['item://0'],
    });
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual(['item://0']);
    expect(d.instances[index]?.listenStreams()).toBe(before + 1);
    let closed: string | undefined;
    void subscription.closed.then((reason) => {
      closed = reason;
    });
    return { closed: () => closed };
  }

  it('bus.close() before handler.close() ends the listen streams of the attached handler as a disconnect', async () => {
    const d = await start();
    const stream = await listenOn(d, 0);

    await d.buses[0]?.close();
    // The spec client's cue to re-listen ("re-listen if you still want events"), and the SDK's
    // own stream is torn down with it: nothing of it is left on the instance.
    await eventually(() => expect(stream.closed()).toBe('remote'));
    await eventually(() => expect(d.instances[0]?.listenStreams()).toBe(0));
    expect(d.buses[0]?.stats()).toMatchObject({ listeners: 0, streamsEnded: 0, gaps: 0 });
    // The handler closed afterwards has nothing left to end.
    await d.instances[0]?.handler.close();
  });

  it('a listen reaching an attached handler after bus.close() ends before its acknowledgement', async () => {
    const d = await start();
    const client = await sdkClient(d, 0);
    await d.buses[0]?.close();

    // Nothing would ever reach it: the client learns so at once, not after its ack timeout.
    await expect(client.listen({ resourceSubscriptions: ['item://0'] })).rejects.toThrow(
      /subscriptions\/listen: stream ended/,
    );
    await eventually(() => expect(d.instances[0]?.listenStreams()).toBe(0));
  });

  it('an McpCacheSync whose stream is on an instance whose bus closes listens again on another', async () => {
    const d = await start();
    const streamOn = d.streamInstance();
    const other = 1 - streamOn;
    // The load balancer drains the instance first; its bus is then closed before its handler.
    d.proxy.drain(streamOn);
    await d.buses[streamOn]?.close();

    await eventually(() => {
      expect(d.instances.map((instance) => instance.listenStreams())).toEqual(
        d.instances.map((_, i) => (i === other ? 1 : 0)),
      );
      expect(diagnosticsOf(d.sync).resources.filter((r) => r.acknowledged)).toHaveLength(2);
    });
    d.store.setText('item://1', 'v1');
    d.instances[other]?.handler.notify.resourceUpdated('item://1');
    await d.contentIs('item://1', 'v1');
    expect(d.notifications('item://1')).toBe(1);
  });

  it("the README's order run back to back (await handler.close(); await bus.close()) still ends them gracefully", async () => {
    const d = await start();
    const streams = [await listenOn(d, 0), await listenOn(d, 0), await listenOn(d, 0)];

    // The SDK has written its result by the time close() resolves: the bus must not cut it off.
    await d.instances[0]?.handler.close();
    await d.buses[0]?.close();
    await eventually(() =>
      expect(streams.map((s) => s.closed())).toEqual(streams.map(() => 'graceful')),
    );
    expect(d.instances[0]?.listenStreams()).toBe(0);
  });

  it("the README's order, handler.close() then bus.close(), ends them with the SDK's graceful result", async () => {
    const d = await start();
    const stream = await listenOn(d, 0);

    await d.instances[0]?.handler.close();
    await eventually(() => expect(stream.closed()).toBe('graceful'));
    expect(d.instances[0]?.listenStreams()).toBe(0);
    await d.buses[0]?.close();
    expect(d.buses[0]?.stats()).toMatchObject({ listeners: 0, connected: false, queued: 0 });
  });
});
