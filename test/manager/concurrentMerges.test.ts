/**
 * Two tabs of one browser change the servers' list before either sees the other's write, and
 * the tab whose list loses puts its change on the other's (listMerge): two servers that clash
 * once both changes are put together (one URL, one name), a removal crossing an edit of the same
 * server. Every tab and the storage settle on one list; a server a tab removed never comes back.
 * Real servers; Node's BroadcastChannel between the tabs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type KeyValueStorage, memoryStorage } from '../../src/auth';
import type { ServerSignIn } from '../../src/servers';
import { readServers } from '../../src/servers/configStore';
import type { ChannelLike } from '../../src/tabs';
import { crossing, LIST } from '../support/crossing';
import { atEnd, authServer, closeAll, openManager, serverOf, type Tab } from '../support/manager';
import { addedAndSignedIn, entry, sharedTokensTab, userBrowser } from '../support/serverSignIn';
import { tabChannels } from '../support/tabs';
import { eventually } from '../support/wait';

afterEach(closeAll);

const ids = (tab: Tab) =>
  tab.manager
    .getServers()
    .map((server) => server.id)
    .sort();

const storedIds = (storage: KeyValueStorage) =>
  readServers(storage.getItem(LIST))
    .servers.map((server) => server.id)
    .sort();

/**
 * A tab's BroadcastChannels, whose messages it hears only on `release()` while `hold()` holds
 * them back (a page busy, or a message late): `queued()` counts them.
 */
function heldChannels() {
  const channels = tabChannels();
  atEnd(() => channels.closeAll());
  let held = false;
  const queue: Array<() => void> = [];
  return {
    open(name: string): ChannelLike {
      const channel = channels.open(name);
      return {
        postMessage: (message) => channel.postMessage(message),
        addEventListener: (type, listener) =>
          channel.addEventListener(type, (event) => {
            if (held) queue.push(() => listener(event));
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
      for (const deliver of queue.splice(0)) deliver();
    },
    queued: () => queue.length,
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
