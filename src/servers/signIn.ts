import type { OAuthClientMetadata } from '@modelcontextprotocol/client';
import { callbackPage, completeAuthorization } from '../auth/completeAuthorization';
import { holdsTokens } from '../auth/credentials';
import { createOAuthProvider, type OAuthProvider } from '../auth/oauthProvider';
import {
  type KeyValueStorage,
  letGo,
  memoryStorage,
  StoredJson,
  tokenStorage,
} from '../auth/storage';
import { MAX_SERVERS, type McpServerConfig } from './config';

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
  /**
   * Whether the tokens' storage is this tab's alone, as `sessionStorage` is: by default, yes
   * without `storage` (sessionStorage, or memory) and for `sessionStorage` itself; no for any
   * other (localStorage, a storage of the app's own), which may be every tab's (`forgetGone`).
   */
  tokensPerTab?: boolean;
  /** Prefix of every storage key used here (default `mcp-react-query:server-oauth`). */
  storageKey?: string;
  /** How the user is sent to an authorization page (tests, native shells). */
  navigate?: (url: URL) => void | Promise<void>;
}

/** One add of a server (`nonce`: none in a list stored before nonces): whose tokens these are. */
type ServerKey = Pick<McpServerConfig, 'id' | 'url' | 'nonce'>;

/** A server whose tokens the storage may hold, and the list (manager's `storageKey`) it is in. */
type Kept = ServerKey & { list?: string };

/** Which server a sign-in in progress belongs to, by its `state`. */
type Started = Record<string, ServerKey>;

/** Sign-ins a user can have started and not finished; older ones are forgotten. */
const MAX_STARTED = 16;
/** Servers whose tokens the storage is known to hold (`ServerSignIn#kept`); older ones drop out. */
const MAX_KEPT = 2 * MAX_SERVERS;

const webStorageOf = (name: 'localStorage' | 'sessionStorage'): KeyValueStorage | undefined => {
  try {
    return (globalThis as Partial<Record<typeof name, KeyValueStorage>>)[name];
  } catch {
    return undefined;
  }
};

