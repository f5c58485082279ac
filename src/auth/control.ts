import type { AuthControl } from '../core/signIn';

/** What of an OAuth provider the connection follows. */
interface Followed {
  authorize(): Promise<void>;
  identity(): string | undefined;
  tokens(): unknown;
  subscribe(listener: () => void): () => void;
}

/**
 * The connection `control` follows `provider`: tokens changing (here or in
 * another tab) reach it, with whether someone else is signed in now (an
 * expired or refused token is not someone else), and `useMcp().authorize()`
 * starts the provider's sign-in. Returns how to stop.
 */
export function followedBy(provider: Followed, control: AuthControl): () => void {
  control.setAuthorize(() => void provider.authorize().catch(control.failed));
  let signedIn = provider.identity();
  return provider.subscribe(() => {
    const now = provider.identity();
    const renew = now !== signedIn;
    signedIn = now;
    control.signedIn(now, provider.tokens() !== undefined, renew);
  });
}
