/**
 * Tokens in a storage every tab shares (localStorage, or a storage of the app's own), while a
 * tab's list may differ from another's: kept in each page's memory (`storage: null`), or in a
 * storage this tab sees another tab's writes in only later. A sign-in finished in tab A is live:
 * tab B's manager mounting (its list without A's server) must not sign it out or revoke its
 * refresh token at the authorization server, which would sign the user out in every tab. Real
 * protected server behind the demo authorization server; Node's BroadcastChannel between the
 * tabs; the user's browser played headlessly (test/support/serverSignIn.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type KeyValueStorage, memoryStorage } from '../../src/auth';
import { authServer, closeAll, serverOf } from '../support/manager';
import {
  addedAndSignedIn,
  entry,
  serverIn,
  sharedTokensTab,
  userBrowser,
} from '../support/serverSignIn';
import { eventually } from '../support/wait';

afterEach(closeAll);

const LIST = 'mcp-react-query:servers';
const SIGNED_IN = { status: 'ready', signIn: 'signed-in' };

/** A view of `shared` that shows the list as it was when made, until `catchUp()`. */
function lagging(shared: KeyValueStorage) {
  let stale: { text: string | null } | undefined = { text: shared.getItem(LIST) };
  const storage: KeyValueStorage = {
    getItem: (key) => (key === LIST && stale ? stale.text : shared.getItem(key)),
    setItem: (key, value) => {
      if (key === LIST) stale = undefined;
      shared.setItem(key, value);
    },
    removeItem: (key) => shared.removeItem(key),
  };
  return {
    storage,
    catchUp: () => {
      stale = undefined;
    },
  };
}

describe('tokens shared by the tabs, lists that differ', () => {
  it.each([
    ['kept in each page’s memory (storage: null)', 'memory'],
    ['in a storage tab B sees late', 'lagging'],
  ] as const)(
    "the list %s: tab B's manager mounting leaves tab A's sign-in alone (not signed out, refresh token not revoked)",
    async (_, how) => {
      const auth = await authServer();
      const server = await serverOf('modern', 'mail', { authServer: auth });
      const local = memoryStorage(); // localStorage: the tokens, and (lagging) the list
      const browser = userBrowser();
      const viewB = lagging(local);
      const a = sharedTokensTab(how === 'memory' ? null : local, local, browser.navigate);
      const key = await addedAndSignedIn(a, { id: 'mail', url: server.url }, local, browser);
      const { nonce } = serverIn(a, 'mail');
      expect(local.getItem(key)).toMatch(/"refresh_token":/);

      // Tab B opens the servers page: its list does not have A's server (yet).
      const b = sharedTokensTab(how === 'memory' ? null : viewB.storage, local);
      expect(entry(b, 'mail')).toBeUndefined();
      expect(local.getItem(key)).toMatch(/"refresh_token":/);
      if (how === 'lagging') {
        viewB.catchUp();
        b.manager.add({ id: 'news', name: 'News', url: 'http://127.0.0.1:9/mcp' });
        await eventually(() => expect(entry(b, 'mail')).toMatchObject({ nonce, ...SIGNED_IN }));
      } else {
        // B's own change reaches A (the tabs still hear each other) only as B's list.
        b.manager.add({ id: 'news', name: 'News', url: 'http://127.0.0.1:9/mcp' });
        await eventually(() => expect(entry(b, 'news')?.status).toBeDefined());
      }
      expect(local.getItem(key)).toMatch(/"refresh_token":/);
      expect(auth.stats().revocations).toBe(0);
      expect(entry(a, 'mail')).toMatchObject(SIGNED_IN);
    },
  );
});

describe('tokens shared by the tabs, lists in each page’s memory', () => {
  it("tab B adds the server its list does not have: tab A's sign-in of it stays (refresh token not revoked)", async () => {
    const auth = await authServer();
    const server = await serverOf('modern', 'mail', { authServer: auth });
    const local = memoryStorage(); // localStorage: the tokens
    const browser = userBrowser();
    const a = sharedTokensTab(null, local, browser.navigate);
    const key = await addedAndSignedIn(a, { id: 'mail', url: server.url }, local, browser);

    // Tab B's list (its page's memory) does not have it: the user adds the same server there.
    const b = sharedTokensTab(null, local);
    expect(entry(b, 'mail')).toBeUndefined();
    // Signing in known (no 401 to learn it from): B's list stays older than A's.
    const input = { id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' as const };
    expect(b.manager.add(input).ok).toBe(true);
    await eventually(() => expect(entry(b, 'mail')?.status).toBe('unauthorized'));
    expect(local.getItem(key)).toMatch(/"refresh_token":/);
    expect(auth.stats().revocations).toBe(0);
    expect(entry(a, 'mail')).toMatchObject(SIGNED_IN);
  });
});
