import type {
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { McpQueryError } from '../core/errors';
import { resolveUrl } from '../core/failure';
import { Refreshes } from './refreshes';
import { randomState, type SignIn } from './signIn';
import { type KeyValueStorage, StoredJson } from './storage';

/** What one server's sign-in keeps. */
export interface Signed {
  /** Per authorization server issuer ('' when unknown). */
  tokens: Record<string, StoredOAuthTokens>;
  latest?: StoredOAuthTokens;
  /** Who signed in (see `OAuthProvider#identity`). */
  identity?: string;
  /**
   * The scope the sign-in of `latest` asked for ('' for none), kept through its refreshes;
   * unknown for tokens stored before it was kept.
   */
  asked?: string;
  /** Sign-outs so far: a sign-in or refresh that began before the latest one saves nothing. */
  signOuts?: number;
  /**
   * The tokens were discarded because a refresh of them failed (`invalid_grant`), and nobody
   * signed in or out since: the refresh of them that won (where the server rotates refresh
   * tokens) still brings this user's new tokens (`Refreshes#stale`).
   */
  lapsed?: boolean;
}

interface Saved {
  /** Client registrations, per authorization server issuer: any server may use them. */
  clients: Record<string, StoredOAuthClientInformation>;
  /**
   * Tokens per resource (a server's canonical URL, RFC 8707): handed out
   * only for the server they were issued for, even when several providers
   * share one storage key.
   */
  resources: Record<string, Signed>;
  /** What discovery found last (public metadata: where to revoke, among others). */
  discovery?: OAuthDiscoveryState;
}

const EMPTY: Signed = { tokens: {} };

/** A server as an OAuth resource (RFC 8707, the MCP spec's canonical URI): absolute, no fragment. */
export function canonicalResource(url: string | URL): string {
  const resolved = resolveUrl(url);
  resolved.hash = '';
  return resolved.href;
}

/**
 * A connection to `url` with the tokens of `resource` would hand them to
 * another server, which could replay them where they are valid.
 */
export function otherServer(resource: string, url: URL): McpQueryError | undefined {
  const target = canonicalResource(url);
  if (target === resource) return undefined;
  return new McpQueryError(
    'INVALID_OPTIONS',
    `the authProvider signs in to ${resource}, not to ${target}: a token goes only to the server it was issued for (one provider per server)`,
  );
}

/** The `sub` claim of a JWT, unverified: enough to tell two signed-in users apart. */
function subject(token: string | undefined): string | undefined {
  const payload = token?.split('.')[1];
  if (!payload) return undefined;
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const sub = (JSON.parse(json) as { sub?: unknown }).sub;
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}

/** A scope list as a set; `offline_access` asks for a refresh token, not for access. */
const scopes = (list: string | null | undefined): Set<string> =>
  new Set((list ?? '').split(/\s+/).filter((scope) => scope && scope !== 'offline_access'));

/**
 * Whose sign-in the authorization URL `url` steps up, if it is a step-up:
 * the server refused the held token for want of scope (403
 * `insufficient_scope`, which it answers only to a token it accepts), so
 * the SDK asks for scope that token was neither granted nor asked for
 * before. A sign-in asking for no more follows a 401 (expired, revoked,
 * nothing to refresh it with), or asks again what was asked and not
 * granted: whoever signs in then may be someone else. When the held scope,
 * or what was asked for it, is not known: someone new (a cache reset at
 * worst, never another user's data).
 */
export function stepUpOf(url: URL, signed: Signed): string | undefined {
  const { identity, latest, asked } = signed;
  if (identity === undefined || !latest?.scope || asked === undefined) return undefined;
  const known = scopes(`${latest.scope} ${asked}`);
  return [...scopes(url.searchParams.get('scope'))].some((scope) => !known.has(scope))
    ? identity
    : undefined;
}

/**
 * What is held once `tokens` (for authorization server `issuer`) are saved.
 * A token answer without `scope` was granted what was asked (RFC 6749 5.1
 * and 6): a code exchange (`exchange`), its authorization URL's scope; a
 * refresh, what the tokens it refreshed had. What a sign-in asked for is
 * kept through its refreshes (see `stepUpOf`).
 */
export function signedWith(
  tokens: StoredOAuthTokens,
  issuer: string,
  signed: Signed,
  exchange: SignIn | undefined,
): Signed {
  const asked = exchange ? exchange.scope : signed.asked;
  const held = exchange ? asked || undefined : (signed.tokens[issuer] ?? signed.latest)?.scope;
  const scope = tokens.scope ?? held;
  const saved = scope === undefined ? tokens : { ...tokens, scope };
  return {
    tokens: { ...signed.tokens, [issuer]: saved },
    latest: saved,
    identity: whoSignedIn(tokens, signed, exchange),
    ...(asked !== undefined && { asked }),
    signOuts: signed.signOuts,
  };
}

/**
 * Who `tokens` belong to. A code exchange (`exchange`) is someone signing
 * in, who is whoever the tokens name; tokens that name nobody (opaque) make
 * them someone new, so private data never crosses users. A refresh, or a
 * scope step-up (`stepUpOf`), is the same person.
 */
export function whoSignedIn(
  tokens: StoredOAuthTokens,
  signed: Signed,
  exchange: SignIn | undefined,
): string {
  const same = exchange === undefined || exchange.stepUpOf === signed.identity;
  return (
    subject((tokens as { id_token?: string }).id_token) ??
    subject(tokens.access_token) ??
    (same ? signed.identity : undefined) ??
    randomState()
  );
}

/** Whether `text`, what a provider stored under its key, holds tokens or an identity. */
export function holdsTokens(text: string | null): boolean {
  try {
    const saved = JSON.parse(text ?? '{}') as Partial<Saved> | null;
    return Object.values(saved?.resources ?? {}).some(
      (signed) =>
        signed?.latest !== undefined ||
        signed?.identity !== undefined ||
        Object.keys(signed?.tokens ?? {}).length > 0,
    );
  } catch {
    return text !== null; // unreadable: whatever it is goes with the add
  }
}

/** The credentials one provider keeps, under one storage key. */
export class Credentials {
  readonly #stored: StoredJson<Saved>;
  readonly #resource: string;
  readonly #refreshes = new Refreshes();

  constructor(storage: KeyValueStorage, key: string, resource: string, onChange: () => void) {
    this.#resource = resource;
    this.#stored = new StoredJson<Saved>(storage, key, { clients: {}, resources: {} }, onChange);
  }

  /** Hear no more changes made elsewhere (the provider is let go). */
  release(): void {
    this.#stored.release();
  }

  /** This server's tokens and identity. */
  signed(): Signed {
    return this.#stored.get().resources?.[this.#resource] ?? EMPTY;
  }

  /** The tokens held for authorization server `issuer` (the latest without one). */
  held(issuer?: string): StoredOAuthTokens | undefined {
    const signed = this.signed();
    return issuer === undefined ? signed.latest : signed.tokens[issuer];
  }

  /** The tokens held for `issuer`, handed to the SDK's `auth()`, which may refresh them. */
  handOut(issuer: string): StoredOAuthTokens | undefined {
    const held = this.held(issuer);
    this.#refreshes.handedOut(held, this.#note());
    return held;
  }

  /** The SDK's `auth()` refreshes `tokens` now (`Refreshes`). */
  refreshing(tokens: StoredOAuthTokens): void {
    this.#refreshes.started(tokens, this.#note());
  }

  #note() {
    return { signOuts: this.signOuts(), identity: this.signed().identity };
  }

  /** Whether a refresh's answer `saved` is for tokens not held any more (`Refreshes`). */
  stale(saved: StoredOAuthTokens, issuer?: string): boolean {
    const { lapsed, identity } = this.signed();
    const of = lapsed === true ? identity : undefined;
    return this.#refreshes.stale(saved, this.held(issuer), this.signOuts(), of);
  }

  /** Whether `saved`, a refresh's answer not kept, is left to nobody (`Refreshes#leftBehind`). */
  leftBehind(saved: StoredOAuthTokens): boolean {
    return this.#refreshes.leftBehind(saved, this.signOuts());
  }

  /** Tokens and identity go; the count of sign-outs goes up (by any provider on the storage). */
  signOut(): void {
    const signOuts = this.signOuts() + 1;
    this.setSigned(() => ({ tokens: {}, signOuts }));
  }

  signOuts(): number {
    const count = this.signed().signOuts;
    return typeof count === 'number' ? count : 0;
  }

  setSigned(change: (signed: Signed) => Signed): void {
    this.#stored.update((saved) => ({
      ...saved,
      resources: { ...saved.resources, [this.#resource]: change(this.signed()) },
    }));
  }

  client(issuer: string): StoredOAuthClientInformation | undefined {
    return this.#stored.get().clients?.[issuer];
  }

  setClients(
    change: (
      clients: Record<string, StoredOAuthClientInformation>,
    ) => Record<string, StoredOAuthClientInformation>,
  ): void {
    this.#stored.update((saved) => ({ ...saved, clients: change(saved.clients ?? {}) }));
  }

  /**
   * What the SDK asks to discard (`invalidateCredentials`): the sign-in in progress aside. It
   * discards tokens when a refresh fails (`invalid_grant`): only held tokens a refresh here
   * started from since the latest sign-out go, never those of someone who signed in since, nor
   * tokens another tab refreshed meanwhile (`Refreshes`).
   */
  invalidate(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    const all = scope === 'all';
    if (all || (scope === 'tokens' && this.#refreshedHeld())) {
      this.setSigned((signed) =>
        all
          ? { tokens: {}, signOuts: signed.signOuts }
          : { ...signed, tokens: {}, latest: undefined, lapsed: true },
      );
    }
    if (all || scope === 'client') this.setClients(() => ({}));
    if (all || scope === 'discovery') this.setDiscovery(undefined);
  }

  #refreshedHeld(): boolean {
    const { latest, tokens } = this.signed();
    const signOuts = this.signOuts();
    return [latest, ...Object.values(tokens)].some((held) =>
      this.#refreshes.startedFrom(held, signOuts),
    );
  }

  discovery(): OAuthDiscoveryState | undefined {
    return this.#stored.get().discovery;
  }

  setDiscovery(discovery: OAuthDiscoveryState | undefined): void {
    this.#stored.update((saved) => ({ ...saved, discovery }));
  }
}
