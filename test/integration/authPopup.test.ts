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
import { afterEach, describe, expect, it } from 'vitest';
import { createOAuthProvider } from '../../src/auth';
import { ERA_CASES } from '../support/eras';
import { closeAll, connect, protectedServer } from '../support/oauth';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

const CALLBACK_MESSAGE = 'mcp-react-query:oauth-callback';
const realOpen = window.open;

afterEach(async () => {
  window.open = realOpen;
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
