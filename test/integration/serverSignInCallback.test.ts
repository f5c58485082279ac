/** @vitest-environment jsdom */
/**
 * The callback page of the server manager (`ServerSignIn.complete()`, issue 19): the code and
 * `state` leave the address bar whatever happens, as `completeAuthorization` guarantees for one
 * provider (SECURITY.md), including a callback no sign-in here is waiting for any more (its
 * server was removed while the user was at the authorization server). Real servers behind the
 * demo authorization server; the address bar and history are jsdom's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/auth';
import { ResourceStore, startServer } from '../servers';
import { text } from '../support/eras';
import { atEnd, authServer, closeAll, openManager } from '../support/manager';
import { entry, signInOf, userBrowser } from '../support/serverSignIn';
import { eventually } from '../support/wait';

afterEach(async () => {
  history.replaceState(null, '', '/');
  await closeAll();
});

describe('the server sign-in callback page', () => {
  it('a callback of a server removed meanwhile is refused, and its code and state leave the address bar', async () => {
    const auth = await authServer();
    const store = new ResourceStore([text('secret://inbox', 'inbox')]);
    const server = await startServer('modern', { store, auth: { authServer: auth } });
    atEnd(() => server.close());
    const storage = memoryStorage();
    const browser = userBrowser();
    const tab = openManager({ storage, signIn: signInOf(storage, browser.navigate) });
    tab.manager.add({ id: 'g', name: 'G', url: server.url });
    await eventually(() =>
      expect(entry(tab, 'g')).toMatchObject({ status: 'unauthorized', signIn: 'signed-out' }),
    );
    entry(tab, 'g')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(1));
    // While the user is at the authorization server, the server is removed.
    expect(await tab.manager.remove('g')).toBe(true);

    // The browser arrives on the callback page.
    const callback = browser.callbacks[0] as URL;
    expect(callback.searchParams.get('code')).toBeTruthy();
    history.replaceState(null, '', `/callback${callback.search}`);
    await expect(signInOf(storage).complete()).rejects.toThrow(/unknown state/);
    expect(location.pathname).toBe('/callback');
    expect(location.search).toBe('');
    expect(auth.stats().codeExchanges).toBe(0);
  });
});
