/**
 * Per-server sign-in in the server manager (issue 19), on real protected servers behind the demo
 * authorization server: a server that answers 401 gets its own OAuth provider and shows
 * `authorize()`; one callback page finishes whichever server's sign-in came back (routed by
 * `state`); no other server notices. The browser is played headlessly: `navigate` follows the
 * authorization URL to its redirect, and a fresh `ServerSignIn` (the callback page, after the
 * redirect) completes it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type KeyValueStorage, memoryStorage } from '../../src/auth';
import { ResourceStore, type ServerKind, startServer } from '../servers';
import { text } from '../support/eras';
import {
  atEnd,
  authServer,
  closeAll,
  observe,
  openManager,
  serverOf,
  wire,
} from '../support/manager';
import { entry, serverIn, signInOf, userBrowser } from '../support/serverSignIn';
import { tabChannels } from '../support/tabs';
import { eventually } from '../support/wait';

afterEach(closeAll);

const INBOX = 'secret://inbox';

async function guarded(
  kind: ServerKind,
  auth: Awaited<ReturnType<typeof authServer>>,
  label: string,
) {
  const store = new ResourceStore([
    {
      ...text(INBOX, 'nobody'),
      textByUser: { alice: `${label}: alice's inbox` },
      cacheScope: 'private',
    },
  ]);
  store.setTools([{ name: 'whoami' }]);
  const server = await startServer(kind, { store, auth: { authServer: auth } });
  atEnd(() => server.close());
  return server;
}

/** A protected server with a tool that needs more scope than signing in gives (a step-up). */
async function withAdminTool(auth: Awaited<ReturnType<typeof authServer>>) {
  const store = new ResourceStore([text(INBOX, 'inbox')]);
  store.setTools([{ name: 'whoami' }, { name: 'admin' }]);
  const server = await startServer('modern', {
    store,
    auth: { authServer: auth, toolScopes: { admin: 'mcp:admin' } },
  });
  atEnd(() => server.close());
  return server;
}

