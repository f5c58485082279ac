import type { OAuthProvider } from './oauthProvider';
import { CALLBACK_MESSAGE } from './popup';

type Page = {
  location?: { href: string; origin: string };
  opener?: { postMessage(message: unknown, origin: string): void } | null;
  close?: () => void;
  history?: { replaceState(data: unknown, unused: string, url: string): void };
};

/**
 * The callback URL a callback page handles (`callbackUrl`, or the page's own address), and
 * `clean()`: when it is the page's own, the authorization response (`code`, `state`, `iss`,
 * `error`) leaves the address bar and the history entry, which a reload or a shared link
 * would send again. A callback page calls it whatever happened, refused callbacks included.
 */
export function callbackPage(callbackUrl?: string | URL): { url: string; clean(): void } {
  const page = globalThis as unknown as Page;
  const url = String(callbackUrl ?? page.location?.href);
  const clean = () => {
    if (!page.history || !page.location || callbackUrl !== undefined || !URL.canParse(url)) return;
    const cleaned = new URL(url);
    for (const name of ['code', 'state', 'iss', 'error', 'error_description']) {
      cleaned.searchParams.delete(name);
    }
    page.history.replaceState(null, '', cleaned.href);
  };
  return { url, clean };
}

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
  const page = globalThis as unknown as Page;
  const { url, clean } = callbackPage(callbackUrl);
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
    clean(); // whatever happened, the code leaves the address bar (and the history entry)
  }
}
