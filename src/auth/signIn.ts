import type { OAuthDiscoveryState } from '@modelcontextprotocol/client';
import { type KeyValueStorage, StoredJson } from './storage';

/** The parameters the authorization server adds to the redirect URL. */
export interface AuthorizationResponse {
  code: string | null;
  state: string | null;
  iss: string | null;
  error: string | null;
  errorDescription: string | null;
}

export function readAuthorizationResponse(callbackUrl: string | URL): AuthorizationResponse {
  const params = new URL(String(callbackUrl)).searchParams;
  return {
    code: params.get('code'),
    state: params.get('state'),
    iss: params.get('iss'),
    error: params.get('error'),
    errorDescription: params.get('error_description'),
  };
}

/** The code of an authorization response, or why there is none (the user refused, say). */
export function codeOf(response: AuthorizationResponse): string {
  if (response.error) {
    const description = response.errorDescription ? ` (${response.errorDescription})` : '';
    throw new Error(`sign-in failed: ${response.error}${description}`);
  }
  if (!response.code) throw new Error('the callback URL carries no authorization code');
  return response.code;
}

/** The authorization server gives no sign that it checks PKCE: signing in there is refused. */
export class PkceNotSupportedError extends Error {
  override readonly name = 'PkceNotSupportedError';
}

/**
 * The MCP spec: a client must refuse to proceed when the authorization
 * server's metadata does not list `code_challenge_methods_supported`
 * (without it, nothing says the code is bound to this client's verifier).
 * A server with no metadata at all (the 2025-03-26 fallback) is left to
 * the SDK's defaults.
 */
export function refuseWithoutPkce(discovery: OAuthDiscoveryState | undefined): void {
  const metadata = discovery?.authorizationServerMetadata;
  if (!metadata || metadata.code_challenge_methods_supported?.includes('S256')) return;
  throw new PkceNotSupportedError(
    `the authorization server ${metadata.issuer} lists no S256 in code_challenge_methods_supported: signing in without PKCE is refused`,
  );
}

/** 128 random bits, hex. */
export const randomState = (): string => {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
};

/** One sign-in, from the authorization URL handed out to its callback. */
export interface SignIn {
  state?: string;
  verifier?: string;
  /** What discovery found before leaving: the code goes to that authorization server (SEP-2352). */
  discovery?: OAuthDiscoveryState;
  /** Where the user was before leaving (redirect mode). */
  returnTo?: string;
  /** The scope its authorization URL asks for ('' for none). */
  scope?: string;
  /**
   * Who was signed in when it started, if it asks for more scope than their
   * token has (a step-up, see `stepUpOf`): it stays theirs unless the new
   * tokens name someone.
   */
  stepUpOf?: string;
  /** Started in a popup: its callback page hands the answer to the page that opened it. */
  popup?: boolean;
}

/**
 * The secrets of the one sign-in in progress (its `state` and PKCE
 * verifier), kept only as long as it is: a new sign-in replaces them, its
 * callback takes them out before anything else happens, and signing out
 * drops them. The authorization URL handed out for it is kept in the page,
 * and only while the stored sign-in is still its own: another provider on
 * the same storage (another tab, the callback page) that starts, finishes
 * or ends a sign-in makes it lead nowhere (`onWithdrawn`).
 */
export class PendingSignIn {
  readonly #stored: StoredJson<SignIn>;
  #url: URL | undefined;

  constructor(storage: KeyValueStorage, key: string, onWithdrawn: () => void) {
    this.#stored = new StoredJson<SignIn>(storage, key, {}, () => {
      if (this.#url && !this.url()) onWithdrawn();
    });
  }

  get(): SignIn {
    return this.#stored.get();
  }

  /** Hear no more changes made elsewhere (the provider is let go). */
  release(): void {
    this.#stored.release();
  }

  /** The URL handed out for the sign-in in progress, while the stored sign-in is its own. */
  url(): URL | undefined {
    if (this.#url?.searchParams.get('state') !== this.get().state) this.#url = undefined;
    return this.#url;
  }

  /** Hand out `url`, if it is the stored sign-in's (a URL of a replaced one cannot be redeemed). */
  handOut(url: URL): boolean {
    const state = this.get().state;
    if (state === undefined || url.searchParams.get('state') !== state) return false;
    this.#url = url;
    return true;
  }

  /** The URL is not needed any more (signed in elsewhere); the next sign-in makes a new one. */
  withdraw(): void {
    this.#url = undefined;
  }

  /** Whether the callback page finishes the sign-in of `state` here: a redirect one stored here. */
  finishesHere(state: string | null): boolean {
    const signIn = this.get();
    return signIn.state !== undefined && signIn.state === state && !signIn.popup;
  }

  /** A new sign-in: nothing of an older one stays. */
  begin(state: string): void {
    this.#url = undefined;
    this.#stored.update(() => ({ state }));
  }

  add(part: SignIn): void {
    this.#stored.update((signIn) => ({ ...signIn, ...part }));
  }

  /**
   * The sign-in a callback belongs to, taken out of storage before anything
   * is done with it, so that a second callback (a reload, a double submit)
   * finds nothing to redeem. A callback with another `state` changes nothing.
   */
  redeem(response: AuthorizationResponse): SignIn {
    const signIn = this.get();
    if (!signIn.state || response.state !== signIn.state) {
      throw new Error('the callback does not belong to a sign-in started here (state mismatch)');
    }
    this.clear();
    return signIn;
  }

  clear(): void {
    this.#url = undefined;
    this.#stored.clear();
  }
}
