import { describe, expect, it } from 'vitest';
import { McpQueryError } from '../../src/core/errors';
import { canonicalResource, classifyFailure, foreignAuthProvider } from '../../src/core/failure';

describe('a server as an OAuth resource (RFC 8707)', () => {
  it('is the absolute URL without its fragment, host and scheme in lower case', () => {
    expect(canonicalResource('HTTPS://MCP.Example.com:443/mcp#part')).toBe(
      'https://mcp.example.com/mcp',
    );
    expect(canonicalResource(new URL('http://127.0.0.1:8080/mcp?tenant=a'))).toBe(
      'http://127.0.0.1:8080/mcp?tenant=a',
    );
  });

  it("a provider for another server is refused, naming both; the same server's spellings are not", () => {
    const provider = { resource: () => 'https://a.example/mcp' };
    expect(foreignAuthProvider('https://A.example/mcp#x', provider)).toBeUndefined();
    expect(foreignAuthProvider('https://a.example/mcp', undefined)).toBeUndefined();
    expect(foreignAuthProvider('https://a.example/mcp', {})).toBeUndefined();
    for (const other of [
      'https://b.example/mcp',
      'https://a.example/mcp/',
      'http://a.example/mcp',
    ]) {
      const refused = foreignAuthProvider(other, provider);
      expect(refused).toBeInstanceOf(McpQueryError);
      expect(refused?.code).toBe('INVALID_OPTIONS');
      expect(refused?.message).toContain('https://a.example/mcp');
      expect(refused?.message).toContain(new URL(other).href);
    }
  });
});

describe('a sign-in refused for want of PKCE', () => {
  it('is permanent (an error that names it), not a server to try again', () => {
    class PkceNotSupportedError extends Error {
      override readonly name = 'PkceNotSupportedError';
    }
    for (const error of [
      new PkceNotSupportedError('the authorization server x lists no S256'),
      // The SDK's own check, when the server lists methods but not S256.
      new Error('Incompatible auth server: does not support code challenge method S256'),
    ]) {
      const failure = classifyFailure(error, 'https://mcp.example/mcp');
      expect(failure.kind).toBe('permanent');
      expect(failure.error.message).toBe(
        `https://mcp.example/mcp: sign-in failed (${error.message})`,
      );
    }
  });
});
