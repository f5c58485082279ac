/** @vitest-environment jsdom */
/**
 * Where the secrets of a sign-in live and how long (issue 17): a callback is redeemed once, the
 * PKCE verifier and `state` exist only for the sign-in they belong to, the code leaves the
 * address bar whatever happens, and tokens sit in the storage the app chose — the tab's session
 * storage unless it chose otherwise. Real servers behind the demo authorization server; the
 * browser's storages are jsdom's.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { completeAuthorization, createOAuthProvider, type KeyValueStorage } from '../../src/auth';
import { ERA_CASES } from '../support/eras';
import { closeAll, connect, oauthProvider, protectedServer } from '../support/oauth';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

beforeEach(() => {
  localStorage.clear();
  sessionStorage.clear();
});

afterEach(async () => {
  vi.unstubAllGlobals();
  await disposeSyncs();
  await closeAll();
});

/** A storage that keeps a copy of everything written, for looking into afterwards. */
function recording(): KeyValueStorage & { text(): string } {
  const values = new Map<string, string>();
  return {
    getItem: (key) => values.get(key) ?? null,
    setItem: (key, value) => void values.set(key, value),
    removeItem: (key) => void values.delete(key),
    text: () => [...values.values()].join('\n'),
  };
}

const everything = (storage: Storage) =>
  Array.from({ length: storage.length }, (_, i) => storage.getItem(storage.key(i) ?? '')).join(
    '\n',
  );

/** The authorization server's redirect for `url`, as a browser would see it. */
async function visit(url: URL, change?: (callback: URL) => void): Promise<URL> {
  const response = await fetch(url, { redirect: 'manual' });
  const callback = new URL(response.headers.get('location') ?? '');
  change?.(callback);
  return callback;
}

describe.each(ERA_CASES)('a callback is redeemed once ($kind)', ({ kind }) => {
  it('two callbacks with the same code at once: one exchange, the other refused first, the tokens stay', async () => {
    const { authServer, server } = await protectedServer(kind);
    const outcomes: PromiseSettledResult<unknown>[] = [];
    let redeemed: URL | undefined;
    const provider = createOAuthProvider({
      serverUrl: server.url,
      redirectUrl: 'http://127.0.0.1:9/callback',
      storage: 'memory',
      navigate: async (url) => {
        const callback = await visit(url);
        redeemed = callback;
        outcomes.push(
          ...(await Promise.allSettled([provider.complete(callback), provider.complete(callback)])),
        );
      },
    });
    const { sync } = connect(server, provider);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    sync.authorize();
    await eventually(() => expect(outcomes).toHaveLength(2));
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected');
    expect(String((refused as PromiseRejectedResult).reason)).toMatch(/state mismatch/);
    expect(authServer.stats()).toMatchObject({ codeExchanges: 1, tokenErrors: 0 });
    expect(provider.tokens()?.access_token).toBeTruthy();
    await eventually(() => expect(sync.getState().status).toBe('ready'));

    // The same callback again later (a reload of the callback page): nothing is redeemed.
    const token = provider.tokens()?.access_token;
    await expect(provider.complete(redeemed as URL)).rejects.toThrow(/state mismatch/);
    expect(authServer.stats()).toMatchObject({ codeExchanges: 1, tokenErrors: 0 });
    expect(provider.tokens()?.access_token).toBe(token);
  });
});

describe.each(ERA_CASES)(
  'the verifier and state live only for their sign-in ($kind)',
  ({ kind }) => {
    it('gone once the sign-in succeeded', async () => {
      const { server } = await protectedServer(kind);
      const storage = recording();
      const { provider, browser } = oauthProvider(server, { storage });
      let during = '';
      browser.meanwhile = async () => {
        during = storage.text();
      };
      await provider.authorize();
      expect(browser.errors).toEqual([]);
      const state = browser.visited[0]?.searchParams.get('state') as string;
      expect(during).toContain(state);
      expect(during).toContain('"verifier"');
      expect(storage.text()).not.toContain(state);
      expect(storage.text()).not.toMatch(/"(verifier|state|returnTo)":/);
      expect(provider.tokens()).toBeDefined();
    });

    it('gone once the sign-in failed (the user cancelled), and a retry starts afresh', async () => {
      const { authServer, server } = await protectedServer(kind);
      const storage = recording();
      const { provider, browser } = oauthProvider(server, {
        storage,
        browser: { tamper: (callback) => withParams(callback, { error: 'access_denied' }) },
      });
      await provider.authorize();
      expect(String(browser.errors[0])).toMatch(/access_denied/);
      expect(storage.text()).not.toMatch(/"(verifier|state|returnTo)":/);
      expect(provider.pendingAuthorization).toBeUndefined();
      browser.tamper = (callback) => callback;
      await provider.authorize();
      expect(browser.errors).toHaveLength(1);
      expect(browser.visited).toHaveLength(2);
      expect(browser.visited[1]?.searchParams.get('state')).not.toBe(
        browser.visited[0]?.searchParams.get('state'),
      );
      expect(authServer.stats().codeExchanges).toBe(1);
    });
  },
);

function withParams(url: URL, params: Record<string, string>): URL {
  const next = new URL(url);
  next.searchParams.delete('code');
  for (const [name, value] of Object.entries(params)) next.searchParams.set(name, value);
  return next;
}

