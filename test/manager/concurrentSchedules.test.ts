/**
 * Random schedules (seeded, so every run is the same) of three tabs changing one servers' list:
 * each tab's view of the storage shows another's write only when the schedule lands it, and the
 * channel delivers each tab's messages in any order. Whatever the schedule, once everything is
 * delivered every tab and the storage hold one list, no server added and never removed is lost,
 * and no server a tab removed comes back. ConfigStore alone: nothing here crosses the wire to an
 * MCP server (test/manager/concurrent*.test.ts hold the same rules with real servers).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KeyValueStorage } from '../../src/auth';
import { systemClock } from '../../src/core/clock';
import type { McpServerConfig } from '../../src/servers/config';
import { ConfigStore, readServers } from '../../src/servers/configStore';
import type { ChannelLike } from '../../src/tabs';

afterEach(() => vi.unstubAllGlobals());

const KEY = 'servers';
const TABS = 3;

/** mulberry32: a small seeded generator. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One browser: the storage, each tab's lagging view of it, and a channel that reorders. */
function browser(random: () => number, memory: boolean) {
  const events = new EventTarget();
  vi.stubGlobal('addEventListener', events.addEventListener.bind(events));
  vi.stubGlobal('removeEventListener', events.removeEventListener.bind(events));
  let stored: string | null = null;
  const tabs = Array.from({ length: TABS }, () => ({
    shown: null as string | null,
    unlanded: [] as string[],
    unseen: [] as string[],
    /** By sender: a BroadcastChannel keeps one sender's messages in order. */
    messages: Array.from({ length: TABS }, () => [] as unknown[]),
    listener: undefined as ((event: { data: unknown }) => void) | undefined,
  }));
  const stores = tabs.map((tab, i) => {
    const view: KeyValueStorage = {
      getItem: () => tab.shown,
      setItem: (_key, value) => {
        tab.shown = value;
        tab.unlanded.push(value);
      },
      removeItem: () => {},
    };
    const channel = (): ChannelLike => ({
      postMessage: (message) => {
        for (const [j, other] of tabs.entries()) {
          if (j !== i) other.messages[i]?.push(structuredClone(message));
        }
      },
      addEventListener: (_type, listener) => {
        tab.listener = listener as (event: { data: unknown }) => void;
      },
      close: () => {},
    });
    const store = new ConfigStore({ key: KEY, storage: memory ? null : view, channel });
    store.start();
    return { store, view };
  });

  /** Every delivery the schedule may make next: a write landing, seen, or a message. */
  const deliveries = (): Array<() => void> =>
    tabs.flatMap((tab, i) => [
      ...(tab.unlanded.length > 0
        ? [
            () => {
              stored = tab.unlanded.shift() as string;
              for (const [j, other] of tabs.entries()) if (j !== i) other.unseen.push(stored);
            },
          ]
        : []),
      ...(tab.unseen.length > 0
        ? [
            () => {
              tab.shown = tab.unseen.shift() as string;
              const event = Object.assign(new Event('storage'), {
                key: KEY,
                storageArea: stores[i]?.view,
              });
              events.dispatchEvent(event);
            },
          ]
        : []),
      // One sender's next message; another sender's may overtake it.
      ...tab.messages.flatMap((queue) =>
        queue.length > 0 ? [() => tab.listener?.({ data: queue.shift() })] : [],
      ),
    ]);
  const deliverOne = () => {
    const all = deliveries();
    all[Math.floor(random() * all.length)]?.();
    return all.length > 0;
  };
  return { stores: stores.map((s) => s.store), deliverOne, stored: () => stored };
}

function run(seed: number, actions: number, memory: boolean) {
  const random = seeded(seed);
  const before = systemClock.random;
  // The tabs' writer ids come from the seed too.
  systemClock.random = random;
  let tabs: ReturnType<typeof browser>;
  try {
    tabs = browser(random, memory);
  } finally {
    systemClock.random = before;
  }
  const { stores, deliverOne } = tabs;
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)] as T;
  const added = new Set<string>();
  const removed = new Set<string>();
  const log: string[] = [];
  for (let n = 0; n < actions; n++) {
    for (let k = Math.floor(random() * 4); k > 0; k--) deliverOne();
    const i = Math.floor(random() * TABS);
    const store = stores[i] as ConfigStore;
    const choice = random();
    if (choice < 0.5 || store.servers.length === 0) {
      const id = `s${n}`;
      added.add(id);
      log.push(`${i} adds ${id}`);
      const server: McpServerConfig = { id, name: id, url: `http://h/${id}`, nonce: id };
      store.change((servers) => [...servers, server]);
    } else if (choice < 0.75) {
      const { id } = pick(store.servers);
      removed.add(id);
      log.push(`${i} removes ${id}`);
      store.change((servers) => servers.filter((server) => server.id !== id));
    } else {
      const { id } = pick(store.servers);
      log.push(`${i} renames ${id}`);
      store.change((servers) =>
        servers.map((server) => (server.id === id ? { ...server, name: `${id}-${n}` } : server)),
      );
    }
  }
  let deliveries = 0;
  while (deliverOne()) {
    if (++deliveries > 5000) throw new Error(`seed ${seed}: the tabs never stop writing`);
  }
  const text = (servers: readonly McpServerConfig[]) =>
    servers.map((server) => `${server.id}:${server.name}`).join(',');
  const final = stores[0]?.servers.map((server) => server.id) ?? [];
  return {
    lists: stores.map((store) => text(store.servers)),
    stored: text(readServers(tabs.stored()).servers),
    cameBack: final.filter((id) => removed.has(id)),
    lost: [...added].filter((id) => !removed.has(id) && !final.includes(id)),
    log: log.join('; '),
  };
}

/**
 * Schedules in which a server one tab removed comes back. None since a list carries the nonces of
 * the adds removed lately (a merged list's chain names only one parent, and once brought a removed
 * server back after long crossings: seeds 124, 306, 324, 378 and 776).
 */
const KNOWN_RETURNS = new Set<number>();

describe('random schedules of three tabs changing one list', () => {
  it.each(Array.from({ length: 1000 }, (_, i) => i))('lists in a storage, seed %i', (seed) => {
    const r = run(seed, 12, false);
    const why = `${r.log} → ${r.lists.join(' | ')}; stored ${r.stored}`;
    expect(new Set(r.lists).size, why).toBe(1);
    expect(r.stored, why).toBe(r.lists[0]);
    expect(r.lost, why).toEqual([]);
    // Listed so that a fix shows here (the list is emptied then).
    if (KNOWN_RETURNS.has(seed)) expect(r.cameBack, why).not.toEqual([]);
    else expect(r.cameBack, why).toEqual([]);
  });

  it.each(Array.from({ length: 200 }, (_, i) => i))('lists in memory, seed %i', (seed) => {
    const r = run(seed, 12, true);
    expect(new Set(r.lists).size, `${r.log} → ${r.lists.join(' | ')}`).toBe(1);
  });
});
