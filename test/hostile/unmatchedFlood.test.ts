/**
 * A flood of `updated` notifications for URIs nobody shows, on the package's own transport
 * (`url`): recognised from the stream's bytes and dropped before the SDK parses them, yet counted
 * exactly as before (rule 2). What could matter (a wanted or covered URI, a malformed message)
 * goes through as it came.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { diagnosticsOf } from '../support/diagnostics';
import { eventually, idle } from '../support/wait';
import { HOSTILE_KINDS, type Hostile, startHostile, UPDATED, URI, updated } from './harness';

const FLOOD = 20_000;

describe.each(HOSTILE_KINDS)('updates nobody wants, flooding a $era stream ($kind)', ({ kind }) => {
  let h: Hostile | undefined;

  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it(`${FLOOD.toLocaleString('en')} of them are counted as unmatched but never reach the SDK; a wanted update among them is read; malformed ones are counted`, async () => {
    h = await startHostile(kind);
    const hostile = h;
    const view = hostile.mount(URI);
    await hostile.acknowledged(URI);
    await eventually(() => expect(view.text()).toBe('v1'));
    await idle(hostile.queryClient);
    const reads = hostile.server.store.reads();

    // Every message the SDK's transport hands to the client from here on.
    const client = await hostile.sync.whenReady();
    const transport = client.transport as { onmessage?: (message: unknown) => void };
    const original = transport.onmessage;
    const delivered: string[] = [];
    transport.onmessage = (message) => {
      delivered.push((message as { method?: string }).method ?? 'response');
      original?.(message);
    };

    hostile.server.store.setText(URI, 'v2');
    const nobody = Array.from({ length: FLOOD }, (_, i) => updated(`nobody://${i % 100}`));
    const malformed = [
      { jsonrpc: '2.0', method: UPDATED, params: {} },
      { jsonrpc: '2.0', method: UPDATED, params: { uri: 42 } },
    ];
    const written = hostile.proxy.inject([
      ...nobody.slice(0, FLOOD / 2),
      updated(URI),
      ...malformed,
      ...nobody.slice(FLOOD / 2),
    ]);
    expect(written).toBe(1);

    // The flood's last message comes last on the stream: once it is counted, everything before
    // it was handled (or handed to the SDK), and a read it caused has started.
    await eventually(() => expect(diagnosticsOf(hostile.sync).counters.unmatched).toBe(FLOOD), {
      timeout: 30_000,
    });
    await eventually(() => expect(view.text()).toBe('v2'));
    await idle(hostile.queryClient);

    const diagnostics = diagnosticsOf(hostile.sync);
    expect(diagnostics.counters).toMatchObject({ unmatched: FLOOD, malformed: 2 });
    expect(diagnostics.unmatched.map((u) => u.uri)).toContain('nobody://99');
    expect(diagnostics.resources.find((r) => r.uri === URI)?.notifications).toBe(1);
    // The wanted update and the two malformed ones reached the SDK; the flood did not.
    expect(delivered.filter((method) => method === UPDATED)).toHaveLength(3);
    expect(delivered.length).toBeLessThan(10);
    expect(hostile.server.store.reads() - reads).toBe(1);

    // A URI wanted from now on is no longer dropped.
    const other = hostile.mount('nobody://7');
    await eventually(() => expect(other.result().status).toBe('error'));
    // (Injected into every open stream: with a listen stream of its own, twice.)
    const streams = hostile.proxy.inject(updated('nobody://7'));
    await eventually(() =>
      expect(delivered.filter((m) => m === UPDATED)).toHaveLength(3 + streams),
    );
  });
});
