/**
 * What an auth provider may add so the connection follows sign-in
 * (`createOAuthProvider` from `mcp-react-query/auth` does).
 */
export interface AuthAware {
  /**
   * Why it must not sign in to `url`, if so (its tokens are another
   * server's): the connection fails with that error and sends nothing.
   */
  refuse?(url: URL): Error | undefined;
  /** Who is signed in now (stable across refreshes); undefined when nobody is. */
  identity?(): string | undefined;
  /** Follow this connection: report sign-ins, say what `authorize()` does. Returns unbind. */
  bind?(control: AuthControl): () => void;
}

export interface AuthControl {
  /**
   * Tokens changed: who is signed in now, and whether there is a token to
   * use (which resumes a connection waiting for one). `renew`: someone else
   * signed in, or nobody is: what the previous credentials opened (a
   * stream, a 2025 session) ends, and the connection starts again.
   */
  signedIn(identity: string | undefined, hasToken: boolean, renew?: boolean): void;
  /** What `useMcp().authorize()` does from now on. */
  setAuthorize(start: () => void): void;
  /** Signing in failed (an issuer mismatch, a refused registration…): the status says why. */
  failed(error: unknown): void;
}
