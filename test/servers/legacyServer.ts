/**
 * 2025-era server on the v2 packages: McpServer from `@modelcontextprotocol/server` behind a
 * session-per-client `NodeStreamableHTTPServerTransport`, GET SSE stream included. Session
 * routing and subscription filtering live in `legacyCore`.
 *
 * A miss on resources/read answers -32602 with `data: { uri }` (ResourceNotFoundError), the same
 * as McpServer's own handler.
 */
import { randomUUID } from 'node:crypto';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { McpServer } from '@modelcontextprotocol/server';
import { memoryEventStore } from './eventStore';
import { startHostedServer } from './httpHost';
import { createLegacyCoreEndpoint, type LegacySessionFactory } from './legacyCore';
import { ResourceStore } from './resourceStore';
import type { EndpointOptions, McpEndpoint, StartServerOptions, TestServer } from './types';
import { installV2CatalogHandlers, installV2ResourceHandlers, v2Capabilities } from './v2Handlers';

const openV2Session =
  (eventStore: boolean): LegacySessionFactory =>
  async (setup) => {
    const server = new McpServer(
      { name: setup.name, version: '1.0.0' },
      { capabilities: v2Capabilities(setup.caps) },
    );
    // The handlers are installed even when subscribe is off, so a client that subscribes anyway
    // is counted and refused with MethodNotFound rather than vanishing into the SDK.
    installV2ResourceHandlers(server, setup.service, {
      cacheHints: false,
      subscriptions: setup.subscriptions,
    });
    installV2CatalogHandlers(server, setup.catalog, setup.caps, { modern: false });
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => setup.onInitialized(id),
      ...(eventStore && { eventStore: memoryEventStore() }),
    });
    // connect() chains these with its own handlers rather than replacing them.
    transport.onclose = () => setup.onClosed();
    transport.onerror = (error) => setup.onError(error);
    await server.connect(transport);
    return {
      get sessionId() {
        return transport.sessionId;
      },
      handleRequest: (req, res, body) => transport.handleRequest(req, res, body),
      sendResourceUpdated: (uri) => server.server.sendResourceUpdated({ uri }),
      sendResourceListChanged: () => server.server.sendResourceListChanged(),
      sendToolListChanged: () => server.server.sendToolListChanged(),
      sendPromptListChanged: () => server.server.sendPromptListChanged(),
      close: () => server.close(),
    };
  };

export function createLegacyEndpoint(options: EndpointOptions = {}): McpEndpoint {
  return createLegacyCoreEndpoint('legacy-v2', options, openV2Session(options.eventStore === true));
}

export function startLegacyServer(options: StartServerOptions = {}): Promise<TestServer> {
  const store = options.store ?? new ResourceStore();
  return startHostedServer(() => createLegacyEndpoint({ ...options, store }), {
    port: options.port ?? 0,
    protect: options.auth,
  });
}
