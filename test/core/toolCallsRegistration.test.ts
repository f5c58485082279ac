/**
 * Tool calls register themselves (defineCalls), like prompts and tasks: the engine alone carries
 * none of it, and every way a call is made brings it. This file's module graph is its own.
 */
import { describe, expect, it } from 'vitest';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { callRunner } from '../../src/core/requests';

describe('tool calls are registered by what makes them', () => {
  it('the engine alone (McpCacheSync and its reads) does not bring them', () => {
    expect(McpCacheSync).toBeDefined();
    expect(callRunner()).toBeUndefined();
  });

  it('tab sharing brings them: a leading tab runs other tabs’ calls whatever its page imported', async () => {
    const { shareAcrossTabs } = await import('../../src/tabs/tabSharing');
    shareAcrossTabs();
    expect(callRunner()).toBeTypeOf('function');
  });
});
