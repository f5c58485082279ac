import { describe, expect, it } from 'vitest';
import { McpQueryError } from '../../src/core/errors';
import { canonicalResource, foreignAuthProvider } from '../../src/core/failure';

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
