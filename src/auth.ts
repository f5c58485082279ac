/**
 * `mcp-react-query/auth`: OAuth for MCP servers, from a browser. Kept out of
 * the main entry so apps that do not sign in do not ship it.
 */
export { completeAuthorization } from './auth/completeAuthorization';
export {
  createOAuthProvider,
  OAuthProvider,
  type OAuthProviderOptions,
} from './auth/oauthProvider';
export { type AuthorizationResponse, readAuthorizationResponse } from './auth/signIn';
export { type KeyValueStorage, memoryStorage, type StorageChoice } from './auth/storage';
export type { AuthAware, AuthControl } from './core/signIn';
