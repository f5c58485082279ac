/**
 * Tabs of one browser change the servers' list before they see each other's writes, and a tab
 * whose list loses puts what its list changed on the other's (ConfigStore, listMerge), beyond the
 * simple crossing of two adds (concurrentChanges.test.ts): two servers that clash once both
 * changes are put together (one URL, one name), a removal crossing an edit of the same server, a
 * tab's second change in a row, a third tab whose list wins over one built on another's change, a
 * list at the last safe rev, chains from a script or an older version, a hidden manager. Every
 * tab and the storage settle on one list; a server removed by a tab that knew of it never comes
 * back. Real servers; Node's BroadcastChannel between the tabs (held back per tab where the
 * order of what a tab hears matters).
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type KeyValueStorage, memoryStorage } from '../../src/auth';
import { McpServerManager, type ServerSignIn } from '../../src/servers';
import { readServers } from '../../src/servers/configStore';
import type { ChannelLike } from '../../src/tabs';
import type { TestServer } from '../servers';
import { crossing, LIST } from '../support/crossing';
import {
  atEnd,
  authServer,
  closeAll,
  FAST,
  openManager,
  serverOf,
  type Tab,
} from '../support/manager';
import {
  addedAndSignedIn,
  entry,
  sharedTokensTab,
  signInOf,
  userBrowser,
} from '../support/serverSignIn';
import { tabChannels } from '../support/tabs';
import { eventually } from '../support/wait';

afterEach(async () => {
  await closeAll();
  vi.unstubAllGlobals();
});

const ids = (tab: Tab) =>
  tab.manager
    .getServers()
    .map((server) => server.id)
    .sort();

/** Real servers (2026-07-28), by label. */
async function modern<L extends string>(...labels: L[]): Promise<Record<L, TestServer>> {
  const servers = await Promise.all(labels.map((label) => serverOf('modern', label)));
  return Object.fromEntries(labels.map((label, i) => [label, servers[i]])) as Record<L, TestServer>;
}

const storedIds = (storage: KeyValueStorage) =>
  readServers(storage.getItem(LIST))
    .servers.map((server) => server.id)
    .sort();

/**
 * A tab's BroadcastChannels, whose messages it hears only on `release()` while `hold()` holds
 * them back (a page busy, or a message late): `queued()` counts them.
 */
type Held = ReturnType<typeof heldChannels>;

function heldChannels() {
  const channels = tabChannels();
  atEnd(() => channels.closeAll());
  let held = false;
  const queue: Array<{ data: unknown; deliver: () => void }> = [];
  return {
    open(name: string): ChannelLike {
      const channel = channels.open(name);
      return {
        postMessage: (message) => channel.postMessage(message),
        addEventListener: (type, listener) =>
          channel.addEventListener(type, (event) => {
            if (held) queue.push({ data: event.data, deliver: () => listener(event) });
            else listener(event);
          }),
        close: () => channel.close(),
      };
    },
    hold() {
      held = true;
    },
    release() {
      held = false;
      for (const { deliver } of queue.splice(0)) deliver();
    },
    queued: () => queue.length,
    /** The servers' ids of the last message held back. */
    lastIds: () => readServers(JSON.stringify(queue.at(-1)?.data ?? null)).servers.map((s) => s.id),
  };
}

/** Tabs on one list (writes landing on `flush()` while held), each with its own channels. */
function tabs(count: number, signIn?: (index: number) => ServerSignIn | undefined) {
  const local = memoryStorage();
  const views = Array.from({ length: count }, () => crossing(local));
  for (const view of views) view.flush();
  const channels = views.map(() => heldChannels());
  const opened = views.map((view, index) =>
    openManager({ storage: view.storage, channel: channels[index]?.open, signIn: signIn?.(index) }),
  );
  const hold = () => {
    for (const view of views) view.hold();
  };
  const flush = () => {
    for (const view of views) view.flush();
  };
  return { local, views, channels, tabs: opened, hold, flush };
}

/** Every tab, and the storage, show `expected` (sorted ids). */
async function settledOn(local: KeyValueStorage, all: Tab[], expected: string[]) {
  for (const tab of all) await eventually(() => expect(ids(tab)).toEqual(expected));
  await eventually(() => expect(storedIds(local)).toEqual(expected));
}

