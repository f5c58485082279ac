/**
 * `@modelcontextprotocol/client` before 2.4.0 (2.0.0 to 2.3.1, all admitted by the peer range
 * `^2.0.0`) refreshes without calling `scopeForRefresh`: the provider is never told which tokens
 * a refresh started from. Refreshes must still work then, as they did before 13a5e17: the answer
 * saved, and a refresh token the authorization server refuses (`invalid_grant`) discarded so the
 * user is asked to sign in again. The SDK here is 2.4.0; it is shown the provider without
 * `scopeForRefresh`, which is all that differs in the older SDKs' `auth()` (the refresh path is
 * the same code otherwise). Real servers behind the demo authorization server; the refresh is
 * the connection's own, started by its 401.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OAuthProvider } from '../../src/auth';
import { atEnd } from '../support/atEnd';
import { ERA_CASES } from '../support/eras';
import { closeAll, connect, INBOX, oauthProvider, protectedServer } from '../support/oauth';
import { observeResource } from '../support/observe';
import { eventually } from '../support/wait';

afterEach(closeAll);

/** The provider as an SDK before 2.4.0 sees it: it never names the tokens it refreshes. */
function withoutScopeForRefresh(provider: OAuthProvider): OAuthProvider {
  return new Proxy(provider, {
    get(target, key) {
      if (key === 'scopeForRefresh') return undefined;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    has: (target, key) => key !== 'scopeForRefresh' && Reflect.has(target, key),
  });
}

async function aliceReadsHerInbox(kind: (typeof ERA_CASES)[number]['kind']) {
  const { authServer, server } = await protectedServer(kind, {
    authServer: { rotateRefreshTokens: true, revocation: true },
  });
  const { provider } = oauthProvider(server);
  const { sync } = connect(server, withoutScopeForRefresh(provider));
  const inbox = observeResource(sync, INBOX);
  atEnd(inbox.unmount);
  await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
  await provider.authorize();
  await eventually(() => expect(inbox.text()).toBe("alice's inbox"));
  return { authServer, server, provider, sync, inbox };
}

describe.each(ERA_CASES)('a refresh the SDK does not name ($kind)', ({ kind }) => {
  it('succeeding: its tokens are saved and the connection goes on with them', async () => {
    const { authServer, server, provider, sync, inbox } = await aliceReadsHerInbox(kind);
    const before = provider.tokens();
    const refreshes = authServer.stats().refreshes;
    authServer.expireAccessTokens();
    server.resourceUpdated(INBOX);
    await eventually(() => expect(authServer.stats().refreshes).toBe(refreshes + 1));
    await eventually(() => expect(provider.tokens()?.access_token).not.toBe(before?.access_token));
    expect(provider.tokens()?.refresh_token).not.toBe(before?.refresh_token);
    expect(provider.identity()).toBeDefined();
    await eventually(() => expect(sync.getState().status).toBe('ready'));
    expect(inbox.text()).toBe("alice's inbox");
  });

  it('failing invalid_grant: the dead tokens go and a new sign-in is asked for', async () => {
    const { authServer, server, provider } = await aliceReadsHerInbox(kind);
    const errors = authServer.stats().tokenErrors;
    authServer.revokeRefreshTokens();
    authServer.expireAccessTokens();
    server.resourceUpdated(INBOX);
    await eventually(() => expect(authServer.stats().tokenErrors).toBeGreaterThan(errors));
    await eventually(() => expect(provider.tokens()).toBeUndefined());
    await eventually(() => expect(provider.pendingAuthorization).toBeDefined());
  });
});
