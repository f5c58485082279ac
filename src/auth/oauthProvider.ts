import {
  auth,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { McpQueryError } from '../core/errors';
import { invalidUrl } from '../core/failure';
import type { AuthAware, AuthControl } from '../core/signIn';
import { followedBy } from './control';
import { Credentials, canonicalResource, otherServer, signedWith, stepUpOf } from './credentials';
import { clientMetadataOf, type OAuthProviderOptions } from './options';
import { leaveFor } from './popup';
import { revokeIssued } from './revoke';
import {
  codeOf,
  PendingSignIn,
  randomState,
  readAuthorizationResponse,
  refuseWithoutPkce,
  type SignIn,
} from './signIn';
import { holdFor, signInStorage, tokenStorage } from './storage';

export type { OAuthProviderOptions };

/**
 * An OAuth client for a browser (or anything with a storage and a way to
 * show a page): PKCE, `state` and `iss` checks, dynamic or pre-registered or
 * metadata-document clients, credentials per authorization server, refresh
 * tokens, and scope step-up — the SDK runs the protocol; this keeps what it
 * must keep across a redirect and tells the connection when tokens change.
 *
 * The SDK asks it to redirect when the server answers 401; it only records
 * where to go, because leaving the page (or opening a popup) needs the
 * user's gesture: `useMcp().authorize()` (or `authorize()` here) does that.
 */
export class OAuthProvider implements OAuthClientProvider, AuthAware {
  readonly #options: OAuthProviderOptions;
  readonly #resource: string;
  readonly #saved: Credentials;
  readonly #signIn: PendingSignIn;
  readonly #listeners = new Set<() => void>();
  /** The access token this provider last knew of: another one stored elsewhere is news. */
  #seenToken: string | undefined;
  /** What discovery found last, for the sign-in it may start. */
  #discovery: OAuthDiscoveryState | undefined;
  /** The sign-in whose code is being exchanged, taken out of storage, and the sign-outs before. */
  #exchanging: (SignIn & { signOuts: number }) | undefined;
  readonly clientMetadataUrl?: string;

  constructor(options: OAuthProviderOptions) {
    this.#options = options;
    const invalid = invalidUrl(options.serverUrl);
    if (invalid) throw invalid;
    this.#resource = canonicalResource(options.serverUrl);
    const key = options.storageKey ?? `mcp-oauth:${this.#resource}`;
    const storage = tokenStorage(options.storage);
    this.#saved = new Credentials(storage, key, this.#resource, () => this.#changedElsewhere());
    const popup = options.mode === 'popup';
    this.#signIn = new PendingSignIn(signInStorage(options.storage, popup), `${key}:sign-in`, () =>
      this.#notify(),
    );
    holdFor(this, this.#saved, this.#signIn); // until `letGo(this)`: a server gone, say
    this.#seenToken = this.tokens()?.access_token;
    if (options.clientMetadataUrl) this.clientMetadataUrl = options.clientMetadataUrl;
  }

  /** The server this provider signs in to (its canonical URL): its tokens go nowhere else. */
  resource(): string {
    return this.#resource;
  }

  /** Another server than this provider's: the connection fails, sending nothing. */
  refuse(url: URL): Error | undefined {
    return otherServer(this.#resource, url);
  }

  get redirectUrl(): string {
    return String(this.#options.redirectUrl);
  }

  get clientMetadata(): OAuthClientMetadata {
    return clientMetadataOf(this.#options);
  }

  // ── what the SDK stores and reads ─────────────────────────────────────────

  /*
   * A sign-in the user is in the middle of (its URL handed out, its callback
   * not back yet) is the one that counts: a 401 meanwhile must not replace
   * its state, verifier and URL, or the callback would be refused.
   */

  state(): string {
    const pending = this.#signIn.get().state;
    if (this.#signIn.url() && pending) return pending;
    // Asked just before the authorization URL is made: nobody is sent to a
    // server that does not say it checks PKCE.
    refuseWithoutPkce(this.#discovery);
    const state = randomState();
    this.#signIn.begin(state);
    return state;
  }

  clientInformation(ctx?: OAuthClientInformationContext): StoredOAuthClientInformation | undefined {
    return this.#options.clientInformation ?? this.#saved.client(ctx?.issuer ?? '');
  }

  saveClientInformation(info: StoredOAuthClientInformation, ctx?: OAuthClientInformationContext) {
    if (this.#signedOutSince(this.#exchanging)) return;
    this.#saved.setClients((clients) => ({ ...clients, [ctx?.issuer ?? '']: info }));
  }

  /**
   * Without a context the SDK asks for the token to send to the server the
   * transport talks to, which the connection has checked is this provider's
   * resource; tokens saved for another resource are never returned. With one, `auth()` may
   * refresh them: an SDK before 2.4.0 names no refresh, and a hand-out stands for one (`Refreshes`).
   */
  tokens(ctx?: OAuthClientInformationContext): StoredOAuthTokens | undefined {
    return ctx ? this.#saved.handOut(ctx.issuer) : this.#saved.held();
  }

  /** The SDK refreshes `tokens` now: what it brings back is theirs alone (`Refreshes`). */
  scopeForRefresh(tokens: StoredOAuthTokens): undefined {
    this.#saved.refreshing(tokens);
    return undefined;
  }

  /**
   * Signed out meanwhile (here, in another tab, or the server was removed):
   * a code exchange that began before saves nothing, nor does a refresh of
   * tokens that are not the held ones any more (nothing is held, someone
   * signed in since, or the held ones were refreshed elsewhere). Dropped
   * after a sign-out, a refresh token nothing holds (a code exchange's, a
   * rotation's) is revoked: the grant the user left does not stay alive.
   */
  saveTokens(tokens: StoredOAuthTokens, ctx?: OAuthClientInformationContext): void | Promise<void> {
    const exchange = this.#exchanging;
    if (exchange ? this.#signedOutSince(exchange) : this.#saved.stale(tokens, ctx?.issuer)) {
      return exchange || this.#saved.leftBehind(tokens) ? this.#revoke(tokens) : undefined;
    }
    this.#saved.setSigned((signed) => signedWith(tokens, ctx?.issuer ?? '', signed, exchange));
    this.#seenToken = tokens.access_token;
    this.#signIn.withdraw();
    this.#notify();
  }

  redirectToAuthorization(url: URL): void {
    if (this.#signIn.url() || !this.#signIn.handOut(url)) return;
    const scope = url.searchParams.get('scope') ?? '';
    this.#signIn.add({ stepUpOf: stepUpOf(url, this.#saved.signed()), scope });
    this.#notify();
  }

  saveCodeVerifier(verifier: string): void {
    if (this.#signIn.url()) return;
    this.#signIn.add({ verifier, ...(this.#discovery && { discovery: this.#discovery }) });
  }

  codeVerifier(): string {
    const verifier = this.#exchanging?.verifier;
    if (!verifier) throw new Error('no PKCE code verifier saved: start the sign-in again');
    return verifier;
  }

  saveDiscoveryState(discovery: OAuthDiscoveryState): void {
    this.#discovery = discovery;
    this.#saved.setDiscovery(discovery);
  }

  /**
   * Only the code exchange uses what discovery found before the redirect:
   * any other time the SDK discovers afresh, so an authorization server that
   * moved is noticed (and registered with anew).
   */
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#exchanging?.discovery;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    // A code that fails to redeem says nothing about the tokens already held (nor does a
    // refresh of other tokens: `Credentials#invalidate`).
    if (scope !== 'tokens' || !this.#exchanging) this.#saved.invalidate(scope);
    if (scope === 'all') this.#signIn.clear();
    else if (scope === 'verifier') this.#signIn.add({ verifier: undefined });
    this.#notify();
  }

  // ── what the connection drives ────────────────────────────────────────────

  /**
   * Who signed in last, until they sign out: an expired or refused token is
   * not someone else (their private data stays until `signOut`).
   */
  identity(): string | undefined {
    return this.#saved.signed().identity;
  }

  /** Called by the connection this provider signs in for (`followedBy`). */
  bind(control: AuthControl): () => void {
    return followedBy(this, control);
  }

  /** Tokens changed (signed in, refreshed, signed out), here or in another tab. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Where the user must go to sign in, once the server asked for it. */
  get pendingAuthorization(): URL | undefined {
    return this.#signIn.url();
  }

  /** The `state` of the sign-in stored as in progress (this page may have stopped waiting). */
  signInState(): string | undefined {
    return this.#signIn.get().state;
  }

  /**
   * Send the user to sign in. Redirect mode leaves the page (the callback
   * page finishes); popup mode resolves once the popup has reported back
   * and the tokens are stored.
   */
  async authorize(): Promise<void> {
    if (!this.#signIn.url()) {
      // Nothing asked yet (the app signs in up front): discover and ask now.
      if ((await auth(this, { serverUrl: String(this.#options.serverUrl) })) === 'AUTHORIZED') {
        this.#notify();
        return;
      }
    }
    const url = this.#signIn.url();
    if (!url) return;
    const callback = await leaveFor(url, this.#options, this.#signIn).catch((error) => {
      // The popup reads as closed: this page stops waiting; the next authorize() starts afresh.
      if (error instanceof McpQueryError && error.code === 'CANCELLED') this.#abandon(url);
      throw error;
    });
    if (callback !== undefined) await this.complete(callback);
  }

  /**
   * Finish a sign-in from the URL the authorization server returned to:
   * check `state` (the SDK does not) before anything else, take the sign-in
   * out of storage (it is redeemed once, whatever happens next), exchange
   * the code (the SDK checks `iss` and PKCE), store the tokens. Returns
   * where the user was before leaving.
   */
  async complete(callbackUrl: string | URL): Promise<{ returnTo: string | undefined }> {
    const response = readAuthorizationResponse(callbackUrl);
    const signIn = this.#signIn.redeem(response);
    const code = codeOf(response);
    const exchange = { ...signIn, signOuts: this.#saved.signOuts() };
    this.#exchanging = exchange;
    try {
      await auth(this, {
        serverUrl: String(this.#options.serverUrl),
        authorizationCode: code,
        ...(response.iss !== null && { iss: response.iss }),
      });
    } finally {
      this.#exchanging = undefined;
    }
    if (this.#signedOutSince(exchange)) {
      throw new McpQueryError(
        'CANCELLED',
        'signed out (or the server was removed) while this sign-in was finishing: its tokens were dropped',
      );
    }
    this.#notify();
    return { returnTo: signIn.returnTo };
  }

  /**
   * Whether the callback page finishes the sign-in `callbackUrl` answers
   * itself: one started here in redirect mode. One started in a popup, or
   * whose secrets are not here (a popup's stay in the page that opened it),
   * is handed to the opener.
   */
  finishesHere(callbackUrl: string | URL): boolean {
    return this.#signIn.finishesHere(readAuthorizationResponse(callbackUrl).state);
  }

  /**
   * Forget this user: their tokens and identity go (and with them, in the
   * cache, their private data; the connection they opened ends), and so
   * does any sign-in in progress. The refresh token is revoked where the
   * authorization server offers it (RFC 7009); resolves once that is done.
   */
  async signOut(): Promise<void> {
    const { latest } = this.#saved.signed();
    this.#saved.signOut();
    this.#signIn.clear();
    this.#seenToken = undefined;
    this.#notify();
    await this.#revoke(latest);
  }

  #revoke(tokens: StoredOAuthTokens | undefined): Promise<void> {
    return revokeIssued(tokens, this.#saved, (ctx) => this.clientInformation(ctx));
  }

  #signedOutSince(exchange: { signOuts: number } | undefined): boolean {
    return exchange !== undefined && exchange.signOuts !== this.#saved.signOuts();
  }

  /**
   * This page stops waiting for the sign-in `url` started: its URL goes; the
   * stored sign-in stays until the next `authorize()` replaces it (a popup
   * cut off by COOP only reads as closed: its callback page may finish it).
   */
  #abandon(url: URL): void {
    if (this.#signIn.url() !== url) return;
    this.#signIn.withdraw();
    this.#notify();
  }

  /**
   * Another tab, or another provider on the storage (the callback page),
   * changed the tokens. Signed in there: the URL handed out here for a new
   * sign-in is not needed (a step-up's still is: a refresh there gives no
   * more scope).
   */
  #changedElsewhere(): void {
    const token = this.tokens()?.access_token;
    if (token !== undefined && token !== this.#seenToken && !this.#signIn.get().stepUpOf) {
      this.#signIn.withdraw();
    }
    this.#seenToken = token;
    this.#notify();
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}

/** An OAuth provider for McpProvider's `authProvider` (see `OAuthProvider`). */
export function createOAuthProvider(options: OAuthProviderOptions): OAuthProvider {
  return new OAuthProvider(options);
}
