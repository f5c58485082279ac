// @vitest-environment node
/**
 * A host that shows MCP Apps says so (SEP-1865, "Client<>Server Capability Negotiation"):
 * `capabilities.extensions['io.modelcontextprotocol/ui']` with the MIME types it renders, since a
 * server SHOULD offer its UI tools only to clients that declare them. Declared through
 * `createServerRequests({ extensions })`, seen on the wire against the three real servers.
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { MCP_APPS_EXTENSION } from '../../src/apps/uiResource';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { toolListQueryOptions } from '../../src/core/queryOptions';
import { createServerRequests } from '../../src/core/serverRequests';
import { ERA_CASES, start } from '../support/eras';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Every `capabilities` object the client sent: in `initialize` (2025) or per request (2026). */
function capabilitiesSent(bodies: string[]): unknown[] {
  const found: unknown[] = [];
  const visit = (value: unknown, key?: string) => {
    if (value === null || typeof value !== 'object') return;
    if (key !== undefined && /capabilities$/i.test(key)) found.push(value);
    for (const [k, v] of Object.entries(value)) visit(v, k);
  };
  for (const body of bodies) {
    try {
      visit(JSON.parse(body));
    } catch {}
  }
  return found;
}

describe.each(ERA_CASES)('the MCP Apps extension on the $kind server', ({ kind }) => {
  it('is declared in the client capabilities when the host asks for it, and only then', async () => {
    const server = await start(kind);
    cleanups.push(() => server.close());
    for (const extensions of [MCP_APPS_EXTENSION, undefined]) {
      const bodies: string[] = [];
      const queryClient = new QueryClient();
      const sync = new McpCacheSync({
        queryClient,
        url: server.url,
        serverRequests: createServerRequests({ ...(extensions && { extensions }) }),
        fetch: async (input, init) => {
          if (typeof init?.body === 'string') bodies.push(init.body);
          return fetch(input, init);
        },
      });
      sync.mount();
      await queryClient.fetchQuery(toolListQueryOptions());
      await sync.dispose();
      queryClient.clear();
      const declared = capabilitiesSent(bodies);
      expect(declared.length).toBeGreaterThan(0);
      for (const capabilities of declared) {
        expect((capabilities as { extensions?: unknown }).extensions).toEqual(extensions);
      }
    }
  });
});
