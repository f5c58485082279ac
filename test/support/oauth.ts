/**
 * Sign-in against the real servers behind the demo authorization server
 * (test/servers/authServer.ts), shared by the OAuth suites: a protected server with a private
 * inbox, `createOAuthProvider` with a `navigate` that plays the browser headlessly (follow the
 * authorization URL to its redirect, hand the callback URL to the provider), and a plain
 * McpCacheSync on it. Nothing is mocked.
 *
 * Everything started here is closed by `closeAll()` (call it from `afterEach`).
 */
import { QueryClient as CoreQueryClient } from '@tanstack/query-core';
import { expect } from 'vitest';
import {
  completeAuthorization,
  createOAuthProvider,
  memoryStorage,
  type OAuthProvider,
  type OAuthProviderOptions,
} from '../../src/auth';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import {
  type AuthServer,
  type AuthServerOptions,
  ResourceStore,
  type ServerKind,
  type StoredResource,
  startAuthServer,
  startServer,
  type TestServer,
} from '../servers';
import { atEnd, closeAll } from './atEnd';
import { observeResource } from './observe';
import { eventually } from './wait';

export { atEnd, closeAll };

export const INBOX = 'secret://inbox';
/** Where the authorization server sends the browser back; never fetched. */
export const REDIRECT = 'http://127.0.0.1:9/callback';
export const FAST = { initialDelayMs: 20, maxDelayMs: 100 };

export interface Protected {
  authServer: AuthServer;
  server: TestServer;
}

export const inbox = (byUser: Record<string, string>): StoredResource => ({
  uri: INBOX,
  name: 'inbox',
  text: 'nobody',
  textByUser: byUser,
  cacheScope: 'private',
});

export async function protectedServer(
  kind: ServerKind,
  options: { authServer?: AuthServer | AuthServerOptions; resources?: StoredResource[] } = {},
): Promise<Protected> {
  let authServer: AuthServer;
  if (options.authServer && 'url' in options.authServer) authServer = options.authServer;
  else {
    authServer = await startAuthServer(options.authServer);
    atEnd(() => authServer.close());
  }
  const store = new ResourceStore([
    inbox({ alice: "alice's inbox", bob: "bob's inbox" }),
    ...(options.resources ?? []),
  ]);
  store.setTools([{ name: 'plain' }, { name: 'admin-only' }]);
  const server = await startServer(kind, {
    store,
    auth: { authServer, toolScopes: { 'admin-only': 'mcp:admin' } },
  });
  atEnd(() => server.close());
  return { authServer, server };
}

/**
 * The user's browser, headless: goes to the authorization URL (as `user`, when set), reads the
 * redirect and gives the callback URL to the provider, as the app's callback page would.
 */
export interface Browser {
  /** Who signs in (the authorization server's `user` parameter); its default user when unset. */
  user: string | undefined;
  /** Rewrites the callback URL before the provider sees it (an attacker's forged callback). */
  tamper: (callback: URL) => URL;
  /** Every authorization URL the provider navigated to. */
  visited: URL[];
  /** Every callback URL handed to the provider. */
  callbacks: URL[];
  /** What completing the sign-in threw. */
  errors: unknown[];
  /** Runs while the user is on the authorization page (before the callback). */
  meanwhile: () => Promise<void>;
  /** Runs once the callback was handled (whether it succeeded or not). */
  after: () => void;
}

export function oauthProvider(
  server: { url: string },
  options: {
    storage?: OAuthProviderOptions['storage'];
    storageKey?: string;
    browser?: Partial<Browser>;
  } = {},
): { provider: OAuthProvider; browser: Browser } {
  const browser: Browser = {
    user: undefined,
    tamper: (url) => url,
    visited: [],
    callbacks: [],
    errors: [],
    meanwhile: async () => {},
    after: () => {},
    ...options.browser,
  };
  const provider = createOAuthProvider({
    serverUrl: server.url,
    redirectUrl: REDIRECT,
    // A storage of the test's own unless it asks for the default (`storage: undefined`).
    ...('storage' in options
      ? options.storage !== undefined && { storage: options.storage }
      : { storage: memoryStorage() }),
    ...(options.storageKey && { storageKey: options.storageKey }),
    navigate: async (url) => {
      browser.visited.push(new URL(url));
      const target = new URL(url);
      if (browser.user) target.searchParams.set('user', browser.user);
      const response = await fetch(target, { redirect: 'manual' });
      const location = response.headers.get('location');
      if (response.status !== 302 || !location) {
        browser.errors.push(new Error(`authorize answered ${response.status}`));
        return;
      }
      try {
        await browser.meanwhile();
        const callback = browser.tamper(new URL(location));
        browser.callbacks.push(callback);
        await completeAuthorization(provider, callback);
      } catch (error) {
        browser.errors.push(error);
      } finally {
        browser.after();
      }
    },
  });
  return { provider, browser };
}

export function connect(
  server: { url: string },
  provider: OAuthProvider,
  options: { authContext?: string; url?: string } = {},
) {
  const queryClient = new CoreQueryClient({
    defaultOptions: { queries: { retry: 1, retryDelay: 20 } },
  });
  const sync = new McpCacheSync({
    queryClient,
    url: options.url ?? server.url,
    authProvider: provider,
    reconnect: FAST,
    ...(options.authContext !== undefined && { authContext: options.authContext }),
  });
  atEnd(async () => {
    await sync.dispose();
    queryClient.clear();
  });
  const statuses: string[] = [];
  sync.subscribeState(() => {
    const { status } = sync.getState();
    if (statuses.at(-1) !== status) statuses.push(status);
  });
  sync.mount();
  return { sync, queryClient, statuses };
}

/** Connected through `provider`, signed in as alice (the default user), reading her inbox. */
export async function readingInbox(server: { url: string }, provider: OAuthProvider) {
  const connected = connect(server, provider);
  const { sync } = connected;
  const inbox = observeResource(sync, INBOX);
  atEnd(inbox.unmount);
  await eventually(() => expect(sync.getState().status).toBe('unauthorized'));
  sync.authorize();
  await eventually(() => expect(inbox.text()).toBe("alice's inbox"));
  return { ...connected, inbox };
}

/** The `Authorization` headers a server received with this bearer token. */
export function sentWith(server: TestServer, token: string | undefined) {
  return server.requests().filter((request) => request.authorization === `Bearer ${token}`);
}