describe('McpServerManager: per-server sign-in', () => {
  it('a server that answers 401 gets its own provider; one callback page signs in whichever came back', async () => {
    const auth = await authServer();
    const [first, second, open] = await Promise.all([
      guarded('modern', auth, 'first'),
      guarded('legacy-v2', auth, 'second'),
      serverOf('modern', 'open'),
    ]);
    const storage = memoryStorage();
    const browser = userBrowser();
    const counted = wire();
    const tab = openManager({
      storage,
      fetch: counted.fetch,
      signIn: signInOf(storage, browser.navigate),
    });
    tab.manager.add({ id: 'first', name: 'First', url: first.url });
    tab.manager.add({ id: 'second', name: 'Second', url: second.url });
    tab.manager.add({ id: 'open', name: 'Open', url: open.url });
    await eventually(() => {
      for (const id of ['first', 'second']) {
        expect(entry(tab, id)).toMatchObject({
          status: 'unauthorized',
          signIn: 'signed-out',
          auth: 'oauth',
        });
      }
      expect(entry(tab, 'open')).toMatchObject({ status: 'ready', signIn: 'none' });
    });
    const openHandshakes = counted.handshakes(open.url);

    entry(tab, 'first')?.authorize();
    entry(tab, 'second')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(2));
    // The callback page is a new page: its own ServerSignIn, on the same storage.
    const callbackPage = signInOf(storage);
    const [toFirst, toSecond] = browser.callbacks as [URL, URL];
    await expect(callbackPage.complete(toSecond)).resolves.toMatchObject({ serverId: 'second' });
    await eventually(() =>
      expect(entry(tab, 'second')).toMatchObject({ status: 'ready', signIn: 'signed-in' }),
    );
    // The first one has not noticed.
    expect(entry(tab, 'first')).toMatchObject({ status: 'unauthorized', signIn: 'signed-out' });
    await expect(callbackPage.complete(toFirst)).resolves.toMatchObject({ serverId: 'first' });
    await eventually(() =>
      expect(entry(tab, 'first')).toMatchObject({ status: 'ready', signIn: 'signed-in' }),
    );

    // Each token went to its own server only (the servers check the audience), and each reads
    // its own private inbox.
    const inboxes = [observe(tab, 'first', INBOX), observe(tab, 'second', INBOX)];
    await eventually(() =>
      expect(inboxes.map((inbox) => inbox.text())).toEqual([
        "first: alice's inbox",
        "second: alice's inbox",
      ]),
    );
    expect(counted.handshakes(open.url)).toBe(openHandshakes);
    expect(entry(tab, 'open')?.status).toBe('ready');
    // A callback nobody started here is refused.
    const forged = new URL(toFirst);
    forged.searchParams.set('state', 'forged');
    await expect(callbackPage.complete(forged)).rejects.toThrow(/unknown state/);
  });

  it('after a reload a signed-in server connects with its token; removing it forgets the token', async () => {
    const auth = await authServer();
    const server = await guarded('modern', auth, 'only');
    const storage = memoryStorage();
    const browser = userBrowser();
    const before = openManager({ storage, signIn: signInOf(storage, browser.navigate) });
    before.manager.add({ id: 'only', name: 'Only', url: server.url });
    await eventually(() =>
      expect(entry(before, 'only')).toMatchObject({ status: 'unauthorized', signIn: 'signed-out' }),
    );
    entry(before, 'only')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(1));
    await signInOf(storage).complete(browser.callbacks[0] as URL);
    await eventually(() => expect(entry(before, 'only')?.status).toBe('ready'));
    await before.close();

    const challenged = server.protection?.stats().challenged;
    const after = openManager({ storage, signIn: signInOf(storage) });
    expect(entry(after, 'only')).toMatchObject({ auth: 'oauth', signIn: 'signed-in' });
    await eventually(() => expect(entry(after, 'only')?.status).toBe('ready'));
    // No 401 on the way: the stored token went with the first request.
    expect(server.protection?.stats().challenged).toBe(challenged);
    expect(storage.getItem('mcp-react-query:servers')).not.toMatch(/access_token/);

    const only = serverIn(after, 'only');
    await after.manager.remove('only');
    const fresh = signInOf(storage).providerFor(only);
    expect(fresh.tokens()).toBeUndefined();
  });

  it('a URL edit forgets the old URL’s tokens; a finished sign-in leaves no state behind', async () => {
    const auth = await authServer();
    const [before, after] = await Promise.all([
      guarded('modern', auth, 'before'),
      guarded('legacy-v2', auth, 'after'),
    ]);
    const storage = memoryStorage();
    const browser = userBrowser();
    const signIn = signInOf(storage, browser.navigate);
    const tab = openManager({ storage, signIn });
    tab.manager.add({ id: 'moving', name: 'Moving', url: before.url });
    await eventually(() =>
      expect(entry(tab, 'moving')).toMatchObject({ status: 'unauthorized', signIn: 'signed-out' }),
    );
    const started = () =>
      Object.keys(JSON.parse(storage.getItem('mcp-react-query:server-oauth:started') ?? '{}'));
    expect(started()).toHaveLength(1);
    entry(tab, 'moving')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(1));
    // Finished by the provider itself, as the page that opened a sign-in popup does when the
    // popup reports back (the callback page never routes it).
    const moving = serverIn(tab, 'moving');
    const provider = signIn.providerFor(moving);
    await provider.complete(browser.callbacks[0] as URL);
    await eventually(() => expect(entry(tab, 'moving')?.status).toBe('ready'));
    expect(started()).toEqual([]);

    tab.manager.update('moving', { url: after.url });
    await eventually(() =>
      expect(entry(tab, 'moving')).toMatchObject({
        url: after.url,
        status: 'unauthorized',
        signIn: 'signed-out',
      }),
    );
    const old = signInOf(storage).providerFor(moving);
    await eventually(() => expect(old.tokens()).toBeUndefined());
  });

  it('a server that never signed in leaves nothing in the sign-in storage when removed', async () => {
    const server = await serverOf('legacy-v2', 'open');
    const memory = memoryStorage();
    const written: string[] = [];
    const storage: KeyValueStorage = {
      ...memory,
      setItem: (key, value) => {
        written.push(key);
        memory.setItem(key, value);
      },
    };
    const tab = openManager({ storage: null, signIn: signInOf(storage) });
    tab.manager.add({ id: 'open', name: 'Open', url: server.url });
    await eventually(() =>
      expect(entry(tab, 'open')).toMatchObject({ status: 'ready', signIn: 'none' }),
    );
    expect(await tab.manager.remove('open')).toBe(true);
    expect(written).toEqual([]);
  });

  it('without signIn a 401 stays unauthorized, and a server with its own Authorization header gets no provider', async () => {
    const auth = await authServer();
    const server = await guarded('legacy-v2', auth, 'x');
    const storage = memoryStorage();
    const plain = openManager({ storage: null });
    plain.manager.add({ id: 'x', name: 'X', url: server.url });
    await eventually(() =>
      expect(entry(plain, 'x')).toMatchObject({ status: 'unauthorized', signIn: 'none' }),
    );
    expect(entry(plain, 'x')?.auth).toBeUndefined();
    const withKey = openManager({ storage, signIn: signInOf(storage) });
    withKey.manager.add({
      id: 'x',
      name: 'X',
      url: server.url,
      headers: { Authorization: 'Bearer nope' },
    });
    await eventually(() =>
      expect(entry(withKey, 'x')).toMatchObject({ status: 'unauthorized', signIn: 'none' }),
    );
    expect(entry(withKey, 'x')?.auth).toBeUndefined();
  });

  it('a server removed while its code is being exchanged stays signed out: the late tokens are dropped', async () => {
    const auth = await authServer();
    const server = await guarded('modern', auth, 'g');
    const storage = memoryStorage();
    const browser = userBrowser();
    const signIn = signInOf(storage, browser.navigate);
    const tab = openManager({ storage, signIn });
    tab.manager.add({ id: 'g', name: 'G', url: server.url });
    await eventually(() =>
      expect(entry(tab, 'g')).toMatchObject({ status: 'unauthorized', signIn: 'signed-out' }),
    );
    entry(tab, 'g')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(1));
    // The popup reported back: the opener's provider exchanges the code, and meanwhile the user
    // removes the server.
    const g = serverIn(tab, 'g');
    const exchange = signIn.providerFor(g).complete(browser.callbacks[0] as URL);
    expect(await tab.manager.remove('g')).toBe(true);
    await expect(exchange).rejects.toMatchObject({
      code: 'CANCELLED',
      message: expect.stringMatching(/signed out/),
    });
    expect(signInOf(storage).providerFor(g).tokens()).toBeUndefined();
    // Added again, it asks the user to sign in.
    tab.manager.add({ id: 'g', name: 'G', url: server.url, auth: 'oauth' });
    await eventually(() =>
      expect(entry(tab, 'g')).toMatchObject({ status: 'unauthorized', signIn: 'signed-out' }),
    );
  });

  it('a step-up (403 insufficient_scope) in redirect mode is finished by the callback page', async () => {
    const auth = await authServer();
    const server = await withAdminTool(auth);
    const storage = memoryStorage();
    const browser = userBrowser();
    const signIn = signInOf(storage, browser.navigate);
    const tab = openManager({ storage, signIn });
    tab.manager.add({ id: 'g', name: 'G', url: server.url, auth: 'oauth' });
    await eventually(() => expect(entry(tab, 'g')?.status).toBe('unauthorized'));
    entry(tab, 'g')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(1));
    await signInOf(storage).complete(browser.callbacks[0] as URL);
    await eventually(() =>
      expect(entry(tab, 'g')).toMatchObject({ status: 'ready', signIn: 'signed-in' }),
    );
    const started = () =>
      Object.keys(JSON.parse(storage.getItem('mcp-react-query:server-oauth:started') ?? '{}'));
    expect(started()).toEqual([]);

    // A tool that needs more scope: the server answers 403 and the SDK asks for a step-up.
    await expect(tab.manager.callTool({ name: 'G__admin' })).rejects.toThrow();
    const provider = signIn.providerFor(serverIn(tab, 'g'));
    await eventually(() =>
      expect(provider.pendingAuthorization?.searchParams.get('scope')).toContain('mcp:admin'),
    );
    expect(started()).toHaveLength(1);
    entry(tab, 'g')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(2));
    await expect(signInOf(storage).complete(browser.callbacks[1] as URL)).resolves.toMatchObject({
      serverId: 'g',
      popup: false,
    });
    await eventually(() => expect(provider.tokens()?.scope).toContain('mcp:admin'));
    expect(started()).toEqual([]);
    const result = await tab.manager.callTool({ name: 'G__admin' });
    expect(JSON.stringify(result.content)).toContain('called admin');
  });

  it('two tabs on one storage: once the other tab signed in, a step-up here goes to a fresh authorization URL', async () => {
    const auth = await authServer();
    const server = await withAdminTool(auth);
    const storage = memoryStorage(); // localStorage: shared by the tabs
    const open = (navigate: (url: URL) => Promise<void>) => {
      const channels = tabChannels();
      atEnd(() => channels.closeAll());
      const signIn = signInOf(storage, navigate);
      const tab = openManager({ storage, storageKey: 'two-tabs', channel: channels.open, signIn });
      return { signIn, tab };
    };
    const [browserA, browserB] = [userBrowser(), userBrowser()];
    const a = open(browserA.navigate);
    a.tab.manager.add({ id: 'g', name: 'G', url: server.url, auth: 'oauth' });
    await eventually(() => expect(entry(a.tab, 'g')?.status).toBe('unauthorized'));
    const providerA = a.signIn.providerFor(serverIn(a.tab, 'g'));
    const firstA = providerA.pendingAuthorization?.searchParams.get('state');
    expect(firstA).toBeTruthy();
    // Tab B signs in (its callback page redeems it); tab A follows through the shared storage.
    const b = open(browserB.navigate);
    await eventually(() => expect(entry(b.tab, 'g')?.status).toBe('unauthorized'));
    entry(b.tab, 'g')?.authorize();
    await eventually(() => expect(browserB.callbacks).toHaveLength(1));
    await signInOf(storage).complete(browserB.callbacks[0] as URL);
    await eventually(() =>
      expect(entry(a.tab, 'g')).toMatchObject({ status: 'ready', signIn: 'signed-in' }),
    );
    // Nothing of tab A's first sign-in is waiting any more.
    expect(providerA.pendingAuthorization).toBeUndefined();

    // Later tab A needs more scope, and the user signs in from tab A.
    await expect(a.tab.manager.callTool({ name: 'G__admin' })).rejects.toThrow();
    await eventually(() => expect(providerA.pendingAuthorization).toBeDefined());
    entry(a.tab, 'g')?.authorize();
    await eventually(() => expect(browserA.callbacks).toHaveLength(1));
    const stepUp = browserA.callbacks[0] as URL;
    expect(stepUp.searchParams.get('state')).not.toBe(firstA);
    await expect(signInOf(storage).complete(stepUp)).resolves.toMatchObject({ serverId: 'g' });
    const result = await a.tab.manager.callTool({ name: 'G__admin' });
    expect(JSON.stringify(result.content)).toContain('called admin');
  });
});
