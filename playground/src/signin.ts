/**
 * The sign-in demo's OAuth providers: one per protected endpoint and mode, created once per page
 * (McpProvider reconnects when its `authProvider` changes identity) and shared by the sign-in
 * page and the callback page, which must finish the sign-in with the provider that started it.
 *
 * Tokens live in the tab's sessionStorage (the provider's default) under a key per endpoint and
 * mode, so the redirect and the popup demo are two separate sign-ins, a reload stays signed in,
 * and closing the tab signs out.
 */
import {
  callbackPath,
  type EndpointId,
  isEndpointId,
  PROTECTED_ENDPOINTS,
  type SignInMode,
} from '../shared/demo';
import { createOAuthProvider, type OAuthProvider } from './auth';

const providers = new Map<string, OAuthProvider>();

export function providerFor(endpoint: EndpointId, mode: SignInMode): OAuthProvider {
  const key = `${endpoint}:${mode}`;
  let provider = providers.get(key);
  if (!provider) {
    const origin = window.location.origin;
    provider = createOAuthProvider({
      serverUrl: new URL(PROTECTED_ENDPOINTS[endpoint].path, origin),
      redirectUrl: new URL(callbackPath(endpoint), origin),
      mode,
      storageKey: `playground-oauth:${key}`,
      clientMetadata: { client_name: 'mcp-react-query playground' },
    });
    providers.set(key, provider);
  }
  return provider;
}

/** `/signin?endpoint=legacy&mode=popup` → what the sign-in page shows. */
export function signInParams(search: string): { endpoint: EndpointId; mode: SignInMode } {
  const params = new URLSearchParams(search);
  const endpoint = params.get('endpoint');
  return {
    endpoint: isEndpointId(endpoint) ? endpoint : 'modern',
    mode: params.get('mode') === 'popup' ? 'popup' : 'redirect',
  };
}

export function signInHref(endpoint: EndpointId, mode: SignInMode): string {
  return `/signin?endpoint=${endpoint}&mode=${mode}`;
}
