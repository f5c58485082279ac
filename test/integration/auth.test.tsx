/** @vitest-environment jsdom */
/**
 * OAuth (issue 11, part 1) against the three real servers behind the demo authorization server
 * (test/servers/authServer.ts): `createOAuthProvider` with a `navigate` that plays the browser
 * headlessly (follow the authorization URL to its redirect, hand the callback URL to the
 * provider). Nothing is mocked: discovery, registration, PKCE, `state` and `iss`, refresh and
 * step-up all happen on the wire.
 */
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { callTool, type McpProviderProps, mcpKeys, useMcp, useResource } from '../../src';
import { memoryStorage } from '../../src/auth';
import type { ServerKind } from '../servers';
import { ERA_CASES } from '../support/eras';
import {
  atEnd,
  closeAll,
  connect,
  FAST,
  INBOX,
  oauthProvider,
  protectedServer,
} from '../support/oauth';
import { renderWithProvider } from '../support/oauthApp';
import { observeResource } from '../support/observe';
import { disposeSyncs } from '../support/syncs';
import { eventually, idle } from '../support/wait';

afterEach(async () => {
  cleanup();
  await disposeSyncs();
  await closeAll();
});

async function signedIn(kind: ServerKind) {
  const { authServer, server } = await protectedServer(kind);
  const { provider, browser } = oauthProvider(server);
  const { sync, statuses } = connect(server, provider);
  await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
  sync.authorize();
  await eventually(() => expect(sync.getState().status).toBe('ready'));
  return { authServer, server, provider, browser, sync, statuses };
}

