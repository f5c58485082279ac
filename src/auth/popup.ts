import { McpQueryError } from '../core/errors';
import type { OAuthProviderOptions } from './options';
import type { PendingSignIn } from './signIn';

export const CALLBACK_MESSAGE = 'mcp-react-query:oauth-callback';

/** How often the popup is checked for having been closed. */
export const POPUP_POLL_MS = 500;

interface Page {
  open(url: string, target: string, features: string): { closed?: boolean } | null;
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
  removeEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
}

/**
 * Open the sign-in popup at `url` and resolve with the callback URL it posts
 * back (`completeAuthorization` in the popup). Any window or frame of the
 * page (an embedded MCP App view, an ad) can post messages too, so only one
 * from the popup itself, on the redirect page's origin, carrying this
 * sign-in's `state` (checked first) and the callback path, is heard;
 * anything else is ignored and listening goes on.
 *
 * A popup closed before it answered (by the user, or cut off from this page
 * by the authorization server's Cross-Origin-Opener-Policy, which reads as
 * closed) rejects with `CANCELLED`. Either way nothing is left listening.
 */
export function popupCallback(
  url: URL,
  redirectUrl: string,
  state: () => string | undefined,
): Promise<string> {
  const page = globalThis as unknown as Page;
  const expected = new URL(redirectUrl);
  return new Promise<string>((resolve, reject) => {
    let popup: { closed?: boolean } | undefined;
    let watch: ReturnType<typeof setInterval> | undefined;
    const end = () => {
      page.removeEventListener('message', onMessage);
      clearInterval(watch);
    };
    const onMessage = (event: MessageEvent) => {
      if (popup === undefined || event.source !== popup || event.origin !== expected.origin) return;
      const data = event.data as { type?: unknown; url?: unknown } | null;
      if (data?.type !== CALLBACK_MESSAGE || typeof data.url !== 'string') return;
      if (!URL.canParse(data.url)) return;
      const callback = new URL(data.url);
      const expectedState = state();
      if (expectedState === undefined || callback.searchParams.get('state') !== expectedState)
        return;
      if (callback.origin !== expected.origin || callback.pathname !== expected.pathname) return;
      end();
      resolve(callback.href);
    };
    page.addEventListener('message', onMessage);
    popup = page.open(url.href, 'mcp-oauth', 'popup,width=520,height=720') ?? undefined;
    if (popup === undefined) {
      end();
      reject(new Error('the sign-in popup was blocked: call authorize() from a click'));
      return;
    }
    // The popup posts its answer and then closes: the close may be seen before the message
    // arrives, so it counts once seen twice in a row.
    let closedFor = 0;
    watch = setInterval(() => {
      closedFor = popup?.closed ? closedFor + 1 : 0;
      if (closedFor < 2) return;
      end();
      reject(
        new McpQueryError(
          'CANCELLED',
          'the sign-in popup was closed before it answered (or the authorization server cut it off from this page with Cross-Origin-Opener-Policy): nothing was signed in; authorize() starts a new sign-in',
        ),
      );
    }, POPUP_POLL_MS);
  });
}

/**
 * Take the user to the authorization page `url` of the stored sign-in: with
 * the app's `navigate`, in a popup (resolves with the callback URL it posts
 * back; the sign-in is marked as a popup's, for its callback page), or by
 * leaving this page (where the user was is kept, for after the callback).
 */
export async function leaveFor(
  url: URL,
  options: Pick<OAuthProviderOptions, 'navigate' | 'mode' | 'redirectUrl'>,
  signIn: PendingSignIn,
): Promise<string | undefined> {
  if (options.navigate) {
    await options.navigate(url);
    return undefined;
  }
  if (options.mode === 'popup') {
    signIn.add({ popup: true });
    return popupCallback(url, String(options.redirectUrl), () => signIn.get().state);
  }
  const { location } = globalThis as unknown as {
    location: { href: string; assign(url: string): void };
  };
  signIn.add({ returnTo: location.href });
  location.assign(url.href);
  return undefined;
}
