/**
 * `mcp-react-query/auth`: OAuth for MCP servers, from a browser. Kept out of
 * the main entry so apps that do not sign in do not ship it.
 */
export { completeAuthorization } from './auth/completeAuthorization';
export {
  type AuthorizationResponse,
  createOAuthProvider,
  OAuthProvider,
  type OAuthProviderOptions,
  readAuthorizationResponse,
} from './auth/oauthProvider';
export { type KeyValueStorage, memoryStorage } from './auth/storage';
export type { AuthAware, AuthControl } from './core/signIn';
