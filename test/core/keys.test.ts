import { describe, expect, it } from 'vitest';
import { createMcpKeys, mcpKeys } from '../../src/core/keys';

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
});
