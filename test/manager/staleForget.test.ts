/**
 * A server learns it signs in from its first 401 (`auth: 'oauth'` stored in the list). A tab
 * whose view of the list missed that change, and that removes the server, still forgets its
 * sign-in: what is stored under the add's key goes (the refresh token revoked), whatever this
 * tab believes about how the server signs in. With tokens in a storage the tabs share, nobody
 * else ever would: the sweep at mount runs only for a tab's own token storage. Real protected
 * server behind the demo authorization server; the user's browser played headlessly
 * (test/support/serverSignIn.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type KeyValueStorage, memoryStorage } from '../../src/auth';
import { authServer, closeAll, serverOf } from '../support/manager';
import {
  addedAndSignedIn,
  entry,
  sharedTokensTab,
  signInOf,
  userBrowser,
} from '../support/serverSignIn';
import { eventually } from '../support/wait';

afterEach(closeAll);

const LIST = 'mcp-react-query:servers';

/** `shared`, every list written to it noted in `lists`. */
function recording(shared: KeyValueStorage, lists: string[]): KeyValueStorage {
  return {
    getItem: (key) => shared.getItem(key),
    setItem: (key, value) => {
      if (key === LIST) lists.push(value);
      shared.setItem(key, value);
    },
    removeItem: (key) => shared.removeItem(key),
  };
}

/** A view of `shared` showing the list as `text` until this view writes it (another process). */
function showing(shared: KeyValueStorage, text: string): KeyValueStorage {
  let stale: string | undefined = text;
  return {
    getItem: (key) => (key === LIST && stale !== undefined ? stale : shared.getItem(key)),
    setItem: (key, value) => {
      if (key === LIST) stale = undefined;
      shared.setItem(key, value);
    },
    removeItem: (key) => shared.removeItem(key),
  };
}

const refreshTokenIn = (text: string | null) => /"refresh_token":"([^"]+)"/.exec(text ?? '')?.[1];

describe('a tab whose list missed that the server signs in removes it', () => {
  it("tokens shared by the tabs: the removed server's tokens go and its refresh token is revoked", async () => {
    const auth = await authServer();
    const server = await serverOf('modern', 'mail', { authServer: auth });
    const local = memoryStorage(); // localStorage: the list and the tokens
    const lists: string[] = [];
    const browser = userBrowser();
    const a = sharedTokensTab(recording(local, lists), local, browser.navigate);
    const key = await addedAndSignedIn(a, { id: 'mail', url: server.url }, local, browser);
    const refresh = refreshTokenIn(local.getItem(key));
    expect(refresh).toBeDefined();
    // The list as A first wrote it (the add, before its 401 taught it `auth: 'oauth'`).
    const added = lists[0] as string;
    expect(added).toContain('"mail"');
    expect(added).not.toContain('"auth"');
    expect(local.getItem(LIST)).toContain('"auth":"oauth"');
    await a.close(); // tab A goes to a page without <McpServersProvider>

    // Tab B's view of the list is older: the server, not that it signs in. The user removes it.
    const b = sharedTokensTab(showing(local, added), local);
    expect(entry(b, 'mail')).toBeDefined();
    expect(entry(b, 'mail')?.signIn).not.toBe('signed-in');
    expect(await b.manager.remove('mail')).toBe(true);

    await eventually(() => expect(auth.stats().revokedTokens).toEqual([refresh]));
    expect(local.getItem(key) ?? '').not.toMatch(/"(access_token|refresh_token|identity)":/);
  });

  it('a server that never signed in: forgetting it makes no provider and asks nothing of the network', async () => {
    const writes: string[] = [];
    const tokens = memoryStorage();
    const watched: KeyValueStorage = {
      getItem: (key) => tokens.getItem(key),
      setItem: (key, value) => {
        writes.push(key);
        tokens.setItem(key, value);
      },
      removeItem: (key) => tokens.removeItem(key),
    };
    const fetched = vi.fn(fetch);
    vi.stubGlobal('fetch', fetched);
    try {
      const signIn = signInOf(watched);
      const server = { id: 'mail', url: 'http://127.0.0.1:9/mcp', nonce: 'n1' };
      await signIn.forget(server);
      const signsIn = { ...server, auth: 'oauth' as const }; // as a list knowing it says
      await signIn.forget(signsIn);
      expect(writes).toEqual([]);
      expect(fetched).not.toHaveBeenCalled();
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
