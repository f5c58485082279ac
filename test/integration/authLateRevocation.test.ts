/**
 * Signing out revokes the refresh token (RFC 7009, SECURITY.md), and that holds for tokens that
 * arrive after the sign-out too: a code exchange or a refresh still in flight when the user
 * signs out (or removes the server) saves nothing, and the refresh token its answer carries,
 * which nothing holds, is revoked, so the grant the user left does not stay alive at the
 * authorization server. Real servers behind the demo authorization server; the token
 * endpoint's answer is held until the user has signed out.
 */
import { auth } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deferred } from '../support/deferred';
import { atEnd, closeAll, oauthProvider, protectedServer } from '../support/oauth';
import { eventually } from '../support/wait';

afterEach(async () => {
  vi.unstubAllGlobals();
  await closeAll();
});

/** Answers of `grant` at the token endpoint wait for `release()`; `issued` are their refresh tokens. */
function holdAnswers(grant: 'authorization_code' | 'refresh_token') {
  const gate = deferred<void>();
  atEnd(() => gate.resolve());
  const issued: string[] = [];
  const realFetch = globalThis.fetch;
  vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
    const response = await realFetch(input, init);
    if (!String(init?.body).includes(`grant_type=${grant}`) || !response.ok) return response;
    const body = (await response.clone().json()) as { refresh_token?: string };
    if (body.refresh_token) issued.push(body.refresh_token);
    await gate.promise;
    return response;
  });
  return { issued, release: () => gate.resolve() };
}

describe('tokens that arrive after signing out', () => {
  it("a refresh in flight (refresh tokens rotated): its answer's refresh token is revoked", async () => {
    const { authServer, server } = await protectedServer('modern', {
      authServer: { rotateRefreshTokens: true },
    });
    const { provider } = oauthProvider(server);
    await provider.authorize();
    const answers = holdAnswers('refresh_token');
    authServer.expireAccessTokens();
    const refreshing = auth(provider, { serverUrl: server.url });
    await eventually(() => expect(answers.issued).toHaveLength(1));
    // The old refresh token is retired by the refresh: revoking it at sign-out ends nothing.
    await provider.signOut();
    const late = answers.issued[0] as string;
    expect(authServer.refreshSubject(late)).toBe('alice');
    answers.release();
    await refreshing;
    expect(provider.tokens()).toBeUndefined();
    await eventually(() => expect(authServer.refreshSubject(late)).toBeUndefined());
  });

  it('a code exchange in flight: its refresh token is revoked', async () => {
    const { authServer, server } = await protectedServer('modern');
    const answers = holdAnswers('authorization_code');
    const { provider, browser } = oauthProvider(server);
    const signingIn = provider.authorize();
    await eventually(() => expect(answers.issued).toHaveLength(1));
    await provider.signOut();
    answers.release();
    await signingIn;
    expect(browser.errors).toMatchObject([{ code: 'CANCELLED' }]);
    expect(provider.tokens()).toBeUndefined();
    const late = answers.issued[0] as string;
    expect(authServer.refreshSubject(late)).toBeUndefined();
  });
});
