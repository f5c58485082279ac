/**
 * Resource handlers for servers built on the v2 packages (`@modelcontextprotocol/server`),
 * shared by the modern endpoint and the legacy-v2 endpoint.
 *
 * Low-level handlers instead of `registerResource`: the store changes at runtime and is shared,
 * `registerResource` would normalise URIs through `new URL()` (the package promises exact URI
 * matching, so the server must not rewrite what it is asked for) and it publishes list_changed
 * by itself on every registration. Note that `new McpServer(…, { capabilities: { resources } })`
 * already installs McpServer's own list/read handlers; ours replace them. The same goes for
 * tools, prompts and resource templates (`registerTool` / `registerPrompt` would also publish
 * list_changed on every registration).
 */
import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
} from '@modelcontextprotocol/server';
import {
  type CatalogService,
  HandlerFailure,
  type ResolvedCapabilities,
  type ResourceService,
  type SubscriptionHooks,
} from './protocol';

function toV2Error(error: unknown): unknown {
  if (!(error instanceof HandlerFailure)) return error;
  const failure = error.failure;
  switch (failure.kind) {
    case 'resource-not-found':
      // What McpServer itself throws on a miss: -32602 with data { uri } on both eras.
      return new ResourceNotFoundError(failure.uri);
    case 'tool-not-found':
      // What McpServer's own tools/call throws (v2 raises it as a JSON-RPC error, outside the
      // try that turns tool failures into isError results).
      return new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${failure.name} not found`);
    case 'method-not-found':
      return new ProtocolError(
        ProtocolErrorCode.MethodNotFound,
        `Method not found: ${failure.method}`,
      );
    case 'invalid-params':
      return new ProtocolError(ProtocolErrorCode.InvalidParams, failure.message);
    case 'error':
      return new ProtocolError(failure.code, failure.message);
  }
}

async function mapped<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toV2Error(error);
  }
}

/**
 * v2's McpServer fills in `resources.listChanged: true` when the option is absent, so "not
 * declared" has to be spelled `false` here. `subscribe` has no such default.
 */
export function v2ResourceCapabilities(caps: ResolvedCapabilities): {
  subscribe?: boolean;
  listChanged: boolean;
} {
  return caps.subscribe
    ? { subscribe: true, listChanged: caps.listChanged }
    : { listChanged: caps.listChanged };
}

/**
 * The whole capability object for a v2 McpServer. Passing `tools` / `prompts` makes McpServer
 * install its own handlers (replaced by `installV2CatalogHandlers`) and keep the given
 * `listChanged: true`; leaving them out declares nothing (McpServer adds them only on the first
 * registerTool / registerPrompt, which these servers never call).
 */
export function v2Capabilities(caps: ResolvedCapabilities): {
  resources: { subscribe?: boolean; listChanged: boolean };
  tools?: { listChanged: true };
  prompts?: { listChanged: true };
} {
  return {
    resources: v2ResourceCapabilities(caps),
    ...(caps.tools ? { tools: { listChanged: true as const } } : {}),
    ...(caps.prompts ? { prompts: { listChanged: true as const } } : {}),
  };
}

/**
 * tools/list + tools/call and prompts/list only when declared (the SDK refuses a handler for an
 * undeclared capability, and the client then gets MethodNotFound); resources/templates/list
 * always, as part of resources. McpServer's own prompts/get stays: it knows no prompt.
 */
export function installV2CatalogHandlers(
  server: McpServer,
  catalog: CatalogService,
  caps: ResolvedCapabilities,
): void {
  const low = server.server;
  low.setRequestHandler('resources/templates/list', (request) =>
    mapped(() => catalog.listTemplates(request.params?.cursor)),
  );
  if (caps.tools) {
    low.setRequestHandler('tools/list', (request) =>
      mapped(() => catalog.listTools(request.params?.cursor)),
    );
    low.setRequestHandler('tools/call', (request) =>
      mapped(() => catalog.callTool(request.params.name, request.params.arguments)),
    );
  }
  if (caps.prompts) {
    low.setRequestHandler('prompts/list', (request) =>
      mapped(() => catalog.listPrompts(request.params?.cursor)),
    );
  }
}

export function installV2ResourceHandlers(
  server: McpServer,
  service: ResourceService,
  options: { cacheHints: boolean; subscriptions?: SubscriptionHooks },
): void {
  const low = server.server;
  low.setRequestHandler('resources/list', (request) =>
    mapped(() => service.list(request.params?.cursor)),
  );
  low.setRequestHandler('resources/read', (request) =>
    mapped(() => service.read(request.params.uri, options.cacheHints)),
  );
  const subscriptions = options.subscriptions;
  if (!subscriptions) return;
  low.setRequestHandler('resources/subscribe', (request) =>
    mapped(() => {
      subscriptions.subscribe(request.params.uri);
      return {};
    }),
  );
  low.setRequestHandler('resources/unsubscribe', (request) =>
    mapped(() => {
      subscriptions.unsubscribe(request.params.uri);
      return {};
    }),
  );
}
