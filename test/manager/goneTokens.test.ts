/**
 * A server removed (or removed and added again, a new nonce) while a tab had no manager mounted
 * leaves nothing of its sign-in in that tab's storage once the tab's manager mounts again: the
 * tokens of an add the list no longer has are forgotten (the refresh token revoked), not only out
 * of reach. Never another list's, never a server of the list, and a server stored before nonces
 * keeps its sign-in. Real protected servers behind the demo authorization server; the user's
 * browser is played headlessly (test/support/serverSignIn.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type KeyValueStorage, memoryStorage } from '../../src/auth';
import { authServer, closeAll, openManager, serverOf } from '../support/manager';
import {
  entry,
  serverIn,
  signedInInTabB,
  signInOf,
  tabOf,
  userBrowser,
} from '../support/serverSignIn';
import { eventually } from '../support/wait';

afterEach(closeAll);

const PREFIX = 'mcp-react-query:server-oauth';
const SIGNED_IN = { status: 'ready', signIn: 'signed-in' };
const SIGNED_OUT = { status: 'unauthorized', signIn: 'signed-out' };

/** What `storage` holds under the key of one add of a server (`ServerSignIn`'s key shape). */
const storedFor = (
  storage: KeyValueStorage,
  server: { id: string; url: string; nonce?: string | undefined },
) =>
  storage.getItem(
    `${PREFIX}:${server.id}:${server.url}${server.nonce === undefined ? '' : `#${server.nonce}`}`,
  ) ?? '';

const refreshTokenIn = (text: string) => /"refresh_token":"([^"]+)"/.exec(text)?.[1];

