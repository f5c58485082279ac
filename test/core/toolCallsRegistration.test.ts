/**
 * Tool calls register themselves (defineCalls), like prompts and tasks: the engine alone carries
 * none of it, and every way a call is made brings it. Test files share modules (isolate: false),
 * so each case loads a fresh module graph of its own.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

const requests = () => import('../../src/core/requests');

beforeEach(() => {
  vi.resetModules();
});

describe('tool calls are registered by what makes them', () => {
  it('the engine alone (McpCacheSync and its reads) does not bring them', async () => {
    const { McpCacheSync } = await import('../../src/core/mcpCacheSync');
    expect(McpCacheSync).toBeDefined();
    expect((await requests()).callRunner()).toBeUndefined();
  });

  it('callTool brings them', async () => {
    await import('../../src/core/tools');
    expect((await requests()).callRunner()).toBeTypeOf('function');
  });

  it('tab sharing brings them: a leading tab runs other tabs’ calls whatever its page imported', async () => {
    const { shareAcrossTabs } = await import('../../src/tabs/tabSharing');
    shareAcrossTabs();
    expect((await requests()).callRunner()).toBeTypeOf('function');
  });
});