describe.each(ERA_CASES)('OAuth ($kind)', ({ kind }) => {
  it('without a token the connection is unauthorized, names the URL, and is not retried', async () => {
    const { authServer, server } = await protectedServer(kind);
    const { provider, browser } = oauthProvider(server);
    // Fake timers before connecting: a retry, had one been scheduled, would be on them.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    atEnd(() => vi.useRealTimers());
    const { sync } = connect(server, provider);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    expect(sync.getState().error?.message).toContain(server.url);
    // The SDK discovered the authorization server and registered; the user was not sent
    // anywhere yet (that needs authorize(), i.e. a gesture).
    expect(provider.pendingAuthorization?.origin).toBe(authServer.url);
    expect(browser.visited).toEqual([]);
    expect(authServer.stats()).toMatchObject({ registrations: 1, authorizations: 0 });
    const challenged = server.protection?.stats().challenged ?? 0;
    expect(challenged).toBeGreaterThan(0);
    // Nothing is tried while waiting for the user, however long: no attempt is scheduled (a
    // backoff would say when), and none starts when many backoff periods have passed.
    expect(sync.getState()).toMatchObject({ status: 'unauthorized', nextRetryAt: undefined });
    await vi.advanceTimersByTimeAsync(FAST.maxDelayMs * 10);
    expect(sync.getState().status).toBe('unauthorized');
    expect(server.protection?.stats()).toMatchObject({ challenged, accepted: 0 });
  });

  it('authorize() signs in and the connection resumes by itself; data loads', async () => {
    const { authServer, server } = await protectedServer(kind);
    const { provider, browser } = oauthProvider(server);
    const { sync, statuses } = connect(server, provider);
    const inbox = observeResource(sync, INBOX);
    atEnd(inbox.unmount);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    sync.authorize(); // no reconnect() anywhere: the token's arrival resumes the connection
    await eventually(() => expect(inbox.text()).toBe("alice's inbox"));
    expect(sync.getState().status).toBe('ready');
    expect(statuses.slice(statuses.indexOf('unauthorized'))).not.toContain('error');
    expect(browser.visited).toHaveLength(1);
    expect(browser.errors).toEqual([]);
    expect(authServer.stats()).toMatchObject({ authorizations: 1, codeExchanges: 1 });
    expect(provider.identity()).toBe('alice');
  });

  it('authorize() before any 401 discovers and signs in up front', async () => {
    const { authServer, server } = await protectedServer(kind);
    const { provider, browser } = oauthProvider(server);
    await provider.authorize();
    expect(browser.errors).toEqual([]);
    expect(provider.tokens()?.access_token).toBeTruthy();
    const { sync, statuses } = connect(server, provider);
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    expect(statuses).not.toContain('unauthorized');
    expect(authServer.stats().authorizations).toBe(1);
  });

  it('an expired access token is refreshed without the user', async () => {
    const { authServer, server, sync, statuses } = await signedIn(kind);
    const inbox = observeResource(sync, INBOX);
    atEnd(inbox.unmount);
    await eventually(() => expect(inbox.text()).toBe("alice's inbox"));
    const before = statuses.length;
    authServer.expireAccessTokens();
    server.store.upsert({
      uri: INBOX,
      name: 'inbox',
      text: 'nobody',
      textByUser: { alice: "alice's inbox, later" },
      cacheScope: 'private',
    });
    server.resourceUpdated(INBOX);
    await eventually(() => expect(inbox.text()).toBe("alice's inbox, later"));
    expect(statuses.slice(before)).not.toContain('unauthorized');
    expect(sync.getState().status).toBe('ready');
    expect(authServer.stats()).toMatchObject({ authorizations: 1 });
    expect(authServer.stats().refreshes).toBeGreaterThanOrEqual(1);
  });

  it('when the refresh token is refused too, a read makes the connection unauthorized', async () => {
    const { authServer, server, sync, browser } = await signedIn(kind);
    const inbox = observeResource(sync, INBOX);
    atEnd(inbox.unmount);
    await eventually(() => expect(inbox.text()).toBe("alice's inbox"));
    authServer.expireAccessTokens();
    authServer.revokeRefreshTokens();
    server.resourceUpdated(INBOX); // the re-read is refused: 401, refresh fails, no token left
    await eventually(() => expect(authServer.stats().tokenErrors).toBe(1));
    await eventually(() => expect(inbox.result().error?.message).toBeTruthy());
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'), { timeout: 1000 });
    sync.authorize();
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    await eventually(() => expect(inbox.text()).toBe("alice's inbox"));
    expect(browser.visited).toHaveLength(2);
  });

  it('step-up: a call needing a broader scope → unauthorized → authorize → it succeeds with the union', async () => {
    const { authServer, server, provider, sync } = await signedIn(kind);
    expect((await callTool(sync, { name: 'plain' })).isError).toBeFalsy();
    await expect(callTool(sync, { name: 'admin-only' })).rejects.toThrow();
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    expect(server.protection?.stats().forbidden).toBe(1);
    sync.authorize();
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    const result = await callTool(sync, { name: 'admin-only' });
    expect(result.isError).toBeFalsy();
    expect(result.content[0]).toMatchObject({ text: 'called admin-only with {}' });
    expect(authServer.requestedScopes()).toEqual(['mcp', 'mcp mcp:admin']);
    expect(authServer.verify(provider.tokens()?.access_token ?? '')?.scope).toBe('mcp mcp:admin');
    expect(provider.identity()).toBe('alice');
  });

  it('a sign-in in progress survives a request refused meanwhile', async () => {
    const { server } = await protectedServer(kind);
    const { provider, browser } = oauthProvider(server);
    const { sync } = connect(server, provider);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    const started = provider.pendingAuthorization;
    browser.meanwhile = async () => {
      // The user is on the authorization page; meanwhile a request is refused (here: the
      // connection tries again) and the SDK starts an authorization for it, which must not
      // replace the one in progress.
      const challenged = server.protection?.stats().challenged ?? 0;
      sync.reconnect();
      await eventually(() =>
        expect(server.protection?.stats().challenged ?? 0).toBeGreaterThan(challenged),
      );
      await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
      expect(provider.pendingAuthorization).toBe(started);
    };
    sync.authorize();
    await eventually(() => expect(browser.visited).toHaveLength(1));
    await eventually(() => expect(sync.getState().status).toBe('ready'), { timeout: 1000 });
    expect(browser.errors).toEqual([]);
  });

  it('a callback with a wrong state is rejected and nothing is redeemed', async () => {
    const { authServer, server } = await protectedServer(kind);
    const { provider, browser } = oauthProvider(server, {
      browser: {
        tamper: (callback) => {
          const forged = new URL(callback);
          forged.searchParams.set('state', 'forged');
          return forged;
        },
      },
    });
    const { sync } = connect(server, provider);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    sync.authorize();
    await eventually(() => expect(browser.errors).toHaveLength(1));
    expect(String(browser.errors[0])).toMatch(/state mismatch/);
    expect(authServer.stats().codeExchanges).toBe(0);
    expect(provider.tokens()).toBeUndefined();
    expect(sync.getState().status).toBe('unauthorized');
  });

  it('tokens saved by another tab resume the connection (a storage event, as browsers send)', async () => {
    const { authServer, server } = await protectedServer(kind);
    const storage = memoryStorage();
    const first = oauthProvider(server, { storage, storageKey: 'shared' });
    const { sync } = connect(server, first.provider);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    const other = oauthProvider(server, { storage, storageKey: 'shared' });
    await other.provider.authorize();
    expect(other.browser.errors).toEqual([]);
    // What a browser does in every other tab when one writes the key.
    window.dispatchEvent(new StorageEvent('storage', { key: 'shared' }));
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    expect(first.browser.visited).toEqual([]);
    expect(authServer.stats().authorizations).toBe(1);
  });

  it('tokens saved by another provider on the same storage, same page, resume the connection', async () => {
    const { server } = await protectedServer(kind);
    const storage = memoryStorage();
    const first = oauthProvider(server, { storage, storageKey: 'shared' });
    const { sync } = connect(server, first.provider);
    await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
    const other = oauthProvider(server, { storage, storageKey: 'shared' });
    await other.provider.authorize();
    expect(other.browser.errors).toEqual([]);
    await eventually(() => expect(sync.getState().status).toBe('ready'), { timeout: 1000 });
  });
});

