import type { OAuthClientMetadata } from '@modelcontextprotocol/client';
import { completeAuthorization } from '../auth/completeAuthorization';
import { createOAuthProvider, type OAuthProvider } from '../auth/oauthProvider';
import { type KeyValueStorage, memoryStorage, StoredJson } from '../auth/storage';
import type { McpServerConfig } from './config';

export interface ServerSignInOptions {
  /** The app's one callback page (it calls `complete()`), for every server. */
  redirectUrl: string | URL;
  /** `redirect` (default) leaves the page; `popup` signs in in a window. */
  mode?: 'redirect' | 'popup';
  /** Sent when registering dynamically with a server's authorization server. */
  clientMetadata?: Partial<OAuthClientMetadata>;
  /**
   * Where each server's credentials live (default: `createOAuthProvider`'s), and which server
   * each sign-in in progress belongs to (default `localStorage`: the callback page, or a popup,
   * must find it).
   */
  storage?: KeyValueStorage;
  /** Prefix of every storage key used here (default `mcp-react-query:server-oauth`). */
  storageKey?: string;
  /** How the user is sent to an authorization page (tests, native shells). */
  navigate?: (url: URL) => void | Promise<void>;
}

/** Which server a sign-in in progress belongs to, by its `state`. */
type Started = Record<string, { id: string; url: string }>;

/** Sign-ins a user can have started and not finished; older ones are forgotten. */
const MAX_STARTED = 16;

const localStorageOf = (): KeyValueStorage | undefined => {
  try {
    return (globalThis as { localStorage?: KeyValueStorage }).localStorage;
  } catch {
    return undefined;
  }
};

/**
 * OAuth for a manager's servers: one provider per server (its own storage
 * key, bound to the server's URL, so a token never reaches another server),
 * made the first time the server needs one, and the callback page's way to
 * finish whichever server's sign-in came back. Each sign-in (the first, a
 * scope step-up, one after an expiry) is remembered by its `state` when the
 * SDK hands out its authorization URL, until it is over; the callback
 * carries that `state` back, and only the provider that started it
 * exchanges the code.
 */
export class ServerSignIn {
  readonly #options: ServerSignInOptions;
  readonly #storage: KeyValueStorage;
  readonly #prefix: string;
  readonly #started: StoredJson<Started>;
  readonly #providers = new Map<string, OAuthProvider>();

  constructor(options: ServerSignInOptions) {
    this.#options = options;
    this.#storage = options.storage ?? localStorageOf() ?? memoryStorage();
    this.#prefix = options.storageKey ?? 'mcp-react-query:server-oauth';
    this.#started = new StoredJson<Started>(this.#storage, `${this.#prefix}:started`, {}, () => {});
  }

  /** The provider of one server (the same object for the same id and URL). */
  providerFor(server: Pick<McpServerConfig, 'id' | 'url'>): OAuthProvider {
    const key = `${server.id} ${server.url}`;
    let provider = this.#providers.get(key);
    if (provider) return provider;
    const { redirectUrl, mode, clientMetadata, navigate } = this.#options;
    provider = createOAuthProvider({
      serverUrl: server.url,
      redirectUrl,
      ...(this.#options.storage && { storage: this.#options.storage }),
      storageKey: `${this.#prefix}:${server.id}:${server.url}`,
      ...(mode && { mode }),
      ...(clientMetadata && { clientMetadata }),
      ...(navigate && { navigate }),
    });
    const made = provider;
    let remembered: string | null = null;
    made.subscribe(() => {
      // Every sign-in handed out (the first, a step-up, one after an expiry) is remembered, and
      // forgotten once it is over: redeemed (here, by a popup that reported back, or by the
      // callback page), replaced, or dropped. One this page stopped waiting for (its popup read
      // as closed: maybe cut off by COOP) stays while stored: the popup's own page may finish it.
      const handedOut = made.pendingAuthorization?.searchParams.get('state') ?? null;
      const stored = made.signInState() === remembered ? remembered : null;
      const state = handedOut ?? stored;
      if (state === remembered) return;
      if (remembered !== null) this.#forgetState(remembered);
      remembered = state;
      if (state !== null) this.#remember(state, server);
    });
    this.#providers.set(key, made);
    return made;
  }

  /**
   * A server that is gone, or moved to another URL: its credentials and its
   * sign-ins in progress go. One that never signed in has nothing to forget.
   */
  async forget(server: Pick<McpServerConfig, 'id' | 'url' | 'auth'>): Promise<void> {
    if (server.auth !== 'oauth') return;
    const provider = this.providerFor(server);
    this.#providers.delete(`${server.id} ${server.url}`);
    this.#drop(server);
    await provider.signOut();
  }

  /**
   * A server added afresh starts signed out: what the storage still holds
   * under its id and URL (a server by that id removed while no manager of
   * this page was mounted to hear it) is forgotten. Never rejects.
   */
  forgetStored(server: Pick<McpServerConfig, 'id' | 'url'>): Promise<void> {
    const provider = this.providerFor(server);
    if (!provider.tokens() && provider.identity() === undefined) return Promise.resolve();
    return this.forget({ ...server, auth: 'oauth' }).catch(() => {});
  }

  /**
   * For the callback page: finish the sign-in this callback belongs to (its
   * `state` names the server; any other callback is refused), as
   * `completeAuthorization` does for one provider. In a popup it hands the
   * result to the page that opened it. Resolves with the server signed in
   * and where the user was before.
   */
  async complete(
    callbackUrl?: string | URL,
  ): Promise<{ serverId: string; returnTo: string | undefined; popup: boolean }> {
    const href = String(
      callbackUrl ?? (globalThis as { location?: { href?: string } }).location?.href,
    );
    const state = URL.canParse(href) ? new URL(href).searchParams.get('state') : null;
    const server = state === null ? undefined : this.#started.get()[state];
    if (state === null || !isStarted(server)) {
      throw new Error('this callback belongs to no server sign-in started here (unknown state)');
    }
    const result = await completeAuthorization(this.providerFor(server), callbackUrl);
    if (!result.popup) this.#forgetState(state);
    return { serverId: server.id, ...result };
  }

  #forgetState(state: string): void {
    if (!(state in this.#started.get())) return;
    this.#started.update((started) => {
      const { [state]: _, ...rest } = started;
      return rest;
    });
  }

  /** The sign-ins in progress of one server are over. */
  #drop(server: Pick<McpServerConfig, 'id' | 'url'>): void {
    this.#started.update((started) =>
      Object.fromEntries(
        Object.entries(started).filter(([, s]) => s.id !== server.id || s.url !== server.url),
      ),
    );
  }

  #remember(state: string, server: Pick<McpServerConfig, 'id' | 'url'>): void {
    this.#started.update((started) => {
      const entries = Object.entries(started).filter(([, s]) => isStarted(s));
      entries.push([state, { id: server.id, url: server.url }]);
      return Object.fromEntries(entries.slice(-MAX_STARTED));
    });
  }
}

/** A stored entry, checked: the storage is anyone's on this origin. */
function isStarted(value: unknown): value is { id: string; url: string } {
  const entry = value as { id?: unknown; url?: unknown } | null | undefined;
  return typeof entry?.id === 'string' && typeof entry.url === 'string';
}

/** OAuth for the servers of `<McpServersProvider signIn>` (see `ServerSignIn`). */
export function createServerSignIn(options: ServerSignInOptions): ServerSignIn {
  return new ServerSignIn(options);
}
