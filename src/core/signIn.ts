/**
 * What an auth provider may add so the connection follows sign-in
 * (`createOAuthProvider` from `mcp-react-query/auth` does).
 */
export interface AuthAware {
  /** Who is signed in now (stable across refreshes); undefined when nobody is. */
  identity?(): string | undefined;
  /** Follow this connection: report sign-ins, say what `authorize()` does. Returns unbind. */
  bind?(control: AuthControl): () => void;
}

export interface AuthControl {
  /**
   * Tokens changed: who is signed in now, and whether there is a token to
   * use (which resumes a connection waiting for one).
   */
  signedIn(identity: string | undefined, hasToken: boolean): void;
  /** What `useMcp().authorize()` does from now on. */
  setAuthorize(start: () => void): void;
  /** Signing in failed (an issuer mismatch, a refused registration…): the status says why. */
  failed(error: unknown): void;
}