describe('changes that clash once put together', () => {
  it.each([
    ['the same URL', true],
    ['the same name (but for its case)', false],
  ])(
    'two tabs add two servers with %s: every tab and the storage settle on one list',
    async (_, sameUrl) => {
      const [one, two] = await Promise.all([serverOf('modern', 'one'), serverOf('modern', 'two')]);
      const { local, hold, flush, tabs: all } = tabs(2);
      const [a, b] = all as [Tab, Tab];
      hold();
      expect(a.manager.add({ id: 'x', name: sameUrl ? 'X' : 'Same', url: one.url }).ok).toBe(true);
      const y = { id: 'y', name: sameUrl ? 'Y' : 'same', url: sameUrl ? one.url : two.url };
      expect(b.manager.add(y).ok).toBe(true);
      flush();

      await eventually(() => expect(ids(a)).toEqual(ids(b)));
      expect(ids(a)).toHaveLength(1);
      await eventually(() => expect(storedIds(local)).toEqual(ids(a)));
      expect(JSON.parse(local.getItem(LIST) as string).servers).toHaveLength(1);
    },
  );
});

describe('a removal crossing an edit of the same server', () => {
  it('removed in B while A renames it: it stays removed, and does not come back signed out', async () => {
    const auth = await authServer();
    const [mail, news] = await Promise.all([
      serverOf('modern', 'mail', { authServer: auth }),
      serverOf('modern', 'news'),
    ]);
    const local = memoryStorage(); // localStorage: the list and the tokens, shared by the tabs
    const browser = userBrowser();
    const [viewA, viewB] = [crossing(local), crossing(local)];
    viewA.flush();
    viewB.flush();
    const a = sharedTokensTab(viewA.storage, local, browser.navigate);
    const b = sharedTokensTab(viewB.storage, local, browser.navigate);
    await addedAndSignedIn(a, { id: 'mail', url: mail.url }, local, browser);
    await eventually(() => expect(entry(b, 'mail')?.signIn).toBe('signed-in'));

    // A renames it and adds another (its list is the newer); B removes it at that moment.
    viewA.hold();
    viewB.hold();
    a.manager.update('mail', { name: 'Work mail' });
    a.manager.add({ id: 'news', name: 'News', url: news.url });
    const removed = b.manager.remove('mail');
    viewA.flush();
    viewB.flush();
    expect(await removed).toBe(true);

    await settledOn(local, [a, b], ['news']);
  });
});

describe("a tab's change in a row after one the other tab already saw", () => {
  it('a server the other tab saw and removed stays removed', async () => {
    const { x, y, z } = await modern('x', 'y', 'z');
    const { local, hold, flush, tabs: all } = tabs(2);
    const [a, b] = all as [Tab, Tab];
    a.manager.add({ id: 'x', name: 'X', url: x.url });
    await eventually(() => expect(ids(b)).toEqual(['x']));

    // B removes x (it knows of it) and adds z; at that moment A, which has not heard, adds y.
    hold();
    void b.manager.remove('x');
    b.manager.add({ id: 'z', name: 'Z', url: z.url });
    a.manager.add({ id: 'y', name: 'Y', url: y.url });
    flush();

    await settledOn(local, all, ['y', 'z']);
  });

  it('a rename of the server it just added is kept', async () => {
    const [p, y] = await Promise.all([serverOf('modern', 'p'), serverOf('modern', 'y')]);
    const { local, hold, flush, tabs: all } = tabs(2);
    const [a, b] = all as [Tab, Tab];
    a.manager.add({ id: 'p', name: 'P', url: p.url });
    await eventually(() => expect(ids(b)).toEqual(['p']));

    hold();
    a.manager.update('p', { name: 'Renamed' });
    b.manager.add({ id: 'y', name: 'Y', url: y.url });
    b.manager.update('y', { name: 'Why' });
    flush();

    await settledOn(local, all, ['p', 'y']);
    for (const tab of all) await eventually(() => expect(entry(tab, 'p')?.name).toBe('Renamed'));
    expect(readServers(local.getItem(LIST)).servers.find((s) => s.id === 'p')?.name).toBe(
      'Renamed',
    );
  });

  it('a rename of a server whose sign-in this tab learnt from its 401 is kept', async () => {
    const auth = await authServer();
    const [mail, y] = await Promise.all([
      serverOf('modern', 'mail', { authServer: auth }),
      serverOf('modern', 'y'),
    ]);
    // Only A signs in (B's manager has no signIn): A alone learns `auth: 'oauth'`.
    const {
      local,
      hold,
      flush,
      tabs: all,
    } = tabs(2, (index) => (index === 0 ? signInOf(memoryStorage(), undefined, true) : undefined));
    const [a, b] = all as [Tab, Tab];
    a.manager.add({ id: 'mail', name: 'Mail', url: mail.url });
    for (const tab of all) await eventually(() => expect(entry(tab, 'mail')?.auth).toBe('oauth'));

    hold();
    a.manager.update('mail', { name: 'Work mail' });
    b.manager.add({ id: 'y', name: 'Y', url: y.url });
    b.manager.update('y', { name: 'Why' });
    flush();

    await settledOn(local, all, ['mail', 'y']);
    for (const tab of all) {
      await eventually(() => expect(entry(tab, 'mail')?.name).toBe('Work mail'));
    }
  });
});

