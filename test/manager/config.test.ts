import { describe, expect, it } from 'vitest';
import {
  checkAdded,
  checkServer,
  checkUpdated,
  idFromName,
  type McpServerConfig,
  sameConnection,
} from '../../src/servers/config';
import { checkStored } from '../../src/servers/configStore';

const existing: McpServerConfig[] = [{ id: 'docs', name: 'Docs', url: 'https://docs.example/mcp' }];

describe('server configuration', () => {
  it('a valid server is normalised: trimmed name, canonical URL, an id from the name', () => {
    const result = checkServer({ url: ' https://EXAMPLE.com:443/mcp#x ', name: ' My Tools ' }, []);
    expect(result).toEqual({
      ok: true,
      server: { id: 'my-tools', name: 'My Tools', url: 'https://example.com/mcp' },
    });
  });

  it.each([
    [{ url: 'not a url', name: 'A' }, 'invalid-url'],
    [{ url: 'ftp://example.com/mcp', name: 'A' }, 'invalid-url'],
    [{ url: 'javascript:alert(1)', name: 'A' }, 'invalid-url'],
    [{ url: 'https://user:pw@example.com/mcp', name: 'A' }, 'invalid-url'],
    [{ url: 42, name: 'A' }, 'invalid-url'],
    [{ url: 'https://a.example/mcp', name: '   ' }, 'invalid-name'],
    [{ url: 'https://a.example/mcp', name: 'x'.repeat(65) }, 'invalid-name'],
    [{ url: 'https://a.example/mcp', name: 'A', id: 'Bad Id' }, 'invalid-id'],
    [{ url: 'https://a.example/mcp', name: 'A', headers: { 'x y': '1' } }, 'invalid-headers'],
    [{ url: 'https://a.example/mcp', name: 'A', headers: { 'x-k': 'a\r\nb' } }, 'invalid-headers'],
    [
      { url: 'https://a.example/mcp', name: 'A', headers: { 'Mcp-Session-Id': 's' } },
      'invalid-headers',
    ],
    [{ url: 'https://a.example/mcp', name: 'A', headers: { 'x-k': 1 } }, 'invalid-headers'],
    [{ url: 'https://a.example/mcp', name: 'A', headers: [] }, 'invalid-headers'],
    [{ url: 'https://a.example/mcp', name: 'A', auth: 'basic' }, 'invalid-auth'],
    [{ url: 'https://docs.example/mcp', name: 'Other' }, 'duplicate-url'],
    [{ url: 'https://other.example/mcp', name: 'DOCS' }, 'duplicate-name'],
    [{ url: 'https://other.example/mcp', name: 'Other', id: 'docs' }, 'duplicate-id'],
    [null, 'invalid-url'],
  ])('refuses %j with %s and says why', (input, problem) => {
    const result = checkServer(input, existing);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem).toBe(problem);
    expect(result.message.length).toBeGreaterThan(5);
  });

  it('an id derived from a name that is taken gets a suffix', () => {
    const result = checkServer({ url: 'https://b.example/mcp', name: 'docs!' }, [
      ...existing,
      { id: 'docs-2', name: 'x', url: 'https://c.example/mcp' },
    ]);
    expect(result.ok && result.server.id).toBe('docs-3');
  });

  it('a name with nothing usable for an id gets a generic one', () => {
    expect(idFromName('日本語')).toBe('server');
    expect(idFromName('  Git Hub  ')).toBe('git-hub');
  });

  it('only the name can change without a new connection', () => {
    const a: McpServerConfig = { id: 'a', name: 'A', url: 'https://a.example/mcp' };
    expect(sameConnection(a, { ...a, name: 'B' })).toBe(true);
    expect(sameConnection(a, { ...a, url: 'https://b.example/mcp' })).toBe(false);
    expect(sameConnection(a, { ...a, headers: { 'x-key': '1' } })).toBe(false);
    expect(sameConnection(a, { ...a, auth: 'oauth' })).toBe(false);
  });
});

describe("a server's nonce (which add of it this is)", () => {
  const none = () => false;

  it('is made by every add, never taken from the input', () => {
    const input = { url: 'https://a.example/mcp', name: 'A', nonce: 'chosen' };
    const [first, second] = [checkAdded(input, [], none), checkAdded(input, [], none)];
    expect(first.ok && first.server.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(second.ok && second.server.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(first.ok && second.ok && first.server.nonce !== second.server.nonce).toBe(true);
  });

  it('stays through an edit, except a move to another URL', () => {
    const a: McpServerConfig = { id: 'a', name: 'A', url: 'https://a.example/mcp', nonce: 'n1' };
    expect(checkUpdated(a, { name: 'B', nonce: 'n2' }, [])).toMatchObject({
      ok: true,
      server: { name: 'B', nonce: 'n1' },
    });
    const moved = checkUpdated(a, { url: 'https://b.example/mcp' }, []);
    expect(moved.ok && moved.server.nonce).toMatch(/^[0-9a-f]{32}$/);
    // A server stored before nonces gets one when it moves.
    const { nonce: _, ...old } = a;
    expect(checkUpdated(old, { name: 'B' }, [])).toMatchObject({
      ok: true,
      server: { ...old, name: 'B' },
    });
    const oldMoved = checkUpdated(old, { url: 'https://b.example/mcp' }, []);
    expect(oldMoved.ok && oldMoved.server.nonce).toMatch(/^[0-9a-f]{32}$/);
  });

  it('is part of the connection; a stored one that could change a storage key is refused', () => {
    const a: McpServerConfig = { id: 'a', name: 'A', url: 'https://a.example/mcp', nonce: 'n1' };
    expect(sameConnection(a, { ...a, nonce: 'n2' })).toBe(false);
    const { nonce: _, ...old } = a;
    expect(sameConnection(a, old)).toBe(false);
    const stored = checkStored({
      rev: 1,
      servers: [old, { ...a, id: 'b', url: 'https://b.example/mcp', name: 'B', nonce: 'x#y:z' }],
    });
    expect(stored.servers).toEqual([old]);
  });
});

describe('server URLs', () => {
  it('must be absolute: a typed host without a scheme is not a path of the page', () => {
    const result = checkServer({ url: 'example.com/mcp', name: 'A' }, []);
    expect(result).toMatchObject({ ok: false, problem: 'invalid-url' });
    expect(!result.ok && result.message).toContain('absolute');
    expect(checkServer({ url: '/mcp', name: 'A' }, []).ok).toBe(false);
  });
});
