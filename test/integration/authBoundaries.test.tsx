/** @vitest-environment jsdom */
/**
 * Trust boundaries of the sign-in glue (issue 17), on the three real servers behind the demo
 * authorization server, checked on the wire (the servers' request logs) wherever there is one:
 * a token goes only to the server it was issued for, a new sign-in is a new person, and
 * signing out or in as someone else leaves nothing of the previous connection open.
 */
import { auth } from '@modelcontextprotocol/client';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  callTool,
  type McpProviderProps,
  mcpKeys,
  useCallTool,
  useMcp,
  useResource,
} from '../../src';
import { memoryStorage, type OAuthProvider } from '../../src/auth';
import { startServer } from '../servers';
import { ERA_CASES, text } from '../support/eras';
import {
  atEnd,
  closeAll,
  connect,
  INBOX,
  inbox,
  oauthProvider,
  protectedServer,
  sentWith,
} from '../support/oauth';
import { renderWithProvider } from '../support/oauthApp';
import { observeResource } from '../support/observe';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

afterEach(async () => {
  vi.unstubAllGlobals();
  cleanup();
  await disposeSyncs();
  await closeAll();
});

const renders: string[] = [];

function Inbox() {
  const query = useResource(INBOX);
  const content = query.data?.contents[0];
  const shown = content && 'text' in content ? content.text : '…';
  renders.push(shown);
  return <div data-testid="inbox">{shown}</div>;
}

function Status() {
  const { status, error, authorize } = useMcp();
  const call = useCallTool();
  return (
    <div>
      <button type="button" onClick={authorize}>
        sign in
      </button>
      <button type="button" onClick={() => call.mutate({ name: 'admin-only' })}>
        admin
      </button>
      <div data-testid="status">{status}</div>
      <div data-testid="error">
        {error ? `${(error as { code?: string }).code}: ${error.message}` : ''}
      </div>
    </div>
  );
}

function renderApp(props: Partial<McpProviderProps> & { url: string }) {
  return renderWithProvider(
    props,
    <>
      <Status />
      <Inbox />
    </>,
  );
}

const shown = (id: string) => screen.getByTestId(id).textContent;

async function signedInUpFront(provider: OAuthProvider) {
  await provider.authorize();
  const token = provider.tokens()?.access_token;
  expect(token).toBeTruthy();
  return token as string;
}

describe.each(ERA_CASES)('a token goes only to its own server ($kind)', ({ kind }) => {
  it("the provider's url moves to another server: INVALID_OPTIONS naming both URLs, and that server gets nothing", async () => {
    const { server: a } = await protectedServer(kind);
    const b = await startServer(kind, { store: undefined });
    atEnd(() => b.close());
    b.store.upsert(text(INBOX, "b's inbox"));
    const { provider } = oauthProvider(a);
    const token = await signedInUpFront(provider);
    const app = renderApp({ url: a.url, authProvider: provider });
    await eventually(() => expect(shown('inbox')).toBe("alice's inbox"));
    expect(sentWith(a, token).length).toBeGreaterThan(0);

    app.rerender({ url: b.url });
    await eventually(() => expect(shown('status')).toBe('error'));
    expect(shown('error')).toMatch(/^INVALID_OPTIONS: /);
    expect(shown('error')).toContain(a.url);
    expect(shown('error')).toContain(b.url);
    expect(sentWith(b, token)).toEqual([]);
    expect(b.requests()).toEqual([]);
  });

  it('a provider never returns tokens issued for another server, even from a shared storage key', async () => {
    const { authServer, server: a } = await protectedServer(kind);
    const { server: b } = await protectedServer(kind, { authServer });
    const storage = memoryStorage();
    const forA = oauthProvider(a, { storage, storageKey: 'shared' });
    const forB = oauthProvider(b, { storage, storageKey: 'shared' });
    const token = await signedInUpFront(forA.provider);
    expect(forB.provider.tokens()).toBeUndefined();
    expect(forB.provider.identity()).toBeUndefined();

    const { sync } = connect(b, forB.provider);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    expect(sentWith(b, token)).toEqual([]);
    expect(b.requests().every((request) => request.authorization === undefined)).toBe(true);

    // B signing in on the same key leaves A signed in, with its own token.
    sync.authorize();
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    expect(forB.provider.tokens()?.access_token).not.toBe(token);
    expect(forA.provider.tokens()?.access_token).toBe(token);
    expect(sentWith(b, token)).toEqual([]);
  });
});

