import type { OAuthClientProvider } from '@modelcontextprotocol/client';

/**
 * What an OAuth provider may add to the SDK's interface so the connection
 * can drive sign-in itself (`createOAuthProvider` from
 * `mcp-react-query/auth` does): start it, hear when tokens change — here or
 * in another tab — and say who is signed in.
 */
export interface InteractiveAuth {
  /** Start signing in: navigate (redirect) or open a popup and wait for it. */
  authorize(): Promise<void>;
  /** Tokens changed (signed in, refreshed, signed out). */
  subscribe(listener: () => void): () => void;
  /**
   * Who is signed in, stable across token refreshes; `undefined` when nobody
   * is. Private data read under one identity is never shown under another.
   */
  identity(): string | undefined;
}

export function interactive(
  provider: OAuthClientProvider | undefined,
): InteractiveAuth | undefined {
  const candidate = provider as Partial<InteractiveAuth> | undefined;
  return typeof candidate?.authorize === 'function' &&
    typeof candidate.subscribe === 'function' &&
    typeof candidate.identity === 'function'
    ? (candidate as InteractiveAuth)
    : undefined;
}
