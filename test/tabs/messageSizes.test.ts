/**
 * What the tabs send each other stays within what the others accept (validate.ts: 1,000 items
 * a message, 10,000 keys a tab): a busy leader's events and a follower holding very many keys
 * are split or bounded by the sender, never refused whole by the receiver. Fake tabs as in
 * roles.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { clip } from '../../src/core/errors';
import type { McpEvent } from '../../src/core/events';
import { internalsOf } from '../../src/core/internals';
import { MAX_KEYS_PER_TAB } from '../../src/tabs/validate';
import { group, type Tab, withFakeTabs } from '../support/tabsHarness';

withFakeTabs();

describe('message sizes between tabs (rule 14)', () => {
  it('a burst of the leader’s events larger than one message carries reaches the followers whole, coverage included', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const bus = internalsOf(a.sync).events.bus;
    bus.emit({ type: 'coverage', acknowledged: ['doc://1'], lists: ['resources'], lost: [] });
    for (let i = 0; i < 1000; i++) bus.emit({ type: 'updated', uri: `doc://${i}`, matched: true });
    await settle();
    expect(b.events.filter((event) => event.type === 'coverage')).toHaveLength(1);
    expect(b.events.filter((event) => event.type === 'updated')).toHaveLength(1000);
    for (const message of hub.sent(a.label, 'events') as Array<{ events: McpEvent[] }>) {
      expect(message.events.length).toBeLessThanOrEqual(1000);
    }
  });

  it('a follower holding more keys than a tab may ask the leader for still has MAX_KEYS_PER_TAB of them held', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    for (let i = 0; i <= MAX_KEYS_PER_TAB; i++) b.observe(`doc://${i}`);
    await settle();
    const interest = hub.sent(b.label, 'interest').at(-1) as { keys: unknown[] };
    expect(interest.keys).toHaveLength(MAX_KEYS_PER_TAB);
    expect(a.local.desires.at(-1)?.uris).toHaveLength(MAX_KEYS_PER_TAB);
  }, 60_000);

  it('a server’s log message cut at 8,000 characters of JSON (serverLog.ts) reaches the followers, and so do the events sent with it', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const bus = internalsOf(a.sync).events.bus;
    // A structured log message of many short strings: its JSON is mostly quotes and commas.
    const json = JSON.stringify(Array.from({ length: 3000 }, (_, i) => `k${i}`));
    const data = clip(json, 8000);
    bus.emit({ type: 'log', level: 'info', data });
    bus.emit({ type: 'coverage', acknowledged: ['doc://1'], lists: ['resources'], lost: [] });
    await settle();
    expect(b.events.filter((event) => event.type === 'log')).toMatchObject([{ data }]);
    expect(b.events.filter((event) => event.type === 'coverage')).toHaveLength(1);
    // Still bounded: longer text than the leader ever sends is refused.
    bus.emit({ type: 'log', level: 'info', data: 'x'.repeat(9000) });
    await settle();
    expect(b.events.filter((event) => event.type === 'log')).toHaveLength(1);
  });

  it('an update a server sends for a URI too long for a tab message does not keep the events sent with it from the followers', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const bus = internalsOf(a.sync).events.bus;
    // What the dispatcher makes of a server's notifications/resources/updated, whatever its length.
    bus.emit({ type: 'updated', uri: `doc://${'x'.repeat(9000)}`, matched: false });
    bus.emit({ type: 'coverage', acknowledged: ['doc://1'], lists: ['resources'], lost: [] });
    bus.emit({ type: 'updated', uri: 'doc://1', matched: true });
    await settle();
    expect(b.events.filter((event) => event.type === 'coverage')).toHaveLength(1);
    expect(b.events.filter((event) => event.type === 'updated')).toMatchObject([
      { uri: 'doc://1' },
    ]);
  });
});