describe('the callback page', () => {
  it('removes code and state from the address bar even when the exchange fails', async () => {
    const { authServer, server } = await protectedServer('modern');
    const callbackPath = '/callback';
    let failure: unknown;
    const provider = createOAuthProvider({
      serverUrl: server.url,
      redirectUrl: `${location.origin}${callbackPath}`,
      storage: 'memory',
      navigate: async (url) => {
        const callback = await visit(url, (back) => back.searchParams.set('code', 'not-a-code'));
        // The browser arrives on the callback page, which finishes the sign-in.
        history.replaceState(null, '', `${callback.pathname}${callback.search}`);
        failure = await completeAuthorization(provider).catch((error: unknown) => error);
      },
    });
    await provider.authorize();
    expect(authServer.stats().tokenErrors).toBeGreaterThan(0);
    expect(failure).toBeInstanceOf(Error);
    expect(location.pathname).toBe(callbackPath);
    expect(location.search).toBe('');
    history.replaceState(null, '', '/');
  });

  it('in a tab another window opened, a redirect sign-in finishes in place; one it did not start goes to the opener', async () => {
    const { server } = await protectedServer('modern');
    const postMessage = vi.fn();
    const close = vi.fn();
    vi.stubGlobal('opener', { postMessage });
    vi.stubGlobal('close', close);
    const redirectUrl = `${location.origin}/callback`;
    let finished: unknown;
    const provider = createOAuthProvider({
      serverUrl: server.url,
      redirectUrl,
      storage: 'memory',
      navigate: async (url) => {
        const callback = await visit(url);
        history.replaceState(null, '', `${callback.pathname}${callback.search}`);
        finished = await completeAuthorization(provider).catch((error: unknown) => error);
      },
    });
    await provider.authorize();
    expect(finished).toEqual({ returnTo: undefined, popup: false });
    expect(provider.tokens()?.access_token).toBeTruthy();
    expect(postMessage).not.toHaveBeenCalled();
    expect(close).not.toHaveBeenCalled();
    expect(location.search).toBe('');

    // A popup's callback page: the sign-in's secrets stay in the page that opened it.
    history.replaceState(null, '', '/callback?code=c&state=s');
    const href = location.href;
    const popupPage = createOAuthProvider({ serverUrl: server.url, redirectUrl, mode: 'popup' });
    await expect(completeAuthorization(popupPage)).resolves.toEqual({
      returnTo: undefined,
      popup: true,
    });
    expect(postMessage).toHaveBeenCalledWith(
      { type: 'mcp-react-query:oauth-callback', url: href },
      location.origin,
    );
    expect(close).toHaveBeenCalled();
    history.replaceState(null, '', '/');
  });
});

describe.each(ERA_CASES)('where tokens live ($kind)', ({ kind }) => {
  it("by default the tab's session storage: nothing in localStorage, nothing left after the tab", async () => {
    const { server } = await protectedServer(kind);
    const { provider } = oauthProvider(server, { storage: undefined });
    await provider.authorize();
    const token = provider.tokens()?.refresh_token as string;
    expect(token).toBeTruthy();
    expect(everything(sessionStorage)).toContain(token);
    expect(everything(localStorage)).toBe('');
  });

  it("'local' keeps them in localStorage (shared by the tabs, kept across restarts)", async () => {
    const { server } = await protectedServer(kind);
    const { provider } = oauthProvider(server, { storage: 'local' });
    await provider.authorize();
    const token = provider.tokens()?.refresh_token as string;
    expect(everything(localStorage)).toContain(token);
    expect(everything(sessionStorage)).not.toContain(token);
  });

  it("'memory' writes no token to any web storage", async () => {
    const { server } = await protectedServer(kind);
    const { provider } = oauthProvider(server, { storage: 'memory' });
    await provider.authorize();
    expect(provider.tokens()?.access_token).toBeTruthy();
    expect(everything(localStorage)).toBe('');
    expect(everything(sessionStorage)).not.toMatch(/access_token|refresh_token/);
  });
});

describe.each(ERA_CASES)('PKCE support is checked ($kind)', ({ kind }) => {
  it.each([
    ['does not list code_challenge_methods_supported', null],
    ['lists only plain', ['plain']],
  ])(
    'an authorization server whose metadata %s is refused, clearly, and nobody is sent there',
    async (_, pkceMethods) => {
      const { authServer, server } = await protectedServer(kind, {
        authServer: { pkceMethods },
      });
      const storage = recording();
      const { provider, browser } = oauthProvider(server, { storage });
      const { sync, statuses } = connect(server, provider);
      await eventually(() => expect(sync.getState().status).toBe('error'));
      expect(sync.getState().error?.message).toMatch(/PKCE/);
      expect(sync.getState().error?.message).toContain(authServer.issuer);
      expect(statuses).not.toContain('unauthorized');
      await expect(provider.authorize()).rejects.toThrow(/code_challenge_methods_supported/);
      expect(provider.pendingAuthorization).toBeUndefined();
      expect(browser.visited).toEqual([]);
      expect(authServer.stats().authorizations).toBe(0);
      expect(storage.text()).not.toMatch(/"(verifier|state)":/);
    },
  );
});
