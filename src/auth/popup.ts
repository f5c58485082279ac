export const CALLBACK_MESSAGE = 'mcp-react-query:oauth-callback';

interface Page {
  open(url: string, target: string, features: string): unknown;
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
 */
export function popupCallback(
  url: URL,
  redirectUrl: string,
  state: () => string | undefined,
): Promise<string> {
  const page = globalThis as unknown as Page;
  const expected = new URL(redirectUrl);
  return new Promise<string>((resolve, reject) => {
    let popup: unknown;
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
      page.removeEventListener('message', onMessage);
      resolve(callback.href);
    };
    page.addEventListener('message', onMessage);
    popup = page.open(url.href, 'mcp-oauth', 'popup,width=520,height=720') ?? undefined;
    if (popup === undefined) {
      page.removeEventListener('message', onMessage);
      reject(new Error('the sign-in popup was blocked: call authorize() from a click'));
    }
  });
}
