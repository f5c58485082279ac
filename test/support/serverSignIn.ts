/**
 * Sign-in for the server-manager suites: the user's browser played headlessly (it follows an
 * authorization URL to the callback it redirects to), a `ServerSignIn` per page, and tabs of one
 * browser profile: the list in a shared localStorage, tokens in each tab's own sessionStorage
 * (the default).
 */
import { expect } from 'vitest';
import { type KeyValueStorage, memoryStorage } from '../../src/auth';
import { createServerSignIn } from '../../src/servers';
import type { TestServer } from '../servers';
import { atEnd, observe, openManager, type Tab } from './manager';
import { tabChannels } from './tabs';
import { eventually } from './wait';

/** The user's browser, headless: follows an authorization URL to the callback it redirects to. */
export function userBrowser() {
  const callbacks: URL[] = [];
  const navigate = async (url: URL) => {
    const response = await fetch(url, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (response.status !== 302 || !location) throw new Error(`authorize: ${response.status}`);
    callbacks.push(new URL(location));
  };
  return { callbacks, navigate };
}

/** A page's `ServerSignIn` on `storage` (shared by the tabs unless `tokensPerTab`). */
export const signInOf = (
  storage: KeyValueStorage,
  navigate?: (url: URL) => Promise<void>,
  tokensPerTab?: boolean,
) =>
  createServerSignIn({
    redirectUrl: 'http://127.0.0.1:9/callback',
    storage,
    ...(navigate && { navigate }),
    ...(tokensPerTab !== undefined && { tokensPerTab }),
  });

export const entry = (tab: Tab, id: string) =>
  tab.manager.getServers().find((server) => server.id === id);

/** A server of the list, as `providerFor` takes it (its id, URL and nonce: this add of it). */
export function serverIn(tab: Tab, id: string) {
  const server = entry(tab, id);
  if (!server) throw new Error(`no server "${id}"`);
  return server;
}

/** A tab: the list in the shared `local`, tokens in its own `session` (its sessionStorage). */
export function tabOf(
  local: KeyValueStorage,
  session: KeyValueStorage,
  navigate?: (url: URL) => Promise<void>,
): Tab {
  const channels = tabChannels();
  atEnd(() => channels.closeAll());
  return openManager({
    storage: local,
    channel: channels.open,
    signIn: signInOf(session, navigate, true),
  });
}

/** A tab: its list in `list`, its tokens in `tokens`, a storage the tabs share (not per tab). */
export function sharedTokensTab(
  list: KeyValueStorage | null,
  tokens: KeyValueStorage,
  navigate?: (url: URL) => Promise<void>,
): Tab {
  const channels = tabChannels();
  atEnd(() => channels.closeAll());
  return openManager({ storage: list, channel: channels.open, signIn: signInOf(tokens, navigate) });
}

/**
 * Two tabs: A adds `servers` (protected ones, signing in learnt from their 401) and B signs in
 * to each. `openB()` opens tab B's page again, on its sessionStorage.
 */
export async function signedInInTabB(servers: Record<string, TestServer>) {
  const local = memoryStorage();
  const sessionB = memoryStorage();
  const browserB = userBrowser();
  const openB = () => tabOf(local, sessionB, browserB.navigate);
  const a = tabOf(local, memoryStorage());
  const b = openB();
  const ids = Object.keys(servers);
  for (const [id, server] of Object.entries(servers)) {
    a.manager.add({ id, name: id, url: server.url });
  }
  await eventually(() => {
    for (const id of ids) {
      expect(entry(b, id)).toMatchObject({ status: 'unauthorized', signIn: 'signed-out' });
    }
  });
  for (const id of ids) entry(b, id)?.authorize();
  await eventually(() => expect(browserB.callbacks).toHaveLength(ids.length));
  for (const callback of browserB.callbacks) await signInOf(sessionB).complete(callback);
  await eventually(() => {
    for (const id of ids) {
      expect(entry(b, id)).toMatchObject({ status: 'ready', signIn: 'signed-in' });
    }
  });
  return { a, b, local, sessionB, openB };
}

/**
 * In `tab`, the user adds `url` as `id` (signing in learnt from its 401), signs in with `browser`
 * (tokens in `tokens`) and reads the server's doc: the storage key of this add's tokens.
 */
export async function addedAndSignedIn(
  tab: Tab,
  { id, url }: { id: string; url: string },
  tokens: KeyValueStorage,
  browser: ReturnType<typeof userBrowser>,
): Promise<string> {
  tab.manager.add({ id, name: id, url });
  await eventually(() =>
    expect(entry(tab, id)).toMatchObject({ status: 'unauthorized', signIn: 'signed-out' }),
  );
  const before = browser.callbacks.length;
  entry(tab, id)?.authorize();
  await eventually(() => expect(browser.callbacks).toHaveLength(before + 1));
  await signInOf(tokens).complete(browser.callbacks[before] as URL);
  await eventually(() =>
    expect(entry(tab, id)).toMatchObject({ status: 'ready', signIn: 'signed-in' }),
  );
  const doc = observe(tab, id);
  await eventually(() => expect(doc.text()).toBeDefined());
  const { nonce } = serverIn(tab, id);
  return `mcp-react-query:server-oauth:${id}:${url}${nonce === undefined ? '' : `#${nonce}`}`;
}