describe.each(ERA_CASES)('a new sign-in is a new person ($kind)', ({ kind }) => {
  it("opaque tokens: user 2 signs in after user 1's session ended; user 2's tree never renders user 1's inbox", async () => {
    const { authServer, server } = await protectedServer(kind, {
      authServer: { opaqueTokens: true },
    });
    const { provider, browser } = oauthProvider(server);
    const { queryClient } = renderApp({ url: server.url, authProvider: provider });
    await eventually(() => expect(shown('status')).toBe('unauthorized'));
    act(() => fireEvent.click(screen.getByText('sign in')));
    await eventually(() => expect(shown('inbox')).toBe("alice's inbox"));
    const alice = provider.identity();
    expect(alice).toBeTruthy();

    // Alice's session ends at the authorization server (nothing refreshes any more); her inbox
    // stays on screen, as any failed read keeps what it had.
    authServer.expireAccessTokens();
    authServer.revokeRefreshTokens();
    server.resourceUpdated(INBOX);
    await eventually(() => expect(shown('status')).toBe('unauthorized'));

    // Bob signs in on the same screen. From the moment his tokens are stored, nothing of
    // alice's may be in the cache or on the screen.
    authServer.setUser('bob');
    let cachedAtSignIn: unknown = 'not signed in yet';
    browser.after = () => {
      renders.length = 0;
      cachedAtSignIn = queryClient.getQueryData(mcpKeys.resource(INBOX));
    };
    act(() => fireEvent.click(screen.getByText('sign in')));
    await eventually(() => expect(cachedAtSignIn).not.toBe('not signed in yet'));
    expect(browser.errors).toEqual([]);
    expect(cachedAtSignIn).toBeUndefined();
    await eventually(() => expect(shown('inbox')).toBe("bob's inbox"));
    expect(renders).not.toContain("alice's inbox");
    expect(provider.identity()).not.toBe(alice);
  });

  it("opaque tokens, no refresh token: whoever signs in after the token expired is someone new; user 1's inbox is gone", async () => {
    const { authServer, server } = await protectedServer(kind, {
      authServer: { opaqueTokens: true },
    });
    // An authorization server that issues no refresh tokens (common for public clients).
    const realFetch = globalThis.fetch;
    vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
      const response = await realFetch(input, init);
      const url = input instanceof Request ? input.url : String(input);
      if (!url.startsWith(authServer.url) || !url.endsWith('/token') || !response.ok) {
        return response;
      }
      const { refresh_token: _, ...body } = (await response.json()) as Record<string, unknown>;
      return Response.json(body);
    });
    const { provider, browser } = oauthProvider(server);
    const { queryClient } = renderApp({ url: server.url, authProvider: provider });
    await eventually(() => expect(shown('status')).toBe('unauthorized'));
    act(() => fireEvent.click(screen.getByText('sign in')));
    await eventually(() => expect(shown('inbox')).toBe("alice's inbox"));
    const alice = provider.identity();
    expect(provider.tokens()?.refresh_token).toBeUndefined();

    // Alice's token expires (nothing can refresh it); Bob signs in on the same screen.
    authServer.expireAccessTokens();
    server.resourceUpdated(INBOX);
    await eventually(() => expect(shown('status')).toBe('unauthorized'));
    authServer.setUser('bob');
    let cachedAtSignIn: unknown = 'not signed in yet';
    browser.after = () => {
      renders.length = 0;
      cachedAtSignIn = queryClient.getQueryData(mcpKeys.resource(INBOX));
    };
    act(() => fireEvent.click(screen.getByText('sign in')));
    await eventually(() => expect(cachedAtSignIn).not.toBe('not signed in yet'));
    expect(browser.errors).toEqual([]);
    expect(cachedAtSignIn).toBeUndefined();
    await eventually(() => expect(shown('inbox')).toBe("bob's inbox"));
    expect(renders).not.toContain("alice's inbox");
    expect(provider.identity()).not.toBe(alice);
  });

  it('opaque tokens: a scope step-up of the same sign-in is the same person (nothing is reset)', async () => {
    const { authServer, server } = await protectedServer(kind, {
      authServer: { opaqueTokens: true },
    });
    const { provider, browser } = oauthProvider(server);
    const { queryClient } = renderApp({ url: server.url, authProvider: provider });
    await eventually(() => expect(shown('status')).toBe('unauthorized'));
    act(() => fireEvent.click(screen.getByText('sign in')));
    await eventually(() => expect(shown('inbox')).toBe("alice's inbox"));
    const alice = provider.identity();
    renders.length = 0;
    // A call that needs more scope: 403 insufficient_scope, and the SDK asks for a step-up.
    act(() => fireEvent.click(screen.getByText('admin')));
    await eventually(() => expect(shown('status')).toBe('unauthorized'));
    act(() => fireEvent.click(screen.getByText('sign in')));
    await eventually(() => expect(shown('status')).toBe('ready'));
    expect(browser.errors).toEqual([]);
    expect(authServer.requestedScopes()).toEqual(['mcp', 'mcp mcp:admin']);
    expect(provider.identity()).toBe(alice);
    expect(renders).not.toContain('…');
    expect(shown('inbox')).toBe("alice's inbox");
    expect(queryClient.getQueryData(mcpKeys.resource(INBOX))).toBeDefined();
  });

  it('opaque tokens: a refresh is the same person (nothing is reset)', async () => {
    const { authServer, server } = await protectedServer(kind, {
      authServer: { opaqueTokens: true },
    });
    const { provider } = oauthProvider(server);
    const { queryClient } = renderApp({ url: server.url, authProvider: provider });
    await eventually(() => expect(shown('status')).toBe('unauthorized'));
    act(() => fireEvent.click(screen.getByText('sign in')));
    await eventually(() => expect(shown('inbox')).toBe("alice's inbox"));
    const alice = provider.identity();
    renders.length = 0;
    authServer.expireAccessTokens();
    server.store.upsert(inbox({ alice: "alice's inbox, later" }));
    server.resourceUpdated(INBOX);
    await eventually(() => expect(shown('inbox')).toBe("alice's inbox, later"));
    expect(authServer.stats().refreshes).toBeGreaterThanOrEqual(1);
    expect(provider.identity()).toBe(alice);
    expect(renders).not.toContain('…');
    expect(queryClient.getQueryData(mcpKeys.resource(INBOX))).toBeDefined();
  });
});

