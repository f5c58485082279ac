// @vitest-environment node
/**
 * The demo authorization server and the protected MCP servers, driven by the bare SDK client
 * with a minimal in-memory OAuthClientProvider (the package's own provider is tested in
 * test/integration/auth.test.tsx): discovery, registration, PKCE, `state` and `iss` in the
 * redirect, refresh, per-user content, and the 401 / 403 challenges a client must act on.
 */
import { createHash } from 'node:crypto';
import {
  auth,
  Client,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AuthServer,
  ResourceStore,
  SERVER_KINDS,
  type ServerKind,
  startAuthServer,
  startServer,
  type TestServer,
} from './index';

const REDIRECT = 'http://127.0.0.1:1/callback';

class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  discovery: OAuthDiscoveryState | undefined;
  pending: URL | undefined;
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'servers-auth-test',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  state() {
    return 'the-state';
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.pending = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function setUp(kind: ServerKind) {
  const authServer = await startAuthServer();
  cleanups.push(() => authServer.close());
  const store = new ResourceStore([
    {
      uri: 'secret://inbox',
      name: 'inbox',
      text: 'nobody',
      textByUser: { alice: "alice's inbox", bob: "bob's inbox" },
    },
  ]);
  store.setTools([{ name: 'plain' }, { name: 'admin-only' }]);
  const server = await startServer(kind, {
    store,
    auth: { authServer, toolScopes: { 'admin-only': 'mcp:admin' } },
  });
  cleanups.push(() => server.close());
  return { authServer, server };
}

/** The browser's part: follow the authorization URL to the redirect, without following it. */
async function visit(url: URL, user?: string): Promise<URL> {
  if (user) url.searchParams.set('user', user);
  const response = await fetch(url, { redirect: 'manual' });
  expect(response.status).toBe(302);
  return new URL(response.headers.get('location') ?? '');
}

async function signIn(server: TestServer, provider: MemoryProvider, user?: string) {
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    authProvider: provider,
  });
  const client = new Client({ name: 'servers-auth-test', version: '1.0.0' });
  client.onerror = () => {};
  cleanups.push(() => client.close());
  await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  const back = await visit(provider.pending as URL, user);
  await transport.finishAuth(back.searchParams);
  return back;
}

async function connected(server: TestServer, provider: MemoryProvider): Promise<Client> {
  const client = new Client({ name: 'servers-auth-test', version: '1.0.0' });
  client.onerror = () => {};
  cleanups.push(() => client.close());
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), { authProvider: provider }),
  );
  return client;
}

const read = async (client: Client, uri: string) => {
  const content = (await client.readResource({ uri }, { cacheMode: 'bypass' })).contents[0];
  return content && 'text' in content ? content.text : undefined;
};