describe('three tabs', () => {
  it('all three add a server at the same moment: every tab and the storage keep the three', async () => {
    const servers = await Promise.all(['x', 'y', 'z'].map((id) => serverOf('modern', id)));
    const { local, hold, flush, tabs: all } = tabs(3);
    hold();
    all.forEach((tab, i) => {
      const id = ['x', 'y', 'z'][i] as string;
      tab.manager.add({ id, name: id, url: servers[i]?.url as string });
    });
    flush();
    await settledOn(local, all, ['x', 'y', 'z']);
  });

  it("B built on A's change and C's list wins over B's: A's change is kept too", async () => {
    const { x, y, z } = await modern('x', 'y', 'z');
    const { local, hold, flush, channels, tabs: all } = tabs(3);
    const [a, b, c] = all as [Tab, Tab, Tab];
    const [heldA, heldB, heldC] = channels as [Held, Held, Held];
    hold();
    for (const held of channels) held.hold();

    // A adds x; only B hears of it, and adds y on that list.
    a.manager.add({ id: 'x', name: 'X', url: x.url });
    await eventually(() => expect(heldB.queued()).toBe(1));
    heldB.release();
    expect(ids(b)).toEqual(['x']);
    heldB.hold();
    b.manager.add({ id: 'y', name: 'Y', url: y.url });
    await eventually(() => expect(heldA.queued()).toBe(1));
    // C, which heard neither, changes the list three times: its list is the newest.
    c.manager.add({ id: 'z', name: 'Z', url: z.url });
    c.manager.update('z', { name: 'Zed' });
    c.manager.update('z', { name: 'Zee' });
    await eventually(() => expect([heldA, heldB, heldC].map((h) => h.queued())).toEqual([4, 3, 2]));

    flush();
    for (const held of channels) held.release();
    await settledOn(local, all, ['x', 'y', 'z']);
    for (const tab of all) expect(entry(tab, 'z')?.name).toBe('Zee');
  });
});

