import type { OAuthProvider } from './oauthProvider';
import { CALLBACK_MESSAGE } from './popup';

/**
 * For the page the authorization server returns to (the provider's
 * `redirectUrl`). In a sign-in popup (a window with an opener, and a sign-in
 * that was not started in it in redirect mode) it hands the result to the
 * window that opened it and closes; otherwise it finishes the sign-in (state, code and
 * `iss` checks, token exchange), removes the parameters from the address
 * bar (also when that failed) and resolves with where the user was before
 * signing in, for the app's router to go back to.
 */
export async function completeAuthorization(
  provider: OAuthProvider,
  callbackUrl?: string | URL,
): Promise<{ returnTo: string | undefined; popup: boolean }> {
  const page = globalThis as unknown as {
    location?: { href: string; origin: string };
    opener?: { postMessage(message: unknown, origin: string): void } | null;
    close?: () => void;
    history?: { replaceState(data: unknown, unused: string, url: string): void };
  };
  const url = String(callbackUrl ?? page.location?.href);
  // Only a sign-in started in a popup goes to the opener: a tab that another window opened
  // (a link with target=_blank, a window.open) finishes its own redirect sign-in.
  if (page.opener && page.location && callbackUrl === undefined && !provider.finishesHere(url)) {
    page.opener.postMessage({ type: CALLBACK_MESSAGE, url }, page.location.origin);
    page.close?.();
    return { returnTo: undefined, popup: true };
  }
  try {
    const { returnTo } = await provider.complete(url);
    return { returnTo, popup: false };
  } finally {
    // Whatever happened, the code leaves the address bar (and the history
    // entry, which a reload or a shared link would send again).
    if (page.history && page.location && callbackUrl === undefined) {
      const clean = new URL(url);
      for (const name of ['code', 'state', 'iss', 'error', 'error_description']) {
        clean.searchParams.delete(name);
      }
      page.history.replaceState(null, '', clean.href);
    }
  }
}