/** Rewrites the demo authorization server's successful /token answers (per grant type). */
function rewriteTokens(
  asUrl: string,
  change: (
    body: Record<string, unknown>,
    grant: string | null,
  ) => Promise<Record<string, unknown>> | Record<string, unknown>,
) {
  const realFetch = globalThis.fetch;
  vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
    const response = await realFetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith(asUrl) || !url.endsWith('/token') || !response.ok) return response;
    const grant = new URLSearchParams(String(init?.body ?? '')).get('grant_type');
    const body = (await response.json()) as Record<string, unknown>;
    return Response.json(await change(body, grant));
  });
}

describe('who a sign-in is, when the token answer says little (opaque tokens)', () => {
  it('a step-up with a server that omits `scope` (granted as asked, RFC 6749 5.1) is the same person', async () => {
    const { authServer, server } = await protectedServer('modern', {
      authServer: { opaqueTokens: true },
    });
    rewriteTokens(authServer.url, ({ scope: _, ...body }) => body);
    const { provider } = oauthProvider(server);
    // The first sign-in follows a 401 naming scope `mcp`.
    expect(await auth(provider, { serverUrl: server.url, scope: 'mcp' })).toBe('REDIRECT');
    await provider.authorize();
    const alice = provider.identity();
    expect(alice).toBeTruthy();
    // A refresh that omits `scope` too keeps what was held.
    authServer.expireAccessTokens();
    expect(await auth(provider, { serverUrl: server.url })).toBe('AUTHORIZED');
    expect(authServer.stats().refreshes).toBe(1);
    expect(provider.identity()).toBe(alice);
    // What the transport does on 403 insufficient_scope.
    const stepUp = { serverUrl: server.url, scope: 'mcp mcp:admin', forceReauthorization: true };
    expect(await auth(provider, stepUp)).toBe('REDIRECT');
    await provider.authorize();
    expect(authServer.requestedScopes()).toEqual(['mcp', 'mcp mcp:admin']);
    expect(provider.identity()).toBe(alice);
  });

  it('after an expiry, someone signing in is someone new even when the previous user was granted less than asked', async () => {
    const { authServer, server } = await protectedServer('modern', {
      authServer: { opaqueTokens: true },
    });
    // RFC 6749 3.3: alice is granted only `mcp` (policy), and told so; no refresh tokens.
    rewriteTokens(authServer.url, ({ refresh_token: _, ...body }) => ({ ...body, scope: 'mcp' }));
    const { provider } = oauthProvider(server);
    await provider.authorize(); // up front: asks for scopes_supported
    const alice = provider.identity();
    authServer.expireAccessTokens();
    authServer.setUser('bob');
    await provider.authorize();
    expect(authServer.requestedScopes()).toEqual(['mcp mcp:admin', 'mcp mcp:admin']);
    expect(authServer.verify(provider.tokens()?.access_token as string)?.sub).toBe('bob');
    expect(provider.identity()).not.toBe(alice);
  });

  it.each([
    ['kept', false],
    ['rotated', true],
  ])(
    "a refresh of the previous user's tokens (refresh token %s) that lands after a sign-out and someone else's sign-in saves nothing",
    async (_, rotateRefreshTokens) => {
      const { authServer, server } = await protectedServer('modern', {
        authServer: { opaqueTokens: true, rotateRefreshTokens },
      });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      rewriteTokens(authServer.url, async (body, grant) => {
        if (grant === 'refresh_token') await gate; // a slow token endpoint
        return body;
      });
      const { provider } = oauthProvider(server);
      await provider.authorize();
      // The transport's 401 → auth(): a refresh of alice's tokens, in flight.
      const refreshing = auth(provider, { serverUrl: server.url });
      await eventually(() => expect(authServer.stats().refreshes).toBe(1));
      await provider.signOut();
      authServer.setUser('bob');
      await provider.authorize();
      const bobs = provider.tokens() as { access_token: string; refresh_token?: string };
      expect(authServer.verify(bobs.access_token)?.sub).toBe('bob');
      const bob = provider.identity();
      release();
      await refreshing;
      expect(provider.identity()).toBe(bob);
      expect(provider.tokens()).toEqual(bobs);
      // Bob's own refresh still saves.
      authServer.expireAccessTokens();
      expect(await auth(provider, { serverUrl: server.url })).toBe('AUTHORIZED');
      expect(authServer.verify(provider.tokens()?.access_token as string)?.sub).toBe('bob');
      expect(provider.identity()).toBe(bob);
    },
  );
});

