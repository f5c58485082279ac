/**
 * Lists kept in memory (`storage: null`, or no localStorage where the page runs) are each
 * manager's own: a second manager on the same `storageKey` starts empty, and hears the first one's
 * changes only from then on. With tokens in the tab's own storage (sessionStorage: the default,
 * `tokensPerTab`), its list is no proof that a sign-in another manager of the page made is unused:
 * the second manager mounting, or adding the same server, must not sign the first one's user out
 * or revoke the refresh token. Real protected server behind the demo authorization server; Node's
 * BroadcastChannel within the page; the user's browser played headlessly.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/auth';
import { atEnd, authServer, closeAll, openManager, serverOf } from '../support/manager';
import { addedAndSignedIn, entry, signInOf, userBrowser } from '../support/serverSignIn';
import { tabChannels } from '../support/tabs';
import { eventually } from '../support/wait';

afterEach(closeAll);

const SIGNED_IN = { status: 'ready', signIn: 'signed-in' };

describe('two managers of one page on one storageKey, lists in memory, tokens in the tab’s storage', () => {
  it.each([
    ['mounts', false],
    ['mounts and adds the same server', true],
  ])(
    "the second %s: the first one's sign-in stays (not signed out, refresh token not revoked)",
    async (_, adds) => {
      const auth = await authServer();
      const server = await serverOf('modern', 'mail', { authServer: auth });
      const session = memoryStorage(); // the tab's sessionStorage
      const browser = userBrowser();
      const channels = tabChannels(); // one page: its BroadcastChannels reach each other
      atEnd(() => channels.closeAll());
      const page = (navigate?: (url: URL) => Promise<void>) =>
        openManager({
          storage: null,
          channel: channels.open,
          signIn: signInOf(session, navigate, true),
        });

      const first = page(browser.navigate);
      const key = await addedAndSignedIn(first, { id: 'mail', url: server.url }, session, browser);

      // Another part of the page (a widget, another root) mounts its own manager.
      const second = page();
      expect(entry(second, 'mail')).toBeUndefined();
      if (adds) {
        // Signing in known (no 401 to learn it from): its list stays older than the first's.
        const input = { id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' as const };
        expect(second.manager.add(input).ok).toBe(true);
        await eventually(() => expect(entry(second, 'mail')?.status).toBe('unauthorized'));
      } else {
        second.manager.add({ id: 'news', name: 'News', url: 'http://127.0.0.1:9/mcp' });
        await eventually(() => expect(entry(second, 'news')?.status).toBeDefined());
      }
      expect(auth.stats().revocations).toBe(0);
      expect(session.getItem(key)).toMatch(/"refresh_token":/);
      expect(entry(first, 'mail')).toMatchObject(SIGNED_IN);
    },
  );
});
