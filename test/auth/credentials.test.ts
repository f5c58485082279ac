import { describe, expect, it } from 'vitest';
import { createOAuthProvider } from '../../src/auth';
import { canonicalResource, otherServer, signedWith, stepUpOf } from '../../src/auth/credentials';
import { McpQueryError } from '../../src/core/errors';

describe('a server as an OAuth resource (RFC 8707)', () => {
  it('is the absolute URL without its fragment, host and scheme in lower case', () => {
    expect(canonicalResource('HTTPS://MCP.Example.com:443/mcp#part')).toBe(
      'https://mcp.example.com/mcp',
    );
    expect(canonicalResource(new URL('http://127.0.0.1:8080/mcp?tenant=a'))).toBe(
      'http://127.0.0.1:8080/mcp?tenant=a',
    );
  });

  it("another server is refused, naming both; the same server's spellings are not", () => {
    const resource = 'https://a.example/mcp';
    expect(otherServer(resource, new URL('https://A.example/mcp#x'))).toBeUndefined();
    for (const other of [
      'https://b.example/mcp',
      'https://a.example/mcp/',
      'http://a.example/mcp',
    ]) {
      const refused = otherServer(resource, new URL(other));
      expect(refused).toBeInstanceOf(McpQueryError);
      expect(refused?.code).toBe('INVALID_OPTIONS');
      expect(refused?.message).toContain(resource);
      expect(refused?.message).toContain(new URL(other).href);
    }
  });
});

describe('createOAuthProvider', () => {
  it('with a serverUrl that is not a URL fails clearly, at once', () => {
    expect(() =>
      createOAuthProvider({ serverUrl: 'http://', redirectUrl: 'https://app.example/callback' }),
    ).toThrow(/INVALID_OPTIONS|is not a valid URL/);
  });
});

describe('a sign-in that steps up the held identity', () => {
  const signed = (scope?: string, asked: string | undefined = scope) => ({
    tokens: {},
    latest: { access_token: 'opaque', token_type: 'Bearer', ...(scope && { scope }) },
    identity: 'alice',
    ...(asked !== undefined && { asked }),
  });
  const asking = (scope: string) => new URL(`https://as.example/authorize?scope=${scope}`);

  it('asks for scope the held token was neither granted nor asked for (403 insufficient_scope)', () => {
    expect(stepUpOf(asking('mcp mcp:admin'), signed('mcp'))).toBe('alice');
    expect(stepUpOf(asking('mcp mcp:admin'), signed('mcp', ''))).toBe('alice');
  });

  it('is not one when it asks for no more than the held token has (a 401: expired, revoked)', () => {
    expect(stepUpOf(asking('mcp'), signed('mcp'))).toBeUndefined();
    expect(stepUpOf(asking('mcp offline_access'), signed('mcp'))).toBeUndefined();
    expect(stepUpOf(asking('mcp'), signed('mcp mcp:admin'))).toBeUndefined();
  });

  it('is not one when it asks again for what the held sign-in asked and was not granted', () => {
    expect(stepUpOf(asking('mcp mcp:admin'), signed('mcp', 'mcp mcp:admin'))).toBeUndefined();
    expect(stepUpOf(asking('mcp:admin'), signed('mcp', 'mcp mcp:admin'))).toBeUndefined();
  });

  it('is not one when nothing says what the held token was granted or asked for, or nobody holds one', () => {
    expect(stepUpOf(asking('mcp mcp:admin'), signed())).toBeUndefined();
    expect(
      stepUpOf(asking('mcp mcp:admin'), { ...signed('mcp'), asked: undefined }),
    ).toBeUndefined();
    expect(stepUpOf(asking('mcp mcp:admin'), { tokens: {} })).toBeUndefined();
  });
});

describe('what is held once tokens are saved', () => {
  const token = { access_token: 'opaque', token_type: 'Bearer' };
  const exchange = (scope?: string) => ({ state: 's', ...(scope !== undefined && { scope }) });

  it("an answer without `scope` was granted what was asked (RFC 6749 5.1): the URL's scope, kept through refreshes", () => {
    const first = signedWith(token, 'as', { tokens: {} }, exchange('mcp offline_access'));
    expect(first.latest?.scope).toBe('mcp offline_access');
    expect(first.asked).toBe('mcp offline_access');
    const refreshed = signedWith({ ...token, access_token: 'next' }, 'as', first, undefined);
    expect(refreshed.latest).toMatchObject({ access_token: 'next', scope: 'mcp offline_access' });
    expect(refreshed.asked).toBe('mcp offline_access');
    expect(refreshed.identity).toBe(first.identity);
  });

  it('a stated scope is kept as stated; a sign-in that asked for nothing has no scope to assume', () => {
    const granted = signedWith({ ...token, scope: 'mcp' }, 'as', { tokens: {} }, exchange('mcp x'));
    expect(granted).toMatchObject({ latest: { scope: 'mcp' }, asked: 'mcp x' });
    const none = signedWith(token, 'as', { tokens: {} }, exchange(''));
    expect(none.latest?.scope).toBeUndefined();
    expect(none.asked).toBe('');
  });
});
