/**
 * Every tab's diagnostics and events tell the leader's story (docs/design.md, Tab sharing): the
 * updates the server sends for URIs nobody subscribed reach the followers (a bounded sample
 * under a flood), and a follower that stops following a leader says which coverage it dropped,
 * as a `coverage` event every consumer of events sees. Fake tabs as in roles.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import type { McpDiagnostics } from '../../src/core/checks';
import type { McpEvent, McpEventOf } from '../../src/core/events';
import { internalsOf } from '../../src/core/internals';
import { diagnosticsOf } from '../support/diagnostics';
import { group, type Tab, withFakeTabs } from '../support/tabsHarness';

withFakeTabs();

/** The most distinct unmatched URIs the diagnostics keep (src/core/diagnostics.ts): a burst forwards no more. */
const UNMATCHED_BURST = 50;
/** The most unmatched updates the leader forwards a second. */
const UNMATCHED_PER_SECOND = 100;

const uriMatch = (diagnostics: McpDiagnostics) =>
  diagnostics.checks.find((check) => check.id === 'uri-match');
const unmatchedUpdates = (events: McpEvent[]) =>
  events.filter(
    (event): event is McpEventOf<'updated'> => event.type === 'updated' && !event.matched,
  );

describe('unmatched updates in every tab (rule 14)', () => {
  it('an update for a URI nobody subscribed turns the uri-match check red in every tab, with the near miss', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    b.observe('doc://Note/1');
    await settle();
    internalsOf(a.sync).events.bus.emit({ type: 'updated', uri: 'doc://note/1', matched: false });
    await settle();
    expect(uriMatch(diagnosticsOf(a.sync))?.ok).toBe(false);
    expect(uriMatch(diagnosticsOf(b.sync))?.ok).toBe(false);
    expect(diagnosticsOf(b.sync).unmatched).toEqual([
      { uri: 'doc://note/1', count: 1, lastAt: expect.any(Number), nearest: 'doc://Note/1' },
    ]);
  });

  it('a flood of them reaches the followers as a bounded sample: a burst, then at most the rate', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const bus = internalsOf(a.sync).events.bus;
    const flood = (from: number) => {
      for (let i = from; i < from + 100_000; i++) {
        bus.emit({ type: 'updated', uri: `junk://${i}`, matched: false });
      }
    };
    flood(0);
    await settle();
    expect(diagnosticsOf(a.sync).counters.unmatched).toBe(100_000);
    expect(unmatchedUpdates(b.events)).toHaveLength(UNMATCHED_BURST);
    expect(uriMatch(diagnosticsOf(b.sync))?.ok).toBe(false);

    await vi.advanceTimersByTimeAsync(1000);
    flood(100_000);
    await settle();
    const forwarded = unmatchedUpdates(b.events).length - UNMATCHED_BURST;
    expect(forwarded).toBeLessThanOrEqual(Math.min(UNMATCHED_BURST, UNMATCHED_PER_SECOND));
    expect(forwarded).toBeGreaterThan(0);
    // What the leader posted is what the follower got: the flood was not copied to the channel.
    const posted = (hub.sent(a.label, 'events') as Array<{ events: McpEvent[] }>).flatMap(
      (message) => unmatchedUpdates(message.events),
    );
    expect(posted).toHaveLength(UNMATCHED_BURST + forwarded);
  });

  it('a tab that joins after the leader heard them is told the latest (once each), so its check is red too', async () => {
    const { tabs, open, settle } = await group(1);
    const [a] = tabs as [Tab];
    const bus = internalsOf(a.sync).events.bus;
    for (let i = 0; i < 3 * UNMATCHED_BURST; i++) {
      bus.emit({ type: 'updated', uri: `junk://${i % (2 * UNMATCHED_BURST)}`, matched: false });
    }
    const b = open();
    await settle();
    expect(uriMatch(diagnosticsOf(b.sync))?.ok).toBe(false);
    // The last UNMATCHED_BURST distinct URIs the server named (the second round: 0 to 49), oldest first.
    const told = unmatchedUpdates(b.events).map((event) => event.uri);
    expect(told).toEqual(Array.from({ length: UNMATCHED_BURST }, (_, i) => `junk://${i}`));
  });
});

describe('coverage a follower drops (rule 14)', () => {
  it('on a handover every follower emits the old leader’s coverage and declined URIs as lost', async () => {
    const { tabs, settle } = await group(3);
    const [a, b, c] = tabs as [Tab, Tab, Tab];
    const bus = internalsOf(a.sync).events.bus;
    bus.emit({ type: 'coverage', acknowledged: ['doc://1'], lost: [], lists: ['resources'] });
    bus.emit({ type: 'declined', changes: [['doc://2', 'not allowed']] });
    await settle();
    expect(diagnosticsOf(b.sync).lists.resources).toBe(true);
    const seen = { b: b.events.length, c: c.events.length };

    a.crash(); // no goodbye: the old leader says nothing of its coverage's end
    await settle();
    expect(b.tabs()?.leader).toBe(true);
    for (const [tab, from] of [
      [b, seen.b],
      [c, seen.c],
    ] as const) {
      const after = tab.events.slice(from);
      expect(after.filter((event) => event.type === 'coverage')).toEqual([
        {
          type: 'coverage',
          acknowledged: [],
          lost: ['doc://1'],
          lists: [],
          at: expect.any(Number),
        },
      ]);
      expect(after.filter((event) => event.type === 'declined')).toEqual([
        { type: 'declined', changes: [['doc://2', null]], at: expect.any(Number) },
      ]);
      expect(diagnosticsOf(tab.sync).lists.resources).toBe(false);
    }
  });

  it('a follower with nothing covered emits nothing when it follows another leader', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    a.crash();
    await settle();
    expect(b.tabs()?.leader).toBe(true);
    expect(
      b.events.filter((event) => event.type === 'coverage' || event.type === 'declined'),
    ).toEqual([]);
  });
});