describe('a change put back, then removed by the tab that made it', () => {
  it('a tab that held it, then a list without it, does not put it back after its removal', async () => {
    const { p, q, x, c } = await modern('p', 'q', 'x', 'c');
    const { local, hold, flush, channels, tabs: all } = tabs(3);
    const [t0, t1, t2] = all as [Tab, Tab, Tab];
    const writer = () => readServers(local.getItem(LIST)).writer;
    t0.manager.add({ id: 'p', name: 'P', url: p.url });
    for (const tab of all) await eventually(() => expect(ids(tab)).toEqual(['p']));
    const w0 = writer();
    t1.manager.add({ id: 'q', name: 'Q', url: q.url });
    for (const tab of all) await eventually(() => expect(ids(tab)).toEqual(['p', 'q']));
    // B's lists win over A's of the same rev.
    const [a, b] = writer() > w0 ? [t0, t1] : [t1, t0];
    const [heldA, heldB, heldC] = (
      a === t0 ? channels : [channels[1], channels[0], channels[2]]
    ) as [Held, Held, Held];
    hold();
    for (const held of channels) held.hold();

    // A adds x, which only B hears of; C, which has not, changes the list twice (the newer list).
    a.manager.add({ id: 'x', name: 'X', url: x.url });
    await eventually(() => expect(heldB.queued()).toBe(1));
    heldB.release();
    expect(ids(b)).toEqual(['p', 'q', 'x']);
    heldB.hold();
    t2.manager.add({ id: 'c', name: 'C', url: c.url });
    t2.manager.update('c', { name: 'Sea' });
    await eventually(() => expect([heldA.queued(), heldB.queued()]).toEqual([2, 2]));
    // A hears C's list and puts x again on it; then the user removes x there.
    heldA.release();
    expect(ids(a)).toEqual(['c', 'p', 'q', 'x']);
    heldA.hold();
    await a.manager.remove('x');
    // B hears C's list, then A's (the last, its removal).
    await eventually(() => expect(heldB.queued() > 2 && heldB.lastIds()).toEqual(['p', 'q', 'c']));
    flush();
    for (const held of [heldB, heldA, heldC]) held.release();

    await settledOn(local, all, ['c', 'p', 'q']);
  });
});

describe('a list at the last safe rev', () => {
  it('two tabs changing it do not write it back and forth, and settle on one list', async () => {
    const { one, two, three } = await modern('one', 'two', 'three');
    const events = new EventTarget();
    vi.stubGlobal('addEventListener', events.addEventListener.bind(events));
    vi.stubGlobal('removeEventListener', events.removeEventListener.bind(events));
    const committed = memoryStorage();
    committed.setItem(
      LIST,
      JSON.stringify({ rev: Number.MAX_SAFE_INTEGER, writer: '', servers: [], chain: [] }),
    );
    // Each tab's view of one browser's storage: a write lands at once, and the other views hear
    // of it (a `storage` event) on a microtask. Past 100 writes the storage refuses.
    let writes = 0;
    const views: KeyValueStorage[] = [];
    const writers = new Map<KeyValueStorage, string>(); // the writer of each view's writes
    const view = (): KeyValueStorage => {
      const made: KeyValueStorage = {
        getItem: (key) => committed.getItem(key),
        setItem: (key, value) => {
          if (key === LIST && ++writes > 100) throw new Error('QuotaExceededError');
          if (key === LIST) writers.set(made, readServers(value).writer);
          committed.setItem(key, value);
          if (key !== LIST) return;
          for (const other of views) {
            if (other === made) continue;
            queueMicrotask(() =>
              events.dispatchEvent(
                Object.assign(new Event('storage'), { key, newValue: value, storageArea: other }),
              ),
            );
          }
        },
        removeItem: (key) => committed.removeItem(key),
      };
      views.push(made);
      return made;
    };
    const tab = () => {
      const channels = tabChannels();
      atEnd(() => channels.closeAll());
      const storage = view();
      return { ...openManager({ storage, channel: channels.open }), storage };
    };
    const [a, b] = [tab(), tab()];

    // There the writer alone orders two lists: a change of the tab whose writer is the lesser
    // is not newer than the other's list, which the other tab writes back over it.
    a.manager.add({ id: 'one', name: 'One', url: one.url });
    await eventually(() => expect(ids(b)).toEqual(['one']));
    b.manager.add({ id: 'two', name: 'Two', url: two.url });
    await eventually(() => expect(ids(a)).toEqual(ids(b)));
    const lesser = (writers.get(a.storage) ?? '') < (writers.get(b.storage) ?? '') ? a : b;
    lesser.manager.add({ id: 'three', name: 'Three', url: three.url });
    await eventually(() => expect(ids(a)).toEqual(ids(b)));
    await eventually(() => expect(storedIds(committed)).toEqual(ids(a)));
    expect(writes).toBeLessThan(20);
  });
});

