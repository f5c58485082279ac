/** @vitest-environment jsdom */
/**
 * Refreshes of one user's refresh token that overlap, at an authorization server that rotates
 * refresh tokens (each works once): the SDK refreshes once per 401 it gets, so the requests
 * that meet an expired access token together (in one page, or in two tabs sharing `'local'`
 * storage) each refresh the same token. One wins and brings the user's new tokens; the others
 * fail `invalid_grant`, which makes the SDK discard the held tokens. Whichever answer comes
 * first, the user stays signed in with the winner's tokens. Real servers behind the demo
 * authorization server; the winner's answer is held at the token endpoint until the losers'
 * failures are handled (a server that retires the old token before it finishes issuing).
 */
import { auth } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type KeyValueStorage, memoryStorage } from '../../src/auth';
import { deferred } from '../support/deferred';
import {
  atEnd,
  closeAll,
  INBOX,
  oauthProvider,
  protectedServer,
  readingInbox,
  sentWith,
} from '../support/oauth';
import { eventually } from '../support/wait';

afterEach(async () => {
  vi.unstubAllGlobals();
  await closeAll();
});

/** Refresh answers that succeeded wait for `release()`; failed ones arrive at once. */
function holdSuccessfulRefreshes() {
  const gate = deferred<void>();
  atEnd(() => gate.resolve());
  let answered = 0;
  const realFetch = globalThis.fetch;
  vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
    const response = await realFetch(input, init);
    if (!String(init?.body).includes('grant_type=refresh_token')) return response;
    answered += 1;
    if (response.ok) await gate.promise;
    return response;
  });
  return { answered: () => answered, release: () => gate.resolve() };
}

async function aliceReadingHerInbox(storage: KeyValueStorage = memoryStorage()) {
  const { authServer, server } = await protectedServer('modern', {
    authServer: { rotateRefreshTokens: true },
  });
  const { provider } = oauthProvider(server, { storage, storageKey: 'shared' });
  const { sync, inbox } = await readingInbox(server, provider);
  return { authServer, server, provider, sync, inbox };
}

describe('two refreshes of one rotating refresh token at once', () => {
  it("in one page, the loser's invalid_grant answered first: the winner's tokens are kept, alice stays signed in", async () => {
    const { authServer, server, provider, sync, inbox } = await aliceReadingHerInbox();
    const alice = provider.identity();
    const refreshes = holdSuccessfulRefreshes();
    authServer.expireAccessTokens();
    // What the transport does for each request that meets the expired token (its 401).
    const first = auth(provider, { serverUrl: server.url });
    const second = auth(provider, { serverUrl: server.url });
    await eventually(() => expect(refreshes.answered()).toBe(2));
    // The loser's failure is handled: it discarded the tokens and asked for a sign-in.
    await expect(Promise.race([first, second])).resolves.toBe('REDIRECT');
    refreshes.release();
    expect((await Promise.all([first, second])).sort()).toEqual(['AUTHORIZED', 'REDIRECT']);
    expect(authServer.stats()).toMatchObject({ refreshes: 1, tokenErrors: 1 });

    const tokens = provider.tokens();
    expect(authServer.verify(tokens?.access_token ?? '')?.sub).toBe('alice');
    expect(authServer.refreshSubject(tokens?.refresh_token)).toBe('alice');
    expect(provider.identity()).toBe(alice);
    expect(provider.pendingAuthorization).toBeUndefined();
    // The connection goes on with them: the next read carries the new token, no sign-in asked.
    server.resourceUpdated(INBOX);
    await eventually(() =>
      expect(sentWith(server, tokens?.access_token).length).toBeGreaterThan(0),
    );
    expect(sync.getState().status).toBe('ready');
    expect(inbox.text()).toBe("alice's inbox");
    expect(authServer.stats().codeExchanges).toBe(1);
  });

  it("in two tabs sharing the storage, the loser's discard heard first: the winner's tokens are kept in both", async () => {
    const browser = memoryStorage();
    // Each tab's view of the browser's storage: another tab's write reaches it by a storage event.
    const tabA: KeyValueStorage = { ...browser };
    const tabB: KeyValueStorage = { ...browser };
    const { authServer, server, provider } = await aliceReadingHerInbox(tabA);
    const other = oauthProvider(server, { storage: tabB, storageKey: 'shared' }).provider;
    expect(other.tokens()).toEqual(provider.tokens());
    const refreshes = holdSuccessfulRefreshes();
    authServer.expireAccessTokens();
    const inA = auth(provider, { serverUrl: server.url });
    await eventually(() => expect(refreshes.answered()).toBe(1));
    // Tab B's refresh of the same token fails, and tab A hears B discard the tokens.
    await expect(auth(other, { serverUrl: server.url })).resolves.toBe('REDIRECT');
    window.dispatchEvent(new StorageEvent('storage', { key: 'shared' }));
    expect(provider.tokens()).toBeUndefined();
    refreshes.release();
    await expect(inA).resolves.toBe('AUTHORIZED');
    window.dispatchEvent(new StorageEvent('storage', { key: 'shared' }));

    for (const tab of [provider, other]) {
      const tokens = tab.tokens();
      expect(authServer.verify(tokens?.access_token ?? '')?.sub).toBe('alice');
      expect(authServer.refreshSubject(tokens?.refresh_token)).toBe('alice');
    }
  });

  it("opaque tokens: alice's winning refresh answered after bob signed in and his refresh failed is not kept as his", async () => {
    const { authServer, server } = await protectedServer('modern', {
      authServer: { rotateRefreshTokens: true, opaqueTokens: true },
    });
    const { provider } = oauthProvider(server);
    await provider.authorize();
    const refreshes = holdSuccessfulRefreshes();
    authServer.expireAccessTokens();
    const alices = [
      auth(provider, { serverUrl: server.url }),
      auth(provider, { serverUrl: server.url }),
    ];
    await eventually(() => expect(refreshes.answered()).toBe(2));
    await expect(Promise.race(alices)).resolves.toBe('REDIRECT');
    // Bob signs in on the sign-in asked for; then his refresh fails (his grant revoked).
    authServer.setUser('bob');
    await provider.authorize();
    const bob = provider.identity();
    expect(authServer.verify(provider.tokens()?.access_token ?? '')?.sub).toBe('bob');
    authServer.revokeRefreshTokens();
    await expect(auth(provider, { serverUrl: server.url })).resolves.toBe('REDIRECT');
    expect(provider.tokens()).toBeUndefined();

    // Alice's refresh that won comes back: her tokens are not bob's.
    refreshes.release();
    await Promise.all(alices);
    expect(provider.tokens()).toBeUndefined();
    expect(provider.identity()).toBe(bob);
  });
});
