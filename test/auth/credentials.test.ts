import { describe, expect, it } from 'vitest';
import { createOAuthProvider } from '../../src/auth';
import { canonicalResource, otherServer, stepUpOf } from '../../src/auth/credentials';
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
  const signed = (scope?: string) => ({
    tokens: {},
    latest: { access_token: 'opaque', token_type: 'Bearer', ...(scope && { scope }) },
    identity: 'alice',
  });
  const asking = (scope: string) => new URL(`https://as.example/authorize?scope=${scope}`);

  it('asks for scope the held token was not granted (403 insufficient_scope)', () => {
    expect(stepUpOf(asking('mcp mcp:admin'), signed('mcp'))).toBe('alice');
  });

  it('is not one when it asks for no more than the held token has (a 401: expired, revoked)', () => {
    expect(stepUpOf(asking('mcp'), signed('mcp'))).toBeUndefined();
    expect(stepUpOf(asking('mcp offline_access'), signed('mcp'))).toBeUndefined();
    expect(stepUpOf(asking('mcp'), signed('mcp mcp:admin'))).toBeUndefined();
  });

  it('is not one when nothing says what the held token was granted, or nobody holds one', () => {
    expect(stepUpOf(asking('mcp mcp:admin'), signed())).toBeUndefined();
    expect(stepUpOf(asking('mcp mcp:admin'), { tokens: {} })).toBeUndefined();
  });
});
