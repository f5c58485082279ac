/**
 * One `ServerSignIn` for two managers (two lists, each its own `storageKey`), both holding a
 * server of the same id and URL: `add()` in one forgets the sign-ins of earlier adds of it that
 * are orphans, never the other list's live one, whether that list's manager is on the page or
 * not. Real protected servers behind the demo authorization server; the user's browser is played
 * headlessly (test/support/serverSignIn.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/auth';
import { authServer, closeAll, openManager, serverOf } from '../support/manager';
import { entry, signInOf, userBrowser } from '../support/serverSignIn';
import { eventually } from '../support/wait';

afterEach(closeAll);

const SIGNED_OUT = { status: 'unauthorized', signIn: 'signed-out' };
const SIGNED_IN = { status: 'ready', signIn: 'signed-in' };

describe('ServerSignIn shared by two lists', () => {
  it('adding a server to one list never signs out the same server in the other', async () => {
    const auth = await authServer();
    const server = await serverOf('modern', 'mail', { authServer: auth });
    const storage = memoryStorage();
    const browser = userBrowser();
    const signIn = signInOf(storage, browser.navigate);
    const work = openManager({ storage, storageKey: 'work', signIn });
    work.manager.add({ id: 'mail', name: 'Mail', url: server.url });
    await eventually(() => expect(entry(work, 'mail')).toMatchObject(SIGNED_OUT));
    entry(work, 'mail')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(1));
    await signInOf(storage).complete(browser.callbacks[0] as URL);
    await eventually(() => expect(entry(work, 'mail')).toMatchObject(SIGNED_IN));

    // The same server added to another list of the page, on the same sign-in.
    const home = openManager({ storage, storageKey: 'home', signIn });
    home.manager.add({ id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' });
    expect(entry(work, 'mail')).toMatchObject(SIGNED_IN);
    await eventually(() => expect(entry(home, 'mail')).toMatchObject(SIGNED_OUT));
    expect(auth.stats().revocations).toBe(0);
    expect(entry(work, 'mail')).toMatchObject(SIGNED_IN);

    // Another route of the app: only the home list's manager, after a reload. Its next add of
    // the server forgets its own earlier add (removed, or not), never the work list's.
    expect(await home.manager.remove('mail')).toBe(true);
    expect(auth.stats().revocations).toBe(0);
    await work.close();
    await home.close();
    const reloaded = openManager({ storage, storageKey: 'home', signIn: signInOf(storage) });
    reloaded.manager.add({ id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' });
    await eventually(() => expect(entry(reloaded, 'mail')).toMatchObject(SIGNED_OUT));
    expect(auth.stats().revocations).toBe(0);

    // Back on the work route: still signed in, no 401 on the way.
    const challenged = server.protection?.stats().challenged;
    const workAgain = openManager({ storage, storageKey: 'work', signIn: signInOf(storage) });
    await eventually(() => expect(entry(workAgain, 'mail')).toMatchObject(SIGNED_IN));
    expect(server.protection?.stats().challenged).toBe(challenged);
  });

  it("an earlier add of the list's own, not in its list any more, is still forgotten", async () => {
    const auth = await authServer();
    const server = await serverOf('legacy-v2', 'mail', { authServer: auth });
    const storage = memoryStorage();
    const browser = userBrowser();
    // Signed in on a page whose manager then goes away without removing it (no revocation).
    const tab = openManager({
      storage,
      storageKey: 'home',
      signIn: signInOf(storage, browser.navigate),
    });
    tab.manager.add({ id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' });
    await eventually(() => expect(entry(tab, 'mail')).toMatchObject(SIGNED_OUT));
    entry(tab, 'mail')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(1));
    await signInOf(storage).complete(browser.callbacks[0] as URL);
    await eventually(() => expect(entry(tab, 'mail')).toMatchObject(SIGNED_IN));
    await tab.close();
    // The list loses it behind this page's back (another tab with no sign-in, say).
    const stored = JSON.parse(storage.getItem('home') ?? '{}');
    storage.setItem('home', JSON.stringify({ ...stored, rev: stored.rev + 1, servers: [] }));

    const page = openManager({ storage, storageKey: 'home', signIn: signInOf(storage) });
    page.manager.add({ id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' });
    await eventually(() => expect(auth.stats().revocations).toBe(1));
  });
});
