/** @vitest-environment jsdom */
/**
 * What a server's sign-in leaves in the page once the server is gone: its provider stops hearing
 * the storage (the window's `storage` event, and writes of the other values on its keys), so
 * nothing keeps it, or the servers added and removed before it, reachable for the page's life.
 * Real protected servers behind the demo authorization server; the user's browser is played
 * headlessly (test/support/serverSignIn.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStorage } from '../../src/auth';
import { listeningTo } from '../../src/auth/storage';
import { atEnd, authServer, closeAll, openManager, serverOf } from '../support/manager';
import { entry, serverIn, signInOf, userBrowser } from '../support/serverSignIn';
import { eventually } from '../support/wait';

afterEach(closeAll);

const SIGNED_OUT = { status: 'unauthorized', signIn: 'signed-out' };

/** The window's `storage` listeners added and not removed since this was called. */
function storageListeners(): () => number {
  const page = globalThis as unknown as Window;
  const { addEventListener, removeEventListener } = page;
  const live = new Set<unknown>();
  page.addEventListener = ((type: string, listener: unknown, ...rest: never[]) => {
    if (type === 'storage') live.add(listener);
    addEventListener.call(page, type, listener as EventListener, ...rest);
  }) as typeof page.addEventListener;
  page.removeEventListener = ((type: string, listener: unknown, ...rest: never[]) => {
    if (type === 'storage') live.delete(listener);
    removeEventListener.call(page, type, listener as EventListener, ...rest);
  }) as typeof page.removeEventListener;
  atEnd(() => {
    page.addEventListener = addEventListener;
    page.removeEventListener = removeEventListener;
  });
  return () => live.size;
}

const keyOf = (server: { id: string; url: string; nonce?: string | undefined }) =>
  `mcp-react-query:server-oauth:${server.id}:${server.url}#${server.nonce}`;

describe('ServerSignIn: a server gone lets its provider go', () => {
  it('removed, its provider hears the storage no more; adds and removes leave no listener behind', async () => {
    const auth = await authServer();
    const server = await serverOf('modern', 'mail', { authServer: auth });
    const storage = memoryStorage();
    const browser = userBrowser();
    const listeners = storageListeners();
    const signIn = signInOf(storage, browser.navigate);
    const tab = openManager({ storage, signIn });
    tab.manager.add({ id: 'mail', name: 'Mail', url: server.url });
    await eventually(() => expect(entry(tab, 'mail')).toMatchObject(SIGNED_OUT));
    entry(tab, 'mail')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(1));
    // Finished by the provider itself (a popup's opener does so): the page has no other of it.
    const mail = serverIn(tab, 'mail');
    const provider = signIn.providerFor(mail);
    await provider.complete(browser.callbacks[0] as URL);
    await eventually(() => expect(entry(tab, 'mail')?.status).toBe('ready'));
    expect(listeningTo(storage)).toContain(keyOf(mail));

    expect(await tab.manager.remove('mail')).toBe(true);
    expect(auth.stats().revocations).toBe(1);
    const heard = vi.fn();
    provider.subscribe(heard);
    // Another tab writes (or clears) the storage: the removed server's provider is not told.
    window.dispatchEvent(new StorageEvent('storage', { key: null }));
    window.dispatchEvent(new StorageEvent('storage', { key: keyOf(mail) }));
    expect(heard).not.toHaveBeenCalled();
    expect(listeningTo(storage)).not.toContain(keyOf(mail));
    expect(listeningTo(storage)).not.toContain(`${keyOf(mail)}:sign-in`);

    // Added and removed again and again (each add its own provider): nothing stays listening.
    const before = listeners();
    for (let i = 0; i < 4; i += 1) {
      tab.manager.add({ id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' });
      await eventually(() => expect(entry(tab, 'mail')).toMatchObject(SIGNED_OUT));
      expect(await tab.manager.remove('mail')).toBe(true);
    }
    expect(listeners()).toBe(before);
    expect(listeningTo(storage).filter((key) => key.includes(':mail:'))).toEqual([]);
  });

  it('forgotten in a page that had no provider of it: the one made to sign out is let go', async () => {
    const auth = await authServer();
    const server = await serverOf('legacy-v2', 'mail', { authServer: auth });
    const storage = memoryStorage();
    const browser = userBrowser();
    const signIn = signInOf(storage, browser.navigate);
    const tab = openManager({ storage, signIn });
    tab.manager.add({ id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' });
    await eventually(() => expect(entry(tab, 'mail')).toMatchObject(SIGNED_OUT));
    entry(tab, 'mail')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(1));
    const mail = serverIn(tab, 'mail');
    await signIn.providerFor(mail).complete(browser.callbacks[0] as URL);
    await eventually(() => expect(entry(tab, 'mail')?.status).toBe('ready'));
    await tab.close();

    // Another page of the app, with no manager: it forgets the server (as `add()` does an orphan).
    const page = signInOf(storage);
    const listeners = storageListeners();
    const hearing = () => listeningTo(storage).filter((key) => key.startsWith(keyOf(mail))).length;
    const before = hearing(); // the closed tab's provider: its page still holds it
    await page.forget({ ...mail, auth: 'oauth' });
    expect(auth.stats().revocations).toBe(1);
    expect(listeners()).toBe(0);
    expect(hearing()).toBe(before);
  });
});