const NEWS = 'public://news';

/** Signed in as alice, showing only public data (so nothing is re-read when she leaves). */
async function aliceReadingNews(
  kind: (typeof ERA_CASES)[number]['kind'],
  storage = memoryStorage(),
) {
  const { authServer, server } = await protectedServer(kind, {
    resources: [text(NEWS, 'news', { cacheScope: 'public' })],
  });
  const { provider, browser } = oauthProvider(server, { storage });
  const { sync, statuses } = connect(server, provider);
  const news = observeResource(sync, NEWS);
  atEnd(news.unmount);
  await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
  sync.authorize();
  await eventually(() => expect(news.text()).toBe('news'));
  await eventually(() => expect(server.openStreams()).toBe(1));
  const token = provider.tokens()?.access_token as string;
  expect(sentWith(server, token).length).toBeGreaterThan(0);
  return { authServer, server, provider, browser, sync, statuses, news, token };
}

describe.each(ERA_CASES)(
  'leaving closes what the previous credentials opened ($kind)',
  ({ kind, era }) => {
    it('signing out ends the connection that carried the token (2025: DELETE with it) and connects again without one', async () => {
      const { server, provider, sync, token } = await aliceReadingNews(kind);
      const sessionsBefore = server.liveSessions();
      const mark = server.requests().length;
      await provider.signOut();
      await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
      await eventually(() => expect(server.openStreams()).toBe(0));
      const after = server.requests().slice(mark);
      const withToken = after.filter((request) => request.authorization === `Bearer ${token}`);
      if (era === 'legacy') {
        expect(sessionsBefore).toBe(1);
        await eventually(() => expect(server.liveSessions()).toBe(0));
        // The session ends with its own credentials, and that is the last they are used.
        expect(withToken.map((request) => request.method)).toEqual(['DELETE']);
      } else {
        expect(withToken).toEqual([]);
      }
      // A new connection was tried, without credentials.
      expect(after.some((r) => r.method === 'POST' && r.authorization === undefined)).toBe(true);
    });

    it("someone else signing in ends the previous user's connection and opens one with the new token", async () => {
      const { authServer, server, provider, sync, token } = await aliceReadingNews(kind);
      const inboxView = observeResource(sync, INBOX);
      atEnd(inboxView.unmount);
      await eventually(() => expect(inboxView.text()).toBe("alice's inbox"));
      const listens = server.counters().listenRequests;
      const mark = server.requests().length;
      // Switching accounts: alice's refresh no longer works, so authorize() signs in afresh.
      authServer.revokeRefreshTokens();
      authServer.setUser('bob');
      await provider.authorize();
      expect(provider.identity()).toBe('bob');
      await eventually(() => expect(inboxView.text()).toBe("bob's inbox"));
      await eventually(() => expect(server.openStreams()).toBe(1));
      const bobs = provider.tokens()?.access_token;
      const after = server.requests().slice(mark);
      const withAlice = after.filter((request) => request.authorization === `Bearer ${token}`);
      if (era === 'legacy') {
        await eventually(() => expect(server.liveSessions()).toBe(1));
        expect(withAlice.map((request) => request.method)).toEqual(['DELETE']);
        const sessions = new Set(after.map((r) => r.sessionId).filter(Boolean));
        expect(sessions.size).toBeGreaterThanOrEqual(1);
        expect(sentWith(server, bobs).some((r) => r.method === 'GET')).toBe(true);
      } else {
        expect(withAlice).toEqual([]);
        expect(server.counters().listenRequests).toBeGreaterThan(listens);
      }
      expect(sync.getState().status).toBe('ready');
    });

    it('signing out while a refresh is in flight: the refreshed tokens are dropped, nobody is signed in', async () => {
      const { authServer, server, provider, sync } = await aliceReadingNews(kind);
      // The authorization server answers the refresh only once the user has signed out.
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let refreshing = false;
      const realFetch = globalThis.fetch;
      vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
        const response = await realFetch(input, init);
        if (!String(init?.body).includes('grant_type=refresh_token')) return response;
        refreshing = true;
        await held;
        return response;
      });
      authServer.expireAccessTokens();
      server.store.upsert(text(NEWS, 'later news', { cacheScope: 'public' }));
      server.resourceUpdated(NEWS);
      await eventually(() => expect(refreshing).toBe(true));
      await provider.signOut();
      const saved = vi.spyOn(provider, 'saveTokens');
      release();
      // The refresh comes back and offers its tokens: they are not kept.
      await eventually(() => expect(saved).toHaveBeenCalled());
      expect(provider.tokens()).toBeUndefined();
      expect(provider.identity()).toBeUndefined();
      await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
      expect(provider.tokens()).toBeUndefined();
    });

    it('signOut() forgets tokens, identity, verifier and state, and revokes the refresh token', async () => {
      const storage = memoryStorage();
      const written = new Map<string, string>();
      const watched = {
        getItem: (key: string) => storage.getItem(key),
        setItem: (key: string, value: string) => {
          written.set(key, value);
          storage.setItem(key, value);
        },
        removeItem: (key: string) => {
          written.delete(key);
          storage.removeItem(key);
        },
      };
      const { authServer, provider, sync } = await aliceReadingNews(kind, watched);
      const refresh = provider.tokens()?.refresh_token as string;
      // A step-up leaves a sign-in waiting for the user: its state and verifier are stored.
      await expect(callTool(sync, { name: 'admin-only' })).rejects.toThrow();
      await eventually(() => expect(provider.pendingAuthorization).toBeDefined());
      const state = provider.pendingAuthorization?.searchParams.get('state') as string;
      expect([...written.values()].join()).toContain(state);

      await provider.signOut();
      const everything = [...written.values()].join();
      expect(provider.tokens()).toBeUndefined();
      expect(provider.identity()).toBeUndefined();
      expect(provider.pendingAuthorization).toBeUndefined();
      expect(everything).not.toContain(refresh);
      expect(everything).not.toContain(state);
      expect(everything).not.toMatch(
        /"(verifier|state|returnTo|access_token|refresh_token|identity)":/,
      );
      expect(authServer.stats()).toMatchObject({ revocations: 1, revokedTokens: [refresh] });
    });
  },
);
