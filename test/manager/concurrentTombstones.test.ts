/**
 * A list carries the nonces of the adds removed (or moved) lately: a tab that adopts another's
 * list drops a server whose add either side removed, and writes the filtered list once. A re-add
 * has a fresh nonce, so a removal never blocks it. ConfigStore alone, over a channel the test
 * delivers by hand.
 */
import { describe, expect, it } from 'vitest';
import type { McpServerConfig } from '../../src/servers/config';
import { ConfigStore, checkStored } from '../../src/servers/configStore';
import type { ChannelLike } from '../../src/tabs';

const CHANGED = 'mcp-react-query:servers-changed';

const server = (id: string, nonce: string): McpServerConfig => ({
  id,
  name: id,
  url: `http://h/${id}`,
  nonce,
});

/** A store in memory whose sent messages are kept, and which hears what `hear` gives it. */
function tab() {
  const sent: Array<Record<string, unknown>> = [];
  let listener: ((event: { data: unknown }) => void) | undefined;
  const channel = (): ChannelLike => ({
    postMessage: (message) => sent.push(structuredClone(message) as Record<string, unknown>),
    addEventListener: (_type, fn) => {
      listener = fn as (event: { data: unknown }) => void;
    },
    close: () => {},
  });
  const store = new ConfigStore({ key: 'servers', storage: null, channel });
  store.start();
  const hear = (data: Record<string, unknown>) => listener?.({ data: { type: CHANGED, ...data } });
  return { store, sent, hear };
}

describe('removed adds (tombstones by nonce)', () => {
  it('a stored list keeps its removed nonces as far as they are strings, bounded; an older one has none', () => {
    expect(checkStored({ rev: 1, writer: 'w', servers: [], chain: [] }).removed).toEqual([]);
    const long = 'x'.repeat(65);
    const many = Array.from({ length: 100 }, (_, i) => `n${i}`);
    const stored = checkStored({ rev: 1, writer: 'w', servers: [], chain: [], removed: many });
    expect(stored.removed).toEqual(many.slice(0, 64));
    expect(
      checkStored({ rev: 1, writer: 'w', servers: [], removed: ['a', 3, long, '', 'b'] }).removed,
    ).toEqual(['a', 'b']);
    expect(checkStored({ rev: 1, writer: 'w', servers: [], removed: 'a' }).removed).toEqual([]);
  });

  it('a change that removes or moves a server writes the nonce of the add it ended', () => {
    const a = tab();
    a.store.change(() => [server('x', 'nx'), server('y', 'ny')]);
    a.store.change((list) => list.filter((s) => s.id !== 'x'));
    a.store.change((list) => list.map((s) => ({ ...s, url: 'http://h/moved', nonce: 'ny2' })));
    expect(a.sent.at(-1)?.removed).toEqual(['ny', 'nx']);
    expect(a.store.servers.map((s) => s.nonce)).toEqual(['ny2']);
  });

  it('a list from another tab that holds a server this tab removed loses it, and the tab writes that once', () => {
    const a = tab();
    a.store.change(() => [server('x', 'nx'), server('y', 'ny')]);
    a.store.change((list) => list.filter((s) => s.id !== 'x'));
    const before = a.sent.length;
    // Another tab's list, written past this one without knowing of the removal.
    a.hear({ rev: 9, writer: 'zz', chain: [], servers: [server('x', 'nx'), server('z', 'nz')] });
    expect(a.store.servers.map((s) => s.id)).toEqual(['z']);
    expect(a.sent.length).toBe(before + 1);
    expect(a.sent.at(-1)).toMatchObject({ rev: 10, removed: ['nx'] });
    // The filtered list, heard back, changes nothing more.
    a.hear({ ...(a.sent.at(-1) as Record<string, unknown>), rev: 11, writer: 'zz' });
    expect(a.sent.length).toBe(before + 1);
  });

  it("another tab's removed nonces drop that server here too, and are kept", () => {
    const a = tab();
    a.store.change(() => [server('x', 'nx')]);
    a.hear({ rev: 5, writer: 'zz', chain: [], servers: [server('x', 'nx')], removed: ['nx'] });
    expect(a.store.servers).toEqual([]);
    a.store.change((list) => [...list, server('y', 'ny')]);
    expect(a.sent.at(-1)).toMatchObject({ removed: ['nx'] });
  });

  it('a re-add after a removal has a fresh nonce and stays, wherever the removal is heard', () => {
    const a = tab();
    a.store.change(() => [server('x', 'n1')]);
    a.store.change(() => []);
    a.store.change(() => [server('x', 'n2')]);
    a.hear({ rev: 9, writer: 'zz', chain: [], servers: [server('x', 'n2')], removed: ['n1'] });
    expect(a.store.servers.map((s) => s.nonce)).toEqual(['n2']);
  });
});