describe('a hostile message on the channel', () => {
  it.each([
    ['writers of another history', ['q', 'q', 'q', 'q']],
    ['the empty writer', ['', '', '', '']],
    ['holes and objects', [null, {}, 42, 'q']],
    ['a huge one', Array.from({ length: 10_000 }, () => 'q'.repeat(100))],
  ])(
    'its chain (%s) brings back no server a tab removed, and crashes nothing',
    async (_, chain) => {
      const [x, y] = await Promise.all([serverOf('modern', 'x'), serverOf('modern', 'y')]);
      const { local, tabs: all } = tabs(2);
      const [a, b] = all as [Tab, Tab];
      a.manager.add({ id: 'x', name: 'X', url: x.url });
      await eventually(() => expect(ids(b)).toEqual(['x']));
      await b.manager.remove('x');
      b.manager.add({ id: 'y', name: 'Y', url: y.url });
      await settledOn(local, all, ['y']);

      const { rev, servers } = readServers(local.getItem(LIST));
      const hostile = new BroadcastChannel(`mcp-react-query:servers-changed|${LIST}`);
      atEnd(() => hostile.close());
      hostile.postMessage({
        type: 'mcp-react-query:servers-changed',
        rev: rev + 1,
        writer: 'zzzzzzzzzzzzzzzz',
        servers: servers.filter((server) => server.id !== 'y'),
        chain,
      });
      await eventually(() => expect(readServers(local.getItem(LIST)).rev).toBeGreaterThan(rev));
      for (const tab of all) await eventually(() => expect(ids(tab)).not.toContain('x'));
      await eventually(() => expect(storedIds(local)).not.toContain('x'));
      // Still working: a change goes through.
      a.manager.add({ id: 'x', name: 'X', url: x.url });
      for (const tab of all) await eventually(() => expect(ids(tab)).toContain('x'));
    },
  );
});

/** What a tab posts on the list's channel (`ConfigStore`), as another version or a script would. */
function post(message: object) {
  const channel = new BroadcastChannel(`mcp-react-query:servers-changed|${LIST}`);
  atEnd(() => channel.close());
  channel.postMessage({ type: 'mcp-react-query:servers-changed', ...message });
}

describe('a tab of an older version (its lists have no chain)', () => {
  it('its list of the same rev as this tab’s change, without it: the change goes on it', async () => {
    const { x, y } = await modern('x', 'y');
    const { local, tabs: all } = tabs(1);
    const [a] = all as [Tab];
    a.manager.add({ id: 'x', name: 'X', url: x.url });
    const { rev } = readServers(local.getItem(LIST));
    post({ rev, writer: 'zzzzzzzzzzzzzzzz', servers: [{ id: 'y', name: 'Y', url: y.url }] });
    await settledOn(local, all, ['x', 'y']);
  });

  it('its list written after this tab’s change, without the server it added: nothing comes back', async () => {
    const { x } = await modern('x');
    const { local, tabs: all } = tabs(1);
    const [a] = all as [Tab];
    a.manager.add({ id: 'x', name: 'X', url: x.url });
    const { rev } = readServers(local.getItem(LIST));
    post({ rev: rev + 1, writer: 'old', servers: [] });
    await eventually(() => expect(readServers(local.getItem(LIST)).rev).toBe(rev + 1));
    expect(ids(a)).toEqual([]);
    expect(storedIds(local)).toEqual([]);
  });
});

describe('a tab whose manager is hidden (stopped, not disposed)', () => {
  it('its change crossing another tab’s is kept once it is shown again', async () => {
    const { p, x, y } = await modern('p', 'x', 'y');
    const { local, views, hold, flush, tabs: all } = tabs(1);
    const [b] = all as [Tab];
    b.manager.add({ id: 'p', name: 'P', url: p.url });
    const view = crossing(local);
    view.flush();
    views.unshift(view); // held and flushed with B's, landing first
    const queryClient = new QueryClient();
    const hidden = new McpServerManager({
      queryClient,
      storage: view.storage,
      channel: heldChannels().open,
      reconnect: FAST,
      lingerMs: 10,
      requestTimeoutMs: 3000,
    });
    atEnd(async () => {
      await hidden.dispose();
      queryClient.clear();
    });
    hidden.mount()();
    await eventually(() => {
      for (const sync of hidden.getSyncs().values()) expect(sync.getState().status).toBe('closed');
    });
    expect(hidden.getServers().map((server) => server.id)).toEqual(['p']);

    // A handler the hidden tree kept adds x; the mounted tab, which has not heard, adds y.
    hold();
    expect(hidden.add({ id: 'x', name: 'X', url: x.url }).ok).toBe(true);
    b.manager.add({ id: 'y', name: 'Y', url: y.url });
    b.manager.update('y', { name: 'Why' });
    flush();

    // Shown again: it reads the list, puts its change on it, and every tab has all three.
    const release = hidden.mount();
    atEnd(release);
    const shown = { manager: hidden, queryClient, close: async () => {} } as Tab;
    await settledOn(local, [b, shown], ['p', 'x', 'y']);
  });
});

