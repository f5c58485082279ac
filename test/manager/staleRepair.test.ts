/**
 * A tab that hears another's change writes the list it holds over an older stored one
 * (ConfigStore#repair), but it compares against its own view of the storage, which in a browser
 * that keeps tabs in several processes (Chrome's localStorage) shows another process's write
 * only later: it can write over a newer list it cannot see yet. If it then closes before
 * hearing of that list, nobody else hears anything more and the storage keeps the older list: a
 * tab opened later reads a list the open tabs left behind. Every write to the storage reaches the
 * other tabs as a `storage` event once it landed: a tab holding a newer list writes it back.
 * Real servers; Node's BroadcastChannel between the tabs; the storage events of one browser
 * played by `browserStorage()`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KeyValueStorage } from '../../src/auth';
import { readServers } from '../../src/servers/configStore';
import { browserStorage } from '../support/browserStorage';
import { LIST } from '../support/crossing';
import { atEnd, closeAll, openManager, serverOf } from '../support/manager';
import { entry } from '../support/serverSignIn';
import { tabChannels } from '../support/tabs';
import { eventually } from '../support/wait';

afterEach(async () => {
  await closeAll();
  vi.unstubAllGlobals();
});

function tab(storage: KeyValueStorage) {
  const channels = tabChannels();
  atEnd(() => channels.closeAll());
  return { ...openManager({ storage, channel: channels.open }), channels };
}

const ids = (text: string | null) => readServers(text).servers.map((server) => server.id);

describe('the stored list after a tab wrote an older one over it', () => {
  it('a tab that saw a newer list only late wrote the older one over it and closed: the open tabs write the newer one back', async () => {
    const [one, two] = await Promise.all([serverOf('modern', 'one'), serverOf('legacy-v2', 'two')]);
    const browser = browserStorage();
    const viewA = browser.view({ keepsUp: false }); // another process: sees the others late
    const a = tab(viewA.storage);
    const b = tab(browser.view({ keepsUp: true }).storage);
    const c = tab(browser.view({ keepsUp: true }).storage);

    // B adds a server; A hears of it before its view shows B's write, and writes B's list.
    b.manager.add({ id: 'one', name: 'One', url: one.url });
    await eventually(() => expect(entry(a, 'one')).toBeDefined());
    await eventually(() => expect(entry(c, 'one')).toBeDefined());

    // C adds another, which A does not hear of yet.
    a.channels.deafen();
    c.manager.add({ id: 'two', name: 'Two', url: two.url });
    await eventually(() => expect(entry(b, 'two')).toBeDefined());
    expect(ids(browser.committed.getItem(LIST))).toEqual(['one', 'two']);

    // A's write lands after C's, and A's page goes away.
    viewA.land();
    expect(ids(browser.committed.getItem(LIST))).toEqual(['one']);
    viewA.close();
    await a.close();

    // The storage keeps what the open tabs settled on, and a tab opened now reads it.
    await eventually(() => expect(ids(browser.committed.getItem(LIST))).toEqual(['one', 'two']));
    const d = tab(browser.committed);
    for (const id of ['one', 'two']) {
      await eventually(() => expect(entry(d, id)?.status).toBe('ready'));
    }
    for (const open of [b, c])
      expect(open.manager.getServers().map((s) => s.id)).toEqual(['one', 'two']);
  });
});

describe('a stored rev at the top of the safe integers', () => {
  it('a change there does not set the tabs writing the list back and forth', async () => {
    const one = await serverOf('modern', 'one');
    const browser = browserStorage();
    // Whatever wrote it (a script on the origin, a storage gone wrong): the list's rev is the last
    // safe integer. Every tab reads it as the newest list.
    browser.committed.setItem(
      LIST,
      JSON.stringify({ rev: Number.MAX_SAFE_INTEGER, writer: '', servers: [] }),
    );
    // The tabs' writes of the list, counted; past 100 the storage refuses (a loop stops there).
    let writes = 0;
    const counted = (storage: KeyValueStorage): KeyValueStorage => {
      const { setItem } = storage;
      storage.setItem = (key, value) => {
        if (key === LIST && ++writes > 100) throw new Error('QuotaExceededError');
        setItem(key, value);
      };
      return storage;
    };
    const a = tab(counted(browser.view({ keepsUp: true }).storage));
    const b = tab(counted(browser.view({ keepsUp: true }).storage));

    a.manager.add({ id: 'one', name: 'One', url: one.url });
    await eventually(() => expect(entry(a, 'one')?.status).toBe('ready'));
    expect(writes).toBeLessThan(10);
    await eventually(() => expect(entry(b, 'one')?.status).toBe('ready'));
    expect(ids(browser.committed.getItem(LIST))).toEqual(['one']);
    expect(writes).toBeLessThan(10);
  });
});
