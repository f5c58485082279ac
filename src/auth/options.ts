import type {
  OAuthClientMetadata,
  StoredOAuthClientInformation,
} from '@modelcontextprotocol/client';
import type { StorageChoice } from './storage';

export interface OAuthProviderOptions {
  /** The MCP server, as given to McpProvider's `url`. */
  serverUrl: string | URL;
  /** The page the authorization server returns to; it calls `completeAuthorization`. */
  redirectUrl: string | URL;
  /** Sent when registering dynamically; `redirect_uris` and grant types are filled in. */
  clientMetadata?: Partial<OAuthClientMetadata>;
  /** A client ID metadata document URL (https, with a path): used where the server supports it. */
  clientMetadataUrl?: string;
  /** A client registered beforehand (no dynamic registration). */
  clientInformation?: StoredOAuthClientInformation;
  /** `redirect` (default) leaves the page; `popup` signs in in a window and stays. */
  mode?: 'redirect' | 'popup';
  /**
   * Where tokens live: `'session'` (default: the tab's sessionStorage),
   * `'local'`, `'memory'`, or a storage of your own (SECURITY.md weighs them).
   * The `state` and PKCE verifier of a sign-in live only while it does: in
   * the page (popup), in sessionStorage (redirect), or in your storage.
   */
  storage?: StorageChoice;
  /** Prefix of the storage keys (default: one per server URL). */
  storageKey?: string;
  /**
   * How the user is sent to the authorization page. Default: redirect mode
   * navigates this window, popup mode opens one. Tests and native shells
   * replace it.
   */
  navigate?: (url: URL) => void | Promise<void>;
}

/** What the client registers with: the app's metadata, this redirect URL, no client secret. */
export function clientMetadataOf(options: OAuthProviderOptions): OAuthClientMetadata {
  return {
    client_name: 'mcp-react-query',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...options.clientMetadata,
    redirect_uris: [String(options.redirectUrl)],
  } as OAuthClientMetadata;
}