describe('a list that another tab built on this tab’s first write of a change', () => {
  it('a server put again on another list, then removed by a tab that held its first write, stays removed', async () => {
    const { p, q, r, x, y } = await modern('p', 'q', 'r', 'x', 'y');
    const { local, hold, flush, channels, tabs: all } = tabs(3);
    // Each tab writes once, so the test knows which writer each drew.
    const writers = new Map<Tab, string>();
    for (const [i, server] of [p, q, r].entries()) {
      const tab = all[i] as Tab;
      const id = ['p', 'q', 'r'][i] as string;
      tab.manager.add({ id, name: id, url: server.url });
      for (const other of all) await eventually(() => expect(ids(other)).toContain(id));
      writers.set(tab, readServers(local.getItem(LIST)).writer);
    }
    // P's lists lose to Q's and R's of the same rev.
    const order = [...all].sort((a, b) =>
      (writers.get(a) ?? '') < (writers.get(b) ?? '') ? -1 : 1,
    );
    const [tabP, tabQ, tabR] = order as [Tab, Tab, Tab];
    const heldOf = (tab: Tab) => channels[all.indexOf(tab)] as Held;
    const [heldP, heldR] = [heldOf(tabP), heldOf(tabR)];
    hold();
    for (const held of channels) held.hold();

    // P adds x; R alone hears it.
    tabP.manager.add({ id: 'x', name: 'X', url: x.url });
    await eventually(() => expect(heldR.queued()).toBe(1));
    heldR.release();
    expect(ids(tabR)).toContain('x');
    heldR.hold();
    // Q, which has not heard, adds y; P hears it and puts x again on Q's list.
    tabQ.manager.add({ id: 'y', name: 'Y', url: y.url });
    await eventually(() => expect(heldP.queued()).toBe(1));
    heldP.release();
    expect(ids(tabP)).toEqual(['p', 'q', 'r', 'x', 'y']);
    heldP.hold();
    // R removes x, knowing of P's add (its list beats P's second one); P hears it.
    void tabR.manager.remove('x');
    await eventually(() => expect(heldP.queued()).toBe(1));
    heldP.release();

    flush();
    for (const held of channels) held.release();
    await settledOn(local, all, ['p', 'q', 'r', 'y']);
  });
});

describe('a server one tab added and another edited, both lists losing to a third tab’s', () => {
  it('the server stays, as edited', async () => {
    const { x, z } = await modern('x', 'z');
    const { local, hold, flush, channels, tabs: all } = tabs(3);
    const [a, b, c] = all as [Tab, Tab, Tab];
    const [heldA, heldB] = channels as [Held, Held, Held];
    hold();
    for (const held of channels) held.hold();

    // A adds x; B alone hears of it and renames it.
    a.manager.add({ id: 'x', name: 'X', url: x.url });
    await eventually(() => expect(heldB.queued()).toBe(1));
    heldB.release();
    heldB.hold();
    b.manager.update('x', { name: 'Ex' });
    // C, which heard neither, changes the list three times: its list is the newest.
    c.manager.add({ id: 'z', name: 'Z', url: z.url });
    c.manager.update('z', { name: 'Zed' });
    c.manager.update('z', { name: 'Zee' });
    await eventually(() => expect([heldA.queued(), heldB.queued()]).toEqual([4, 3]));

    heldA.release(); // B's rename, then C's lists
    flush();
    for (const held of channels) held.release();
    await settledOn(local, all, ['x', 'z']);
    for (const tab of all) await eventually(() => expect(entry(tab, 'x')?.name).toBe('Ex'));
  });
});
