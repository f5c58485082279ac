/**
 * Two tabs of one browser change the servers' list before either sees the other's write (a
 * localStorage shared between processes shows another's write later). Both changes are kept:
 * the tab whose list every tab drops puts its own change again on the one they keep, without
 * ever letting its server go meanwhile. A change the other tab made knowing of this one (a
 * removal of the server just added) stands. Real servers; Node's BroadcastChannel between the
 * tabs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/auth';
import { readServers } from '../../src/servers/configStore';
import { crossing, LIST } from '../support/crossing';
import { closeAll, openManager, serverOf, type Tab, wire } from '../support/manager';
import { entry } from '../support/serverSignIn';
import { tabChannels } from '../support/tabs';
import { eventually } from '../support/wait';

afterEach(closeAll);

const ids = (tab: Tab) =>
  tab.manager
    .getServers()
    .map((server) => server.id)
    .sort();

/** Two tabs on one list, whose writes land only on `flush()`; one channel between them. */
function twoTabs() {
  const local = memoryStorage();
  const channels = tabChannels();
  const views = [crossing(local), crossing(local)] as const;
  const counted = wire();
  const [a, b] = views.map((view) =>
    openManager({ storage: view.storage, channel: channels.open, fetch: counted.fetch }),
  ) as [Tab, Tab];
  return { local, channels, views, counted, a, b };
}

describe('two tabs change the list at the same moment', () => {
  it('one adds a server and the other another: both tabs, and the storage, keep both, and neither server is let go meanwhile', async () => {
    const [x, y] = [await serverOf('modern', 'x'), await serverOf('modern', 'y')];
    const { local, views, counted, a, b, channels } = twoTabs();
    // Whether each tab ever showed a list without its own server after adding it.
    const lostOwn = { a: false, b: false };
    a.manager.subscribe(() => {
      lostOwn.a ||= entry(a, 'x') === undefined;
    });
    b.manager.subscribe(() => {
      lostOwn.b ||= entry(b, 'y') === undefined;
    });

    a.manager.add({ id: 'x', name: 'X', url: x.url });
    b.manager.add({ id: 'y', name: 'Y', url: y.url });
    for (const view of views) view.flush();

    for (const tab of [a, b]) await eventually(() => expect(ids(tab)).toEqual(['x', 'y']));
    await eventually(() =>
      expect(
        readServers(local.getItem(LIST))
          .servers.map((s) => s.id)
          .sort(),
      ).toEqual(['x', 'y']),
    );
    for (const tab of [a, b]) {
      await eventually(() => expect(entry(tab, 'x')?.status).toBe('ready'));
      await eventually(() => expect(entry(tab, 'y')?.status).toBe('ready'));
    }
    expect(lostOwn).toEqual({ a: false, b: false });
    // One connection per server and tab (one `server/discover` each): none was ended and made again.
    expect([counted.handshakes(x.url), counted.handshakes(y.url)]).toEqual([2, 2]);
    // A tab opened now reads both.
    const c = openManager({ storage: local, channel: channels.open });
    expect(ids(c)).toEqual(['x', 'y']);
  });

  it('a change made knowing of the other (the server just added, removed) stands: nothing comes back', async () => {
    const x = await serverOf('modern', 'x');
    const { local, views, a, b } = twoTabs();
    for (const view of views) view.flush();
    a.manager.add({ id: 'x', name: 'X', url: x.url });
    await eventually(() => expect(ids(b)).toEqual(['x']));
    await b.manager.remove('x');
    for (const tab of [a, b]) await eventually(() => expect(ids(tab)).toEqual([]));
    expect(readServers(local.getItem(LIST)).servers).toEqual([]);
  });

  it('both change the same server: every tab, and the storage, settle on one of the two changes', async () => {
    const x = await serverOf('modern', 'x');
    const { local, views, a, b } = twoTabs();
    for (const view of views) view.flush();
    a.manager.add({ id: 'x', name: 'X', url: x.url });
    await eventually(() => expect(ids(b)).toEqual(['x']));
    for (const view of views) view.hold();
    a.manager.update('x', { name: 'from A' });
    b.manager.update('x', { name: 'from B' });
    for (const view of views) view.flush();
    await eventually(() => expect(entry(a, 'x')?.name).toBe(entry(b, 'x')?.name));
    const name = entry(a, 'x')?.name;
    expect(['from A', 'from B']).toContain(name);
    await eventually(() =>
      expect(readServers(local.getItem(LIST)).servers.map((s) => s.name)).toEqual([name]),
    );
  });
});