describe('tokens of an add the list no longer has', () => {
  it.each([
    ['removed', false],
    ['removed and added again', true],
  ])(
    "%s in another tab while this tab had no manager mounted: forgotten from this tab's storage when its manager mounts",
    async (_, addedAgain) => {
      const auth = await authServer();
      const [gone, stays] = await Promise.all([
        serverOf('modern', 'gone', { authServer: auth }),
        serverOf('legacy-v2', 'stays', { authServer: auth }),
      ]);
      const { a, b, sessionB, openB } = await signedInInTabB({ gone, stays });
      const old = serverIn(b, 'gone');
      const refresh = refreshTokenIn(storedFor(sessionB, old));
      expect(refresh).toBeDefined();
      await b.close(); // tab B goes to a page without <McpServersProvider>

      expect(await a.manager.remove('gone')).toBe(true);
      if (addedAgain) a.manager.add({ id: 'gone', name: 'gone', url: gone.url, auth: 'oauth' });
      expect(auth.stats().revocations).toBe(0); // tab A never held tab B's tokens

      // Back on the servers page in tab B: nothing of the old add stays in its sessionStorage.
      const again = openB();
      await eventually(() => expect(auth.stats().revokedTokens).toEqual([refresh]));
      expect(storedFor(sessionB, old)).not.toMatch(/"(access_token|refresh_token|identity)":/);
      if (addedAgain)
        await eventually(() => expect(entry(again, 'gone')).toMatchObject(SIGNED_OUT));
      else expect(entry(again, 'gone')).toBeUndefined();
      // The server the list still has keeps its sign-in.
      await eventually(() => expect(entry(again, 'stays')).toMatchObject(SIGNED_IN));
      expect(auth.stats().revocations).toBe(1);
    },
  );

  it('kept in this tab for a list that no longer has it (its storage lost it): forgotten at mount', async () => {
    const auth = await authServer();
    const server = await serverOf('modern', 'mail', { authServer: auth });
    const { b, sessionB } = await signedInInTabB({ mail: server });
    const old = serverIn(b, 'mail');
    const refresh = refreshTokenIn(storedFor(sessionB, old));
    await b.close();
    // The list's storage lost it (cleared, say): tab B's page mounts a manager on an empty list.
    const tab = tabOf(memoryStorage(), sessionB);
    expect(tab.manager.getServers()).toEqual([]);
    await eventually(() => expect(auth.stats().revokedTokens).toEqual([refresh]));
    expect(storedFor(sessionB, old)).not.toMatch(/"(access_token|refresh_token|identity)":/);
  });

  it("another list's server, on the same sign-in, keeps its tokens", async () => {
    const auth = await authServer();
    const server = await serverOf('modern', 'mail', { authServer: auth });
    const storage = memoryStorage();
    const browser = userBrowser();
    const work = openManager({
      storage,
      storageKey: 'work',
      signIn: signInOf(storage, browser.navigate),
    });
    work.manager.add({ id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' });
    await eventually(() => expect(entry(work, 'mail')).toMatchObject(SIGNED_OUT));
    entry(work, 'mail')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(1));
    await signInOf(storage).complete(browser.callbacks[0] as URL);
    await eventually(() => expect(entry(work, 'mail')).toMatchObject(SIGNED_IN));
    await work.close();

    // Another route: the home list, without that server, mounts and changes.
    const home = openManager({ storage, storageKey: 'home', signIn: signInOf(storage) });
    home.manager.add({ id: 'news', name: 'News', url: 'http://127.0.0.1:9/mcp' });
    expect(await home.manager.remove('news')).toBe(true);
    await home.close();
    const workAgain = openManager({ storage, storageKey: 'work', signIn: signInOf(storage) });
    await eventually(() => expect(entry(workAgain, 'mail')).toMatchObject(SIGNED_IN));
    expect(auth.stats().revocations).toBe(0);
  });

  it('a server stored before nonces stays signed in, its tokens under the key they had', async () => {
    const auth = await authServer();
    const server = await serverOf('modern', 'old', { authServer: auth });
    const [local, session] = [memoryStorage(), memoryStorage()];
    const browser = userBrowser();
    const key = { id: 'old', url: server.url };
    const provider = signInOf(session, browser.navigate).providerFor(
      key,
      'mcp-react-query:servers',
    );
    await provider.authorize();
    await signInOf(session).complete(browser.callbacks[0] as URL);
    const old = { id: 'old', name: 'Old', url: server.url, auth: 'oauth' };
    local.setItem(
      'mcp-react-query:servers',
      JSON.stringify({ rev: 1, writer: 'w', servers: [old] }),
    );

    const tab = tabOf(local, session);
    await eventually(() => expect(entry(tab, 'old')).toMatchObject(SIGNED_IN));
    tab.manager.add({ id: 'other', name: 'Other', url: 'http://127.0.0.1:9/mcp' });
    await eventually(() => expect(entry(tab, 'other')?.status).toBeDefined());
    expect(entry(tab, 'old')).toMatchObject(SIGNED_IN);
    expect(storedFor(session, key)).toMatch(/"refresh_token":/);
    expect(auth.stats().revocations).toBe(0);
  });

  it("another list's server stored before nonces, on the same sign-in, keeps its tokens when this list adds the same id and URL", async () => {
    const auth = await authServer();
    const server = await serverOf('modern', 'mail', { authServer: auth });
    const storage = memoryStorage();
    const browser = userBrowser();
    const key = { id: 'mail', url: server.url };
    const provider = signInOf(storage, browser.navigate).providerFor(key, 'work');
    await provider.authorize();
    await signInOf(storage).complete(browser.callbacks[0] as URL);
    const mail = { id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' };
    storage.setItem('work', JSON.stringify({ rev: 1, writer: 'w', servers: [mail] }));

    const home = openManager({ storage, storageKey: 'home', signIn: signInOf(storage) });
    home.manager.add({ id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' });
    await eventually(() => expect(entry(home, 'mail')).toMatchObject(SIGNED_OUT));
    await home.close();
    const work = openManager({ storage, storageKey: 'work', signIn: signInOf(storage) });
    await eventually(() => expect(entry(work, 'mail')).toMatchObject(SIGNED_IN));
    expect(storedFor(storage, key)).toMatch(/"refresh_token":/);
    expect(auth.stats().revocations).toBe(0);
  });
});
