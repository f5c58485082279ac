/**
 * A refresh of one user's tokens that comes back after someone else signed in on the same
 * provider (same storage key) settles nothing of theirs: neither its failure (`invalid_grant`,
 * which makes the SDK discard tokens) nor its success (tokens of the previous user). The refresh
 * is started by the connection's 401 on the real servers behind the demo authorization server,
 * and held at the token endpoint until the next user is signed in.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OAuthProvider } from '../../src/auth';
import { callTool } from '../../src/core';
import { deferred } from '../support/deferred';
import { ERA_CASES } from '../support/eras';
import {
  atEnd,
  closeAll,
  INBOX,
  oauthProvider,
  protectedServer,
  readingInbox,
} from '../support/oauth';
import { eventually } from '../support/wait';

afterEach(async () => {
  vi.unstubAllGlobals();
  await closeAll();
});

/** The first refresh sent to the token endpoint waits until `release()`; the others go at once. */
function holdFirstRefresh() {
  const gate = deferred<void>();
  let held = false;
  const realFetch = globalThis.fetch;
  vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
    if (!held && String(init?.body).includes('grant_type=refresh_token')) {
      held = true;
      await gate.promise;
    }
    return realFetch(input, init);
  });
  atEnd(() => gate.resolve());
  return { held: () => held, release: () => gate.resolve() };
}

/**
 * Alice reads her inbox; her access token expires and the connection's refresh of it is held;
 * she signs out and bob signs in on the same provider. `revoke`: alice's refresh token is dead by
 * the time her refresh reaches the authorization server.
 */
async function bobSignedInWhileAlicesRefreshIsHeld(
  kind: (typeof ERA_CASES)[number]['kind'],
  options: { revoke: boolean; opaqueTokens?: boolean },
) {
  const { authServer, server } = await protectedServer(kind, {
    authServer: {
      rotateRefreshTokens: true,
      revocation: options.revoke,
      opaqueTokens: options.opaqueTokens ?? false,
    },
  });
  const { provider } = oauthProvider(server);
  const { sync, inbox } = await readingInbox(server, provider);

  const refresh = holdFirstRefresh();
  authServer.expireAccessTokens();
  server.resourceUpdated(INBOX);
  await eventually(() => expect(refresh.held()).toBe(true));
  await provider.signOut();
  if (options.revoke) authServer.revokeRefreshTokens();
  authServer.setUser('bob');
  // Signing in as the connection's 401 asks (scope `mcp`, not everything the server offers).
  await eventually(() => expect(provider.pendingAuthorization).toBeDefined());
  await provider.authorize();
  await eventually(() => expect(inbox.text()).toBe("bob's inbox"));
  const bobs = provider.tokens();
  expect(authServer.verify(bobs?.access_token as string)?.sub).toBe('bob');
  return { authServer, server, provider, sync, inbox, bobs, release: refresh.release };
}

const subjectOf = (
  authServer: { verify(token: string): { sub: string } | undefined },
  provider: OAuthProvider,
) => authServer.verify(provider.tokens()?.access_token ?? '')?.sub;

describe.each(ERA_CASES)("a late refresh of the previous user's tokens ($kind)", ({ kind }) => {
  it('failing invalid_grant after someone else signed in: they stay signed in, their tokens kept', async () => {
    const { authServer, provider, sync, inbox, release } =
      await bobSignedInWhileAlicesRefreshIsHeld(kind, { revoke: true });
    const invalidated = vi.spyOn(provider, 'invalidateCredentials');
    const errors = authServer.stats().tokenErrors;
    release();
    // Alice's refresh is refused, and the SDK asks to discard "the" tokens: bob's are held now.
    await eventually(() => expect(invalidated).toHaveBeenCalledWith('tokens'));
    expect(authServer.stats().tokenErrors).toBe(errors + 1);
    expect(provider.identity()).toBe('bob');
    expect(subjectOf(authServer, provider)).toBe('bob');
    await eventually(() => expect(provider.pendingAuthorization).toBeUndefined());
    expect(sync.getState().status).toBe('ready');
    expect(inbox.text()).toBe("bob's inbox");
  });
});

describe("a late refresh of the previous user's tokens, while the next user's own are handed out", () => {
  it("succeeding (rotated) after the next user's step-up started: their tokens stay theirs", async () => {
    const { authServer, provider, sync, bobs, release } = await bobSignedInWhileAlicesRefreshIsHeld(
      'modern',
      { revoke: false, opaqueTokens: true },
    );
    // Bob calls a tool that needs more scope: 403 insufficient_scope, and the SDK's step-up
    // takes his tokens (to see what is held) and hands out an authorization URL.
    await expect(callTool(sync, { name: 'admin-only' })).rejects.toThrow();
    await eventually(() => expect(provider.pendingAuthorization).toBeDefined());
    const saved = vi.spyOn(provider, 'saveTokens');
    const refreshes = authServer.stats().refreshes;
    release();
    // Alice's refresh succeeds and offers her (rotated) tokens: they are not bob's to hold.
    await eventually(() => expect(saved).toHaveBeenCalled());
    expect(authServer.stats().refreshes).toBe(refreshes + 1);
    expect(subjectOf(authServer, provider)).toBe('bob');
    expect(provider.tokens()).toEqual(bobs);
  });

  it("failing invalid_grant after the next user's step-up started: their tokens are kept", async () => {
    const { authServer, provider, sync, bobs, release } = await bobSignedInWhileAlicesRefreshIsHeld(
      'modern',
      { revoke: true },
    );
    await expect(callTool(sync, { name: 'admin-only' })).rejects.toThrow();
    await eventually(() => expect(provider.pendingAuthorization).toBeDefined());
    const invalidated = vi.spyOn(provider, 'invalidateCredentials');
    release();
    await eventually(() => expect(invalidated).toHaveBeenCalledWith('tokens'));
    expect(provider.identity()).toBe('bob');
    // After the refusal the SDK retries its authorization with the tokens held now, bob's, and
    // may refresh them once (rotated: a new refresh token, still bob's). Whether that retry has
    // finished by now depends on the machine's load, so what is checked is whose they are, once
    // any refresh in flight has landed.
    await eventually(() =>
      expect(authServer.refreshSubject(provider.tokens()?.refresh_token)).toBe('bob'),
    );
    expect(authServer.stats().refreshes).toBeLessThanOrEqual(1);
    expect(subjectOf(authServer, provider)).toBe('bob');
    if (provider.tokens()?.refresh_token === bobs?.refresh_token) {
      expect(provider.tokens()).toEqual(bobs);
    }
  });
});
