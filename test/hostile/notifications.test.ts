/**
 * A server that sends notifications nobody can use: broken shapes, unknown methods, URIs of
 * absurd size, URIs spelled differently from the subscription, the same update twice. None of it
 * may crash anything, cause a read, or grow memory; all of it must be visible in diagnostics.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { errorMessage } from '../../src/core/errors';
import { diagnosticsOf } from '../support/diagnostics';
import { eventually, idle } from '../support/wait';
import {
  HOSTILE_KINDS,
  type Hostile,
  isNotification,
  startHostile,
  UPDATED,
  URI,
  updated,
} from './harness';

const MB = 1024 * 1024;
// Far below the 1 MB inputs: whatever the diagnostics keep must be a cut-down copy.
const DIAGNOSTICS_BUDGET = 64 * 1024;

describe.each(HOSTILE_KINDS)('hostile notifications from the $kind server', ({ kind }) => {
  let h: Hostile | undefined;

  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** Connected, `URI` shown, acknowledged and read once; returns the read count to compare to. */
  async function ready(options?: Parameters<typeof startHostile>[1]) {
    h = await startHostile(kind, options);
    const view = h.mount(URI);
    await h.acknowledged(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    await idle(h.queryClient);
    return { hostile: h, view, reads: h.server.store.reads() };
  }

  it('malformed notifications and unknown methods are ignored, counted, bounded and cause no read', async () => {
    const { hostile, view, reads } = await ready();
    const hugeUri = `config://${'x'.repeat(MB)}`;
    const hugeMethod = `notifications/${'m'.repeat(MB)}`;
    const malformed = [
      { jsonrpc: '2.0', method: UPDATED },
      { jsonrpc: '2.0', method: UPDATED, params: {} },
      updated(42),
      updated(''),
      updated(null),
      updated({ href: URI }),
      updated([URI]),
      {
        jsonrpc: '2.0',
        method: 'notifications/resources/everything_changed',
        params: { uri: URI },
      },
      { jsonrpc: '2.0', method: hugeMethod },
    ];
    expect(hostile.proxy.inject([...malformed, updated(hugeUri)])).toBe(1);

    // The 1 MB URI comes last on the stream: once it is counted, everything before it was handled.
    await eventually(() => expect(diagnosticsOf(hostile.sync).counters.unmatched).toBe(1));
    await idle(hostile.queryClient);
    const diagnostics = diagnosticsOf(hostile.sync);
    expect(diagnostics.counters.malformed).toBe(malformed.length);
    expect(diagnostics.counters.updated).toBe(0);
    // Delivered in order, so the last malformed one is the 1 MB method, kept only as a prefix.
    expect(diagnostics.lastMalformed?.reason).toBe('unknown method');
    expect(diagnostics.lastMalformed?.method.startsWith('notifications/mmm')).toBe(true);
    expect(diagnostics.lastMalformed?.method.length).toBeLessThanOrEqual(1024);
    // A 1 MB string is a URI nobody subscribed: unmatched, and cut before it is stored.
    expect(diagnostics.counters.unmatched).toBe(1);
    expect(diagnostics.unmatched).toHaveLength(1);
    expect(diagnostics.unmatched[0]?.uri.startsWith('config://xxx')).toBe(true);
    expect(diagnostics.unmatched[0]?.uri.length).toBeLessThanOrEqual(1024);
    expect(JSON.stringify(diagnostics).length).toBeLessThan(DIAGNOSTICS_BUDGET);
    expect(hostile.server.store.reads()).toBe(reads);

    // The stream survived it all: a real change still arrives and is read once.
    hostile.server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
    await idle(hostile.queryClient);
    expect(hostile.server.store.reads()).toBe(reads + 1);
  });

  it('frames that are not JSON-RPC at all do not break the stream', async () => {
    const { hostile, view, reads } = await ready();
    hostile.proxy.inject([
      'this is not json',
      '{"truncated": ',
      '[]',
      '{"jsonrpc":"2.0","id":987654,"result":{}}',
      '{"jsonrpc":"2.0","id":987655,"error":{"code":-1,"message":"for nobody"}}',
      '{"jsonrpc":"2.0","id":"x","method":"sampling/createMessage","params":{}}',
    ]);
    // A real update after them on the same stream: once it is shown, they were handled.
    hostile.server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
    await idle(hostile.queryClient);
    expect(hostile.server.store.reads()).toBe(reads + 1);
    expect(hostile.sync.getState().status).toBe('ready');
  });

  it('updates for URIs never subscribed cause no read, are listed with counts, and near misses are named', async () => {
    const { hostile, reads } = await ready();
    // A real server filters what it sends per subscription; this one does not.
    hostile.proxy.inject([
      updated('CONFIG://app'),
      updated('CONFIG://app'),
      updated(`${URI}/`),
      updated('other://x'),
      updated('other://x'),
      updated('other://x'),
    ]);
    await eventually(() => expect(diagnosticsOf(hostile.sync).counters.unmatched).toBe(6));
    await idle(hostile.queryClient); // a read would have started as they were handled
    expect(hostile.server.store.reads()).toBe(reads);

    const diagnostics = diagnosticsOf(hostile.sync);
    const entry = (uri: string) => diagnostics.unmatched.find((u) => u.uri === uri);
    expect(entry('CONFIG://app')).toMatchObject({ count: 2, nearest: URI });
    expect(entry(`${URI}/`)).toMatchObject({ count: 1, nearest: URI });
    expect(entry('other://x')).toMatchObject({ count: 3, nearest: undefined });
    expect(hostile.resource(URI)?.notifications).toBe(0);

    const check = diagnostics.checks.find((c) => c.id === 'uri-match');
    expect(check?.ok).toBe(false);
    expect(check?.detail).toContain(`server sent "CONFIG://app", you subscribed "${URI}"`);
  });

  it('many distinct unmatched URIs keep the unmatched list bounded', async () => {
    const { hostile, reads } = await ready();
    const uris = Array.from({ length: 500 }, (_, i) => `junk://${i}/${'y'.repeat(2000)}`);
    hostile.proxy.inject(uris.map(updated));
    await eventually(() => expect(diagnosticsOf(hostile.sync).counters.unmatched).toBe(500));
    await idle(hostile.queryClient);
    const diagnostics = diagnosticsOf(hostile.sync);
    expect(diagnostics.unmatched.length).toBeLessThanOrEqual(100);
    // The most recent ones are the ones worth showing.
    expect(diagnostics.unmatched[0]?.uri.startsWith('junk://499/')).toBe(true);
    expect(JSON.stringify(diagnostics).length).toBeLessThan(DIAGNOSTICS_BUDGET);
    expect(hostile.server.store.reads()).toBe(reads);
  });

  // Issue 17, item 10: events reach the devtools, useMcpEvents and other tabs. Before, an
  // unmatched URI and a server's error text were carried whole.
  it('a megabyte URI nobody wants and a megabyte error text are cut in the events, never carried whole', async () => {
    const { hostile, reads } = await ready();
    const longest = { uri: 0 };
    hostile.sync.subscribeEvents((event) => {
      if (event.type === 'updated') longest.uri = Math.max(longest.uri, event.uri.length);
    });
    const hugeUri = `junk://${'z'.repeat(MB)}`;
    hostile.proxy.inject([updated(hugeUri)]);
    await eventually(() => expect(diagnosticsOf(hostile.sync).counters.unmatched).toBe(1));
    expect(longest.uri).toBeGreaterThan(0);
    expect(longest.uri).toBeLessThanOrEqual(2049);
    expect(errorMessage(new Error('e'.repeat(MB))).length).toBeLessThanOrEqual(1001);
    expect(hostile.server.store.reads()).toBe(reads);
  });

  it('the same update twice in one chunk costs at most one extra read', async () => {
    const { hostile, view, reads } = await ready();
    hostile.proxy.setRules({
      rewrite: (message) => (isNotification(message, UPDATED) ? [message, message] : undefined),
    });
    hostile.server.setText(URI, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
    await eventually(() => expect(hostile.resource(URI)?.notifications).toBe(2));
    await idle(hostile.queryClient);
    expect(hostile.server.store.reads() - reads).toBeGreaterThanOrEqual(1);
    expect(hostile.server.store.reads() - reads).toBeLessThanOrEqual(2);
    expect(hostile.resource(URI)?.notifications).toBe(2);
  });
});
