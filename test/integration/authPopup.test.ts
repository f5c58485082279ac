/** @vitest-environment jsdom */
/**
 * The sign-in popup's answer (issue 17): the page that opened the popup listens for the callback
 * URL it posts back, and any other window or frame of the page (an embedded MCP App view, an ad)
 * can post messages too. Only the popup itself, on the redirect page's origin, with this
 * sign-in's `state` and the callback path, is heard; anything else is ignored and the page keeps
 * listening. The popup is a frame of jsdom's page (`window.open` returns it), the rest is real:
 * the authorization server, the protected servers, the code exchange. The real-browser check is
 * test/e2e/signin.e2e.ts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { completeAuthorization, createOAuthProvider, memoryStorage } from '../../src/auth';
import { createServerSignIn } from '../../src/servers';
import { ERA_CASES } from '../support/eras';
import { atEnd, closeAll, connect, protectedServer } from '../support/oauth';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

const CALLBACK_MESSAGE = 'mcp-react-query:oauth-callback';
const realOpen = window.open;

afterEach(async () => {
  window.open = realOpen;
  vi.unstubAllGlobals();
  document.body.replaceChildren();
  await disposeSyncs();
  await closeAll();
});

function frame(): Window {
  const element = document.createElement('iframe');
  document.body.append(element);
  return element.contentWindow as Window;
}

describe.each(ERA_CASES)('the sign-in popup ($kind)', ({ kind }) => {
  it('hears only the popup itself, from the redirect origin, with its state and path; forgeries change nothing', async () => {
    const { authServer, server } = await protectedServer(kind);
    const popup = frame();
    const other = frame();
    const opened: string[] = [];
    window.open = ((url: string) => {
      opened.push(url);
      return popup;
    }) as typeof window.open;
    const redirectUrl = `${location.origin}/callback`;
    const provider = createOAuthProvider({
      serverUrl: server.url,
      redirectUrl,
      mode: 'popup',
      storage: 'memory',
    });
    const { sync } = connect(server, provider);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));

    let outcome: string | undefined;
    provider.authorize().then(
      () => {
        outcome = 'signed in';
      },
      (error: unknown) => {
        outcome = `failed: ${String(error)}`;
      },
    );
    await eventually(() => expect(opened).toHaveLength(1));
    const response = await fetch(opened[0] as string, { redirect: 'manual' });
    const callback = new URL(response.headers.get('location') ?? '');
    const state = callback.searchParams.get('state') as string;
    expect(state).toBeTruthy();

    // What a hostile frame would post: the sign-in aborted, with text of its choosing.
    const aborted = (changes: { state?: string; path?: string } = {}) => {
      const url = new URL(changes.path ?? '/callback', location.origin);
      url.searchParams.set('state', changes.state ?? state);
      url.searchParams.set('error', 'access_denied');
      url.searchParams.set('error_description', 'your account was locked, call +1 555 0100');
      return url.href;
    };
    const post = (data: unknown, source: Window | null, origin = location.origin) =>
      window.dispatchEvent(new MessageEvent('message', { data, source, origin }));
    post({ type: CALLBACK_MESSAGE, url: aborted() }, other); // another frame
    post({ type: CALLBACK_MESSAGE, url: aborted() }, null); // no window at all
    post({ type: CALLBACK_MESSAGE, url: aborted() }, popup, 'https://evil.example'); // other origin
    post({ type: CALLBACK_MESSAGE, url: aborted({ state: 'forged' }) }, popup); // other sign-in
    post({ type: CALLBACK_MESSAGE, url: aborted({ path: '/elsewhere' }) }, popup); // other page
    post({ type: CALLBACK_MESSAGE, url: 'not a url' }, popup);
    post({ type: CALLBACK_MESSAGE, url: 42 }, popup);
    post({ type: 'something else', url: aborted() }, popup);
    post(null, popup);
    post('mcp-react-query:oauth-callback', popup);

    // The popup's own answer is still heard.
    post({ type: CALLBACK_MESSAGE, url: callback.href }, popup);
    await eventually(() => expect(outcome).toBeDefined());
    expect(outcome).toBe('signed in');
    expect(authServer.stats()).toMatchObject({ codeExchanges: 1, tokenErrors: 0 });
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    expect(sync.getState().error).toBeUndefined();
  });

  it('closing the popup ends the sign-in: CANCELLED, nothing left listening, and a retry starts afresh', async () => {
    const { server } = await protectedServer(kind);
    const listening = new Set<unknown>();
    const { addEventListener, removeEventListener } = window;
    window.addEventListener = ((type: string, listener: unknown, ...rest: never[]) => {
      if (type === 'message') listening.add(listener);
      addEventListener.call(window, type, listener as EventListener, ...rest);
    }) as typeof window.addEventListener;
    window.removeEventListener = ((type: string, listener: unknown, ...rest: never[]) => {
      if (type === 'message') listening.delete(listener);
      removeEventListener.call(window, type, listener as EventListener, ...rest);
    }) as typeof window.removeEventListener;
    atEnd(() => {
      window.addEventListener = addEventListener;
      window.removeEventListener = removeEventListener;
    });
    // The user closes the popup (or the authorization server's COOP cuts it off: it reads as closed).
    const closed = { closed: false, close() {} };
    const opened: string[] = [];
    window.open = ((url: string) => {
      opened.push(url);
      return closed;
    }) as typeof window.open;
    const provider = createOAuthProvider({
      serverUrl: server.url,
      redirectUrl: `${location.origin}/callback`,
      mode: 'popup',
      storage: 'memory',
    });
    const { sync } = connect(server, provider);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    const first = provider.authorize();
    const failed = first.catch((error: unknown) => error);
    await eventually(() => expect(opened).toHaveLength(1));
    expect(listening.size).toBe(1);
    closed.closed = true;
    const error = await failed;
    expect(error).toMatchObject({
      code: 'CANCELLED',
      message: expect.stringMatching(/popup was closed/),
    });
    expect(listening.size).toBe(0);
    expect(provider.pendingAuthorization).toBeUndefined();

    // Again, and this time the user signs in: a new sign-in (its own state), and it succeeds.
    const popup = frame();
    window.open = ((url: string) => {
      opened.push(url);
      return popup;
    }) as typeof window.open;
    const second = provider.authorize();
    await eventually(() => expect(opened).toHaveLength(2));
    const [was, now] = opened.map((url) => new URL(url).searchParams.get('state'));
    expect(now).toBeTruthy();
    expect(now).not.toBe(was);
    const response = await fetch(opened[1] as string, { redirect: 'manual' });
    const callback = response.headers.get('location') ?? '';
    window.dispatchEvent(
      new MessageEvent('message', {
        data: { type: CALLBACK_MESSAGE, url: callback },
        source: popup,
        origin: location.origin,
      }),
    );
    await second;
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    expect(listening.size).toBe(0);
  });

  it("with a storage the popup shares, the popup's callback page still hands the answer to the page that opened it", async () => {
    const { server } = await protectedServer(kind);
    const storage = memoryStorage(); // the app's own, which the popup's page sees too
    const redirectUrl = `${location.origin}/callback`;
    const options = { serverUrl: server.url, redirectUrl, mode: 'popup' as const, storage };
    const opener = createOAuthProvider(options);
    const popup = frame();
    const opened: string[] = [];
    window.open = ((url: string) => {
      opened.push(url);
      return popup;
    }) as typeof window.open;
    const { sync } = connect(server, opener);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    const signedIn = opener.authorize();
    await eventually(() => expect(opened).toHaveLength(1));
    const response = await fetch(opened[0] as string, { redirect: 'manual' });
    const callback = new URL(response.headers.get('location') ?? '');
    // The popup's callback page: its own provider, on the same storage, with the popup's opener.
    const close = vi.fn();
    vi.stubGlobal('opener', {
      postMessage: (data: unknown, origin: string) =>
        window.dispatchEvent(new MessageEvent('message', { data, source: popup, origin })),
    });
    vi.stubGlobal('close', close);
    history.replaceState(null, '', `${callback.pathname}${callback.search}`);
    await expect(completeAuthorization(createOAuthProvider(options))).resolves.toMatchObject({
      popup: true,
    });
    history.replaceState(null, '', '/');
    expect(close).toHaveBeenCalled();
    await signedIn;
    await eventually(() => expect(sync.getState().status).toBe('ready'));
  });

  it('a popup cut off by COOP (reads closed at once) with a storage it shares: its own callback page still signs in', async () => {
    const { server } = await protectedServer(kind);
    const storage = memoryStorage(); // the app's own, which the popup's page sees too
    const redirectUrl = `${location.origin}/callback`;
    const options = { serverUrl: server.url, redirectUrl, mode: 'popup' as const, storage };
    const opener = createOAuthProvider(options);
    const opened: string[] = [];
    window.open = ((url: string) => {
      opened.push(url);
      return { closed: true }; // severed by COOP: it reads as closed at once
    }) as typeof window.open;
    const { sync } = connect(server, opener);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    const cancelled = opener.authorize().catch((error: unknown) => error);
    await eventually(() => expect(opened).toHaveLength(1));
    // authorize() gives up while the user is still at the authorization server.
    expect(await cancelled).toMatchObject({ code: 'CANCELLED' });
    expect(opener.pendingAuthorization).toBeUndefined();
    const response = await fetch(opened[0] as string, { redirect: 'manual' });
    const callback = new URL(response.headers.get('location') ?? '');
    // The popup's callback page (no opener: COOP severed it), on the same storage.
    await expect(completeAuthorization(createOAuthProvider(options), callback)).resolves.toEqual({
      returnTo: undefined,
      popup: false,
    });
    expect(opener.tokens()).toBeDefined();
    await eventually(() => expect(sync.getState().status).toBe('ready'));
  });

  it("a server's popup cut off by COOP, with ServerSignIn on a shared storage: the popup's callback page still signs in", async () => {
    const { server } = await protectedServer(kind);
    const storage = memoryStorage(); // localStorage, the default: the popup's page sees it too
    const options = { redirectUrl: `${location.origin}/callback`, mode: 'popup' as const, storage };
    const config = { id: 'guarded', url: server.url };
    const opener = createServerSignIn(options).providerFor(config);
    const opened: string[] = [];
    window.open = ((url: string) => {
      opened.push(url);
      return { closed: true };
    }) as typeof window.open;
    const { sync } = connect(server, opener);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    const cancelled = opener.authorize().catch((error: unknown) => error);
    await eventually(() => expect(opened).toHaveLength(1));
    expect(await cancelled).toMatchObject({ code: 'CANCELLED' });
    const response = await fetch(opened[0] as string, { redirect: 'manual' });
    const callback = new URL(response.headers.get('location') ?? '');
    await expect(createServerSignIn(options).complete(callback)).resolves.toMatchObject({
      serverId: 'guarded',
      popup: false,
    });
    expect(opener.tokens()).toBeDefined();
    await eventually(() => expect(sync.getState().status).toBe('ready'));
  });

  it('keeps the sign-in secrets in the page: nothing of it in any web storage', async () => {
    localStorage.clear();
    sessionStorage.clear();
    const { server } = await protectedServer(kind);
    const popup = frame();
    let state: string | null = null;
    window.open = ((url: string) => {
      state = new URL(url).searchParams.get('state');
      return popup;
    }) as typeof window.open;
    const provider = createOAuthProvider({
      serverUrl: server.url,
      redirectUrl: `${location.origin}/callback`,
      mode: 'popup',
    });
    void provider.authorize().catch(() => {});
    await eventually(() => expect(state).toBeTruthy());
    const stored = [localStorage, sessionStorage].flatMap((storage) =>
      Array.from({ length: storage.length }, (_, i) => storage.getItem(storage.key(i) ?? '')),
    );
    expect(stored.join()).not.toContain(state);
    expect(stored.join()).not.toMatch(/"(verifier|state)":/);
  });
});