describe('the demo authorization server', () => {
  let authServer: AuthServer;
  afterEach(() => authServer?.close());

  it('publishes RFC 8414 metadata with iss support and PKCE S256', async () => {
    authServer = await startAuthServer({ scopesSupported: ['mcp'] });
    const response = await fetch(`${authServer.url}/.well-known/oauth-authorization-server`);
    expect(await response.json()).toMatchObject({
      issuer: authServer.issuer,
      authorization_endpoint: `${authServer.url}/authorize`,
      token_endpoint: `${authServer.url}/token`,
      registration_endpoint: `${authServer.url}/register`,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      scopes_supported: ['mcp'],
    });
  });

  it('redeems a code only with the right PKCE verifier, and only once', async () => {
    authServer = await startAuthServer();
    const registered = await fetch(`${authServer.url}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    }).then((r) => r.json() as Promise<{ client_id: string }>);
    const verifier = 'v'.repeat(50);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const url = new URL(`${authServer.url}/authorize`);
    for (const [key, value] of Object.entries({
      response_type: 'code',
      client_id: registered.client_id,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's1',
      scope: 'mcp',
    })) {
      url.searchParams.set(key, value);
    }
    const back = await visit(url, 'carol');
    expect(back.searchParams.get('state')).toBe('s1');
    expect(back.searchParams.get('iss')).toBe(authServer.issuer);
    const code = back.searchParams.get('code') ?? '';
    const exchange = (codeVerifier: string) =>
      fetch(`${authServer.url}/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          code_verifier: codeVerifier,
          redirect_uri: REDIRECT,
          client_id: registered.client_id,
        }),
      });
    const wrong = await exchange('w'.repeat(50));
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    // The failed attempt used the code up: a stolen code plus a guess is worth nothing.
    expect((await exchange(verifier)).status).toBe(400);
    expect(authServer.stats()).toMatchObject({ codeExchanges: 0, tokenErrors: 2 });
  });
  it('opaque tokens say nothing but are accepted; a refresh token revoked at /revoke stops working', async () => {
    authServer = await startAuthServer({ opaqueTokens: true });
    const metadata = await fetch(`${authServer.url}/.well-known/oauth-authorization-server`);
    expect(await metadata.json()).toMatchObject({
      revocation_endpoint: `${authServer.url}/revoke`,
    });
    const store = new ResourceStore([
      { uri: 'secret://inbox', name: 'inbox', text: 'nobody', textByUser: { bob: "bob's inbox" } },
    ]);
    const server = await startServer('modern', { store, auth: { authServer } });
    cleanups.push(() => server.close());
    const provider = new MemoryProvider();
    await signIn(server, provider, 'bob');
    const access = provider.saved?.access_token ?? '';
    expect(access.split('.')).toHaveLength(1);
    expect(authServer.verify(access)).toMatchObject({ sub: 'bob' });
    expect(await read(await connected(server, provider), 'secret://inbox')).toBe("bob's inbox");

    const refreshToken = provider.saved?.refresh_token ?? '';
    const revoke = await fetch(`${authServer.url}/revoke`, {
      method: 'POST',
      body: new URLSearchParams({
        token: refreshToken,
        token_type_hint: 'refresh_token',
        client_id: String(provider.client?.client_id),
      }),
    });
    expect(revoke.status).toBe(200);
    expect(authServer.stats()).toMatchObject({ revocations: 1, revokedTokens: [refreshToken] });
    const refresh = await fetch(`${authServer.url}/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: String(provider.client?.client_id),
      }),
    });
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('can leave PKCE and revocation out of its metadata', async () => {
    authServer = await startAuthServer({ pkceMethods: null, revocation: false });
    const response = await fetch(`${authServer.url}/.well-known/oauth-authorization-server`);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata).not.toHaveProperty('code_challenge_methods_supported');
    expect(metadata).not.toHaveProperty('revocation_endpoint');
    expect((await fetch(`${authServer.url}/revoke`, { method: 'POST' })).status).toBe(404);
  });
});

describe.each(SERVER_KINDS)('a protected %s server', (kind) => {
  it('answers 401 with resource metadata naming the authorization server', async () => {
    const { authServer, server } = await setUp(kind);
    const response = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain(`resource_metadata="${server.protection?.resourceMetadataUrl}"`);
    expect(challenge).toContain('scope="mcp"');
    const metadata = await fetch(server.protection?.resourceMetadataUrl ?? '').then((r) =>
      r.json(),
    );
    expect(metadata).toMatchObject({
      resource: server.url,
      authorization_servers: [authServer.issuer],
      scopes_supported: ['mcp', 'mcp:admin'],
    });
    expect(server.protection?.stats()).toMatchObject({ challenged: 1, accepted: 0 });
    expect(server.counters().reads + server.counters().toolCalls).toBe(0);
  });

  it('signs in with discovery, registration, PKCE, state and iss; content is per user', async () => {
    const { authServer, server } = await setUp(kind);
    const provider = new MemoryProvider();
    const back = await signIn(server, provider, 'bob');
    expect(back.searchParams.get('state')).toBe('the-state');
    expect(back.searchParams.get('iss')).toBe(authServer.issuer);
    const claims = authServer.verify(provider.saved?.access_token ?? '');
    expect(claims).toMatchObject({ sub: 'bob', scope: 'mcp', aud: server.url });
    expect(provider.saved?.refresh_token).toBeTruthy();
    const client = await connected(server, provider);
    expect(await read(client, 'secret://inbox')).toBe("bob's inbox");
    expect(authServer.stats()).toMatchObject({
      registrations: 1,
      authorizations: 1,
      codeExchanges: 1,
    });
  });

  it('an expired access token is refreshed by the client, in the same session', async () => {
    const { authServer, server } = await setUp(kind);
    const provider = new MemoryProvider();
    await signIn(server, provider);
    const client = await connected(server, provider);
    expect(await read(client, 'secret://inbox')).toBe("alice's inbox");
    const before = provider.saved?.access_token;
    authServer.expireAccessTokens();
    expect(await read(client, 'secret://inbox')).toBe("alice's inbox");
    expect(provider.saved?.access_token).not.toBe(before);
    expect(authServer.stats()).toMatchObject({ authorizations: 1, refreshes: 1 });
    expect(server.protection?.stats().challenged).toBeGreaterThanOrEqual(2);
  });

  it('a call needing a broader scope answers 403 insufficient_scope naming it', async () => {
    const { server } = await setUp(kind);
    const provider = new MemoryProvider();
    await signIn(server, provider);
    const client = await connected(server, provider);
    await client.callTool({ name: 'plain' });
    provider.pending = undefined;
    // The SDK steps up by itself: it asks for the union of scopes and waits for the user.
    await expect(client.callTool({ name: 'admin-only' })).rejects.toBeInstanceOf(UnauthorizedError);
    expect(server.protection?.stats().forbidden).toBe(1);
    const pending = provider.pending as URL | undefined;
    expect(pending?.searchParams.get('scope')).toBe('mcp mcp:admin');
    const back = await visit(pending as URL);
    const result = await auth(provider, {
      serverUrl: server.url,
      authorizationCode: back.searchParams.get('code') ?? '',
      iss: back.searchParams.get('iss') ?? '',
    });
    expect(result).toBe('AUTHORIZED');
    const stepped = await connected(server, provider);
    expect((await stepped.callTool({ name: 'admin-only' })).isError).toBeFalsy();
  });
});