// ── React ───────────────────────────────────────────────────────────────────

const renders: string[] = [];

function Inbox() {
  const query = useResource(INBOX);
  const content = query.data?.contents[0];
  const shown = content && 'text' in content ? content.text : '…';
  renders.push(shown);
  return <div data-testid="inbox">{shown}</div>;
}

function SignIn() {
  const { status, authorize, error } = useMcp();
  return (
    <div>
      <div data-testid="status">{status}</div>
      <div data-testid="error">{error?.message ?? ''}</div>
      <button type="button" onClick={authorize}>
        sign in
      </button>
    </div>
  );
}

function renderApp(props: Partial<McpProviderProps> & { url: string }) {
  return renderWithProvider(
    props,
    <>
      <SignIn />
      <Inbox />
    </>,
  );
}

const shown = (id: string) => screen.getByTestId(id).textContent;

describe.each(ERA_CASES)('OAuth in React ($kind)', ({ kind }) => {
  it('useMcp() shows unauthorized and its authorize() signs in; the data renders', async () => {
    const { authServer, server } = await protectedServer(kind);
    const { provider } = oauthProvider(server);
    renderApp({ url: server.url, authProvider: provider });
    await eventually(() => expect(shown('status')).toBe('unauthorized'));
    expect(shown('error')).toContain(server.url);
    act(() => fireEvent.click(screen.getByText('sign in')));
    await eventually(() => expect(shown('inbox')).toBe("alice's inbox"));
    expect(shown('status')).toBe('ready');
    expect(authServer.stats().authorizations).toBe(1);
  });

  it("private data follows the signed-in user: alice's is never rendered for bob", async () => {
    const { authServer, server } = await protectedServer(kind);
    const { provider, browser } = oauthProvider(server);
    const { queryClient } = renderApp({ url: server.url, authProvider: provider });
    await eventually(() => expect(shown('status')).toBe('unauthorized'));
    act(() => fireEvent.click(screen.getByText('sign in')));
    await eventually(() => expect(shown('inbox')).toBe("alice's inbox"));

    renders.length = 0;
    act(() => {
      void provider.signOut();
    });
    // Signed out: alice's private data leaves the cache at once, and the screen with the next
    // render (TanStack notifies observers on its next tick).
    expect(queryClient.getQueryData(mcpKeys.resource(INBOX))).toBeUndefined();
    await eventually(() => expect(shown('inbox')).toBe('…'));
    // The re-read without a token is refused; the SDK starts a sign-in of its own for it (see
    // "a sign-in in progress survives a request refused meanwhile"): let that settle first.
    await eventually(() =>
      expect(queryClient.getQueryState(mcpKeys.resource(INBOX))?.status).toBe('error'),
    );
    authServer.setUser('bob');
    act(() => fireEvent.click(screen.getByText('sign in')));
    await eventually(() => expect(shown('inbox')).toBe("bob's inbox"));
    expect(browser.errors).toEqual([]);
    expect(renders).not.toContain("alice's inbox");
    expect(provider.identity()).toBe('bob');
    expect(queryClient.getQueryData(mcpKeys.resource(INBOX))).toMatchObject({
      contents: [{ text: "bob's inbox" }],
    });
  });

  it('signing out makes the connection unauthorized once the server refuses a request', async () => {
    const { server } = await protectedServer(kind);
    const { provider } = oauthProvider(server);
    renderApp({ url: server.url, authProvider: provider });
    await eventually(() => expect(shown('status')).toBe('unauthorized'));
    act(() => fireEvent.click(screen.getByText('sign in')));
    await eventually(() => expect(shown('inbox')).toBe("alice's inbox"));
    // The connection ends and connects again, without a token: 401.
    act(() => {
      void provider.signOut();
    });
    await eventually(() => expect(shown('status')).toBe('unauthorized'));
  });

  it("an explicit authContext wins over the provider's identity", async () => {
    const { server } = await protectedServer(kind);
    const { provider } = oauthProvider(server);
    const { queryClient } = renderApp({
      url: server.url,
      authProvider: provider,
      authContext: 'team-1',
    });
    await eventually(() => expect(shown('status')).toBe('unauthorized'));
    act(() => fireEvent.click(screen.getByText('sign in')));
    await eventually(() => expect(shown('inbox')).toBe("alice's inbox"));
    renders.length = 0;
    act(() => {
      void provider.signOut();
    });
    // The partition is the app's: nothing is reset, not even once the server refuses the next
    // read for want of a token (so the sign-out has certainly been taken in).
    act(() => server.resourceUpdated(INBOX));
    await eventually(() => expect(shown('status')).toBe('unauthorized'));
    await idle(queryClient);
    expect(renders).not.toContain('…');
    expect(shown('inbox')).toBe("alice's inbox");
    expect(queryClient.getQueryData(mcpKeys.resource(INBOX))).toMatchObject({
      contents: [{ text: "alice's inbox" }],
    });
  });
});
