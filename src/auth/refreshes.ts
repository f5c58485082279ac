import type { StoredOAuthTokens } from '@modelcontextprotocol/client';

/** Refresh tokens remembered; older ones are forgotten (their refreshes long over). */
const MAX_REMEMBERED = 16;

/** A refresh token noted: the count of sign-outs then, and whose tokens they were. */
interface Note {
  signOuts: number;
  identity: string | undefined;
}

/** Refresh tokens noted, each with the count of sign-outs and the identity when it was noted. */
class Notes {
  readonly #notes = new Map<string, Note>();

  note(tokens: StoredOAuthTokens, note: Note): void {
    const key = tokens.refresh_token ?? '';
    this.#notes.delete(key);
    this.#notes.set(key, note);
    const oldest = this.#notes.keys().next().value;
    if (this.#notes.size > MAX_REMEMBERED && oldest !== undefined) {
      this.#notes.delete(oldest);
    }
  }

  at(tokens: StoredOAuthTokens): number | undefined {
    return this.#notes.get(tokens.refresh_token ?? '')?.signOuts;
  }

  has(refreshToken: string): boolean {
    return this.#notes.has(refreshToken);
  }

  /** Whether some were noted, every one of them before the `signOuts`th sign-out. */
  before(signOuts: number): boolean {
    const notes = [...this.#notes.values()];
    return notes.length > 0 && notes.every((note) => note.signOuts < signOuts);
  }

  /** Whether some were noted, every one of them `identity`'s after `signOuts` sign-outs. */
  onlyOf(identity: string, signOuts: number): boolean {
    const notes = [...this.#notes.values()];
    return (
      notes.length > 0 &&
      notes.every((note) => note.signOuts === signOuts && note.identity === identity)
    );
  }
}

/**
 * The refreshes this page started (the SDK's `auth()` names the tokens it
 * refreshes in `scopeForRefresh`, right before asking the authorization
 * server), by refresh token, with the count of sign-outs then. What a
 * refresh brings back, its answer or its failure, belongs to the tokens it
 * started from, and says nothing about tokens no refresh here started from:
 * someone who signed in since (after a sign-out or not), another tab's
 * refresh, a step-up's tokens (taken to look at, never refreshed).
 *
 * `@modelcontextprotocol/client` before 2.4.0 never calls `scopeForRefresh`.
 * Until it has been called, the tokens handed to `auth()` (asked for with a
 * context: to refresh them, or to look at them) stand for the refreshes
 * started: every refresh of those SDKs is so handed out first, so refreshes
 * still save their answer and discard tokens refused, as before 2.4.0 (a
 * step-up's hand-out then counts too: the late answer of the previous
 * user's refresh, during the next user's step-up, is taken as theirs).
 *
 * What it cannot tell: two refreshes in flight at once, one of the previous
 * user's tokens and one of the held ones (the SDK's answer and failure name
 * neither). The held ones' refresh must then have started after the next
 * user signed in while the other is still out: a token endpoint that slow.
 */
export class Refreshes {
  readonly #started = new Notes();
  readonly #handedOut = new Notes();
  /** Whether the SDK names its refreshes (`scopeForRefresh`, 2.4.0 on). */
  #named = false;

  /** `tokens` are handed to the SDK's `auth()`, which may refresh them. */
  handedOut(tokens: StoredOAuthTokens | undefined, note: Note): void {
    if (tokens) this.#handedOut.note(tokens, note);
  }

  /** A refresh of `tokens` (`identity`'s) starts, `signOuts` sign-outs so far. */
  started(tokens: StoredOAuthTokens, note: Note): void {
    this.#named = true;
    this.#started.note(tokens, note);
  }

  /** Whether a refresh started here from `held` since the latest sign-out (`signOuts`). */
  startedFrom(held: StoredOAuthTokens | undefined, signOuts: number): boolean {
    return held !== undefined && this.#notes().at(held) === signOuts;
  }

  /**
   * Whether `saved` (a refresh's answer) may be for other tokens than
   * `held`: no refresh started from the held tokens since the latest
   * sign-out; or it keeps another refresh token a refresh started from
   * here (the SDK keeps the one it refreshed when none comes back).
   *
   * Nothing held because a failed refresh (`invalid_grant`) discarded the
   * tokens of `lapsed` (an identity), nobody having signed in or out since:
   * the answer is theirs when every refresh noted here was of their tokens
   * since the latest sign-out. It is the refresh that won, where the server
   * rotates refresh tokens and the others of the same token failed.
   */
  stale(
    saved: StoredOAuthTokens,
    held: StoredOAuthTokens | undefined,
    signOuts: number,
    lapsed?: string,
  ): boolean {
    if (held === undefined && lapsed !== undefined) {
      return !this.#notes().onlyOf(lapsed, signOuts);
    }
    if (!this.startedFrom(held, signOuts)) return true;
    const kept = saved.refresh_token;
    return kept !== undefined && kept !== held?.refresh_token && this.#notes().has(kept);
  }

  /**
   * Whether `saved`, a refresh's answer not kept, is left to nobody: every
   * refresh noted here began before the latest sign-out (`signOuts`), and its
   * refresh token is a new one (rotated), which nothing holds. Not so when a
   * refresh began since (its answer may be dropped only because another tab
   * refreshed the same user's tokens first: theirs may share its grant).
   */
  leftBehind(saved: StoredOAuthTokens, signOuts: number): boolean {
    const kept = saved.refresh_token;
    return kept !== undefined && !this.#notes().has(kept) && this.#notes().before(signOuts);
  }

  #notes(): Notes {
    return this.#named ? this.#started : this.#handedOut;
  }
}
