import {
  type AuthorizationServerMetadata,
  assertSecureTokenEndpoint,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';

/**
 * Revoke the refresh token of `tokens` with what a provider knows of the
 * authorization server that issued them (`revokeSignedOut`): its metadata as
 * last discovered (`saved`), the client registered there (`clientOf`).
 */
export function revokeIssued(
  tokens: StoredOAuthTokens | undefined,
  saved: { discovery(): { authorizationServerMetadata?: AuthorizationServerMetadata } | undefined },
  clientOf: (ctx: { issuer: string }) => StoredOAuthClientInformation | undefined,
): Promise<void> {
  const issuer = tokens?.issuer;
  const client = issuer === undefined ? undefined : clientOf({ issuer });
  return revokeSignedOut(tokens, saved.discovery()?.authorizationServerMetadata, client);
}

/**
 * On sign-out: revoke the refresh token of `tokens` where the authorization
 * server that issued them advertises a `revocation_endpoint`.
 */
export async function revokeSignedOut(
  tokens: StoredOAuthTokens | undefined,
  metadata: AuthorizationServerMetadata | undefined,
  client: StoredOAuthClientInformation | undefined,
): Promise<void> {
  const endpoint =
    metadata?.issuer === tokens?.issuer
      ? (metadata as { revocation_endpoint?: string } | undefined)?.revocation_endpoint
      : undefined;
  if (tokens?.refresh_token && endpoint && client) {
    await revokeRefreshToken(endpoint, tokens.refresh_token, client);
  }
}

/**
 * RFC 7009: tell the authorization server a refresh token is no longer
 * wanted, so a copy taken before sign-out is worth nothing. The client
 * authenticates as it does at the token endpoint (public clients name
 * themselves). Resolves with whether the server accepted; never rejects:
 * signing out here has happened either way.
 */
export async function revokeRefreshToken(
  endpoint: string,
  token: string,
  client: StoredOAuthClientInformation,
): Promise<boolean> {
  try {
    // The token leaves only over https (or to this machine), as at the token endpoint.
    const url = assertSecureTokenEndpoint(endpoint);
    const body = new URLSearchParams({ token, token_type_hint: 'refresh_token' });
    const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded' });
    const { client_id: id, client_secret: secret } = client;
    const method = (client as { token_endpoint_auth_method?: string }).token_endpoint_auth_method;
    if (secret !== undefined && method === 'client_secret_basic') {
      const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
      headers.set('authorization', `Basic ${btoa(`${encode(id)}:${encode(secret)}`)}`);
    } else {
      body.set('client_id', id);
      if (secret !== undefined) body.set('client_secret', secret);
    }
    // keepalive: an app may leave the page right after signing out.
    const response = await fetch(url, { method: 'POST', headers, body, keepalive: true });
    await response.body?.cancel().catch(() => {});
    return response.ok;
  } catch {
    return false;
  }
}
