import { describe, expect, it } from 'vitest';
import { createMcpKeys, mcpKeys } from '../../src/core/keys';
import { resourceQueryOptions } from '../../src/core/queryOptions';

describe('mcpKeys', () => {
  it('builds the documented keys', () => {
    expect(mcpKeys.resource('config://app')).toEqual(['resource', 'config://app']);
    expect(mcpKeys.resources()).toEqual(['resources']);
  });

  it('a scope prefixes every key and recognises only its own', () => {
    const a = createMcpKeys('a');
    expect(a.resource('x://1')).toEqual(['mcp', 'a', 'resource', 'x://1']);
    expect(a.resources()).toEqual(['mcp', 'a', 'resources']);
    expect(a.uriOf(['mcp', 'a', 'resource', 'x://1'])).toBe('x://1');
    expect(a.uriOf(['mcp', 'b', 'resource', 'x://1'])).toBeUndefined();
    expect(mcpKeys.uriOf(['mcp', 'a', 'resource', 'x://1'])).toBeUndefined();
    expect(a.isList(['mcp', 'a', 'resources'])).toBe(true);
    expect(mcpKeys.isList(['mcp', 'a', 'resources'])).toBe(false);
  });

  it('the keys and the query function of a scope are built once (the hooks ask on every render)', () => {
    expect(createMcpKeys('a')).toBe(createMcpKeys('a'));
    expect(createMcpKeys()).toBe(mcpKeys);
    expect(createMcpKeys('a')).not.toBe(createMcpKeys('b'));
    const first = resourceQueryOptions('x://1', { scope: 'a' });
    const again = resourceQueryOptions('x://2', { scope: 'a' });
    expect(again.queryFn).toBe(first.queryFn);
    expect(resourceQueryOptions('x://1').queryFn).not.toBe(first.queryFn);
  });

  it('many scopes come and go: the memo stays bounded and every scope still gets its own keys', () => {
    for (let i = 0; i < 1000; i++) {
      const keys = createMcpKeys(`server-${i}`);
      expect(keys.resource('x://1')).toEqual(['mcp', `server-${i}`, 'resource', 'x://1']);
    }
    const a = createMcpKeys('a');
    expect(a.uriOf(['mcp', 'a', 'resource', 'x://1'])).toBe('x://1');
  });
});