/**
 * OAuth for a manager's servers: one provider per server (its own storage
 * key, by id, URL and nonce: bound to the server's URL, so a token never
 * reaches another server, and to the add, so a server removed and added
 * again never finds the tokens of before),
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
  /** Where the providers keep tokens, and which servers' (so an orphan of them can be found). */
  readonly #tokens: KeyValueStorage;
  readonly #kept: StoredJson<Kept[]>;
  /** The tokens' storage is this tab's alone (`tokensPerTab`). */
  readonly #perTab: boolean;
  readonly #providers = new Map<string, OAuthProvider>();
  /** How each provider's sign-ins stop being followed here (it is forgotten). */
  readonly #unfollow = new WeakMap<OAuthProvider, () => void>();

  constructor(options: ServerSignInOptions) {
    this.#options = options;
    this.#storage = options.storage ?? webStorageOf('localStorage') ?? memoryStorage();
    this.#prefix = options.storageKey ?? 'mcp-react-query:server-oauth';
    this.#started = new StoredJson<Started>(this.#storage, `${this.#prefix}:started`, {}, () => {});
    this.#tokens = tokenStorage(options.storage);
    this.#kept = new StoredJson<Kept[]>(this.#tokens, `${this.#prefix}:kept`, [], () => {});
    const { storage, tokensPerTab } = options;
    this.#perTab = tokensPerTab ?? (!storage || storage === webStorageOf('sessionStorage'));
  }

  /**
   * The provider of one server (the same object for the same id, URL and nonce); `list`, the
   * `storageKey` of the manager's list it is in (only that list's later adds forget its tokens).
   */
  providerFor(server: ServerKey, list?: string): OAuthProvider {
    const key = this.#keyOf(server);
    const provider = this.#providers.get(key);
    if (provider) return provider;
    if (!this.#keptKeys().includes(key)) {
      const kept: Kept = { ...fieldsOf(server), ...(list !== undefined && { list }) };
      this.#keep(() => [...this.#keptServers(), kept].slice(-MAX_KEPT));
    }
    return this.#make(server, key);
  }

  #make(server: ServerKey, key: string): OAuthProvider {
    const { redirectUrl, mode, clientMetadata, navigate } = this.#options;
    const made = createOAuthProvider({
      serverUrl: server.url,
      redirectUrl,
      ...(this.#options.storage && { storage: this.#options.storage }),
      storageKey: key,
      ...(mode && { mode }),
      ...(clientMetadata && { clientMetadata }),
      ...(navigate && { navigate }),
    });
    let remembered: string | null = null;
    const unfollow = made.subscribe(() => {
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
    this.#unfollow.set(made, unfollow);
    this.#providers.set(key, made);
    return made;
  }

  /**
   * A server that is gone, moved to another URL or added again: the
   * credentials and sign-ins in progress of this add of it go, and its
   * provider is let go (it hears the storage no more: nothing of the page
   * keeps it). What goes is what is stored under this add's key, whatever
   * a list says of how it signs in (`auth`, taken but not read: a list seen
   * late may not know it signs in yet). One that never signed in has
   * nothing to forget, and costs nothing (no provider, no network request).
   */
  async forget(server: ServerKey & Partial<Pick<McpServerConfig, 'auth'>>): Promise<void> {
    const key = this.#keyOf(server);
    if (!this.#holdsAnything(key)) return this.#unkeep(key);
    const provider = this.#providers.get(key) ?? this.#make(server, key);
    this.#providers.delete(key);
    this.#unkeep(key);
    this.#drop(server);
    const signedOut = provider.signOut();
    this.#unfollow.get(provider)?.();
    letGo(provider);
    await signedOut;
  }

  /**
   * A server added afresh (`server`, the list holding no other server by its
   * id or URL): its nonce keeps it from finding tokens of an earlier add.
   * Those this storage holds for an earlier add of its id and URL are
   * orphans (removed while no manager of this page was mounted to hear it),
   * found by the servers the storage keeps tokens of, or, stored before
   * nonces, under its id and URL alone: they are forgotten (the refresh
   * token revoked where the server allows). Only the earlier adds of `list`
   * (the manager's `storageKey`) are: another list's are its own, live or
   * not. One kept without a list (stored before lists were noted, or by a
   * `providerFor` without one) is forgotten unless a provider of this page
   * has it. Never rejects.
   */
  forgetStored(server: ServerKey, list?: string): Promise<void> {
    const key = this.#keyOf(server);
    const ours = (kept: Kept) =>
      kept.list !== undefined && list !== undefined
        ? kept.list === list
        : !this.#providers.has(this.#keyOf(kept));
    // Under its id and URL alone: the key of before nonces, unless noted as some list's.
    const unnoted = { id: server.id, url: server.url };
    const kept = this.#keptServers();
    if (!kept.some((one) => this.#keyOf(one) === this.#keyOf(unnoted))) kept.push(unnoted);
    const old = kept.filter(
      (one) =>
        one.id === server.id && one.url === server.url && this.#keyOf(one) !== key && ours(one),
    );
    return this.#forgetOrphans(old);
  }

  /**
   * The list `list` (a manager's `storageKey`) is `servers` now: what this
   * tab's storage holds for an add of its servers that the list no longer
   * has (removed, or added again: another nonce, while no manager of this
   * page was mounted to hear it) is forgotten, as `forgetStored` forgets it
   * for each server of the list. Only adds noted as `list`'s, by the key this
   * class gives them; a server stored before nonces keeps its key (it is in
   * the list). Never rejects.
   *
   * Only where the tokens' storage is this tab's alone (`tokensPerTab`): a
   * sign-in there is this tab's, and forgetting it signs out no other tab. In
   * a storage the tabs share, the tab that removes a server (or adds it
   * again) forgets its tokens there itself, and this tab's list is no proof
   * of another's (lists in each page's memory, writes seen here later, a list
   * unreadable here): forgetting would revoke a sign-in another tab uses.
   */
  forgetGone(servers: readonly ServerKey[], list: string): Promise<void> {
    if (!this.#perTab) return Promise.resolve();
    const live = new Set(servers.map((server) => this.#keyOf(server)));
    const gone = this.#keptServers().filter(
      (kept) => kept.list === list && !live.has(this.#keyOf(kept)),
    );
    const each = servers.map((server) => this.forgetStored(server, list));
    return Promise.all([this.#forgetOrphans(gone), ...each]).then(() => {});
  }

  /** Forget `orphans` (adds no list has); one with nothing here only stops being noted. */
  #forgetOrphans(orphans: readonly ServerKey[]): Promise<void> {
    const byKey = new Map(orphans.map((kept) => [this.#keyOf(kept), kept]));
    const forgotten = [...byKey.values()].map((kept) => this.forget(kept).catch(() => {}));
    return Promise.all(forgotten).then(() => {});
  }

  /** A provider here, tokens in the storage, or a sign-in started, of the add stored as `key`. */
  #holdsAnything(key: string): boolean {
    const started = Object.values(this.#started.get());
    return (
      this.#providers.has(key) ||
      holdsTokens(this.#tokens.getItem(key)) ||
      started.some((server) => isServerKey(server) && this.#keyOf(server) === key)
    );
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
    const page = callbackPage(callbackUrl); // refused, its code leaves the address bar too
    const state = URL.canParse(page.url) ? new URL(page.url).searchParams.get('state') : null;
    const server = state === null ? undefined : this.#started.get()[state];
    if (state === null || !isServerKey(server)) {
      page.clean();
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

  /**
   * The storage key of a server's provider, and its name here: the canonical
   * URL has no `#`, so the nonce goes where a fragment would; without one
   * (a list stored by an earlier version), the key that version used.
   */
  #keyOf(server: ServerKey): string {
    const key = `${this.#prefix}:${server.id}:${server.url}`;
    return server.nonce === undefined ? key : `${key}#${server.nonce}`;
  }

  /** The sign-ins in progress of one server are over. */
  #drop(server: ServerKey): void {
    const key = this.#keyOf(server);
    this.#started.update((started) =>
      Object.fromEntries(
        Object.entries(started).filter(([, s]) => isServerKey(s) && this.#keyOf(s) !== key),
      ),
    );
  }

  #remember(state: string, server: ServerKey): void {
    this.#started.update((started) => {
      const entries = Object.entries(started).filter(([, s]) => isServerKey(s));
      entries.push([state, fieldsOf(server)]);
      return Object.fromEntries(entries.slice(-MAX_STARTED));
    });
  }

  /**
   * The servers this storage may hold tokens of: each provider made here, until it is forgotten
   * here. How an earlier add's tokens are found (KeyValueStorage lists no keys).
   */
  #keptServers(): Kept[] {
    const kept: unknown = this.#kept.get();
    return Array.isArray(kept) ? kept.filter(isKept) : [];
  }

  #keptKeys(): string[] {
    return this.#keptServers().map((kept) => this.#keyOf(kept));
  }

  #unkeep(key: string): void {
    if (!this.#keptKeys().includes(key)) return;
    this.#keep(() => this.#keptServers().filter((kept) => this.#keyOf(kept) !== key));
  }

  #keep(change: () => Kept[]): void {
    try {
      this.#kept.update(change);
    } catch {
      // A full storage: should a server's tokens outlive its add here, nothing finds them.
    }
  }
}

const fieldsOf = ({ id, url, nonce }: ServerKey): ServerKey => ({
  id,
  url,
  ...(nonce !== undefined && { nonce }),
});

/** A stored server (of a sign-in started, of tokens kept), checked: the storage is anyone's. */
function isServerKey(value: unknown): value is ServerKey {
  const entry = value as { id?: unknown; url?: unknown; nonce?: unknown } | null | undefined;
  return (
    typeof entry?.id === 'string' &&
    typeof entry.url === 'string' &&
    (entry.nonce === undefined || typeof entry.nonce === 'string')
  );
}

const isKept = (value: unknown): value is Kept =>
  isServerKey(value) && ['string', 'undefined'].includes(typeof (value as Kept).list);

/** OAuth for the servers of `<McpServersProvider signIn>` (see `ServerSignIn`). */
export function createServerSignIn(options: ServerSignInOptions): ServerSignIn {
  return new ServerSignIn(options);
}
