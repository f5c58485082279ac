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
  type CallToolRequest,
  inputRequired,
  inputResponse,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { CompletionRef } from './extras';
import {
  type AskOutcome,
  askError,
  type CatalogService,
  type ClientAsk,
  HandlerFailure,
  INPUT_KEY,
  InputNeeded,
  type ResolvedCapabilities,
  type ResourceService,
  type SubscriptionHooks,
  type ToolIO,
  userOf,
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
  completions?: Record<string, never>;
  logging?: Record<string, never>;
} {
  return {
    resources: v2ResourceCapabilities(caps),
    ...(caps.tools ? { tools: { listChanged: true as const } } : {}),
    ...(caps.prompts ? { prompts: { listChanged: true as const } } : {}),
    ...(caps.completions ? { completions: {} } : {}),
    ...(caps.logging ? { logging: {} } : {}),
  };
}

function logOf(ctx: ServerContext): ToolIO['log'] {
  return (level, data) => ctx.mcpReq.log(level, data);
}

function progressOf(request: CallToolRequest, ctx: ServerContext): ToolIO['progress'] {
  const token = request.params._meta?.progressToken;
  return async (progress, total, message) => {
    if (token === undefined) return;
    await ctx.mcpReq.notify({
      method: 'notifications/progress',
      params: { progressToken: token, progress, total, message },
    });
  };
}

/**
 * 2025 era: a server-to-client request related to the call (it travels on the call's SSE
 * stream). `ctx.mcpReq.send` checks no client capability, like a server that asks anyway: the
 * client's own answer (-32601 without a handler) is what the test sees.
 */
function legacyIO(request: CallToolRequest, ctx: ServerContext): ToolIO {
  return {
    async ask(ask, signal) {
      try {
        const result = await ctx.mcpReq.send(
          { method: ask.method, ...(ask.params && { params: ask.params }) } as {
            method: ClientAsk['method'];
            params?: Record<string, unknown>;
          },
          { signal },
        );
        return { kind: 'result', result: result as Record<string, unknown> };
      } catch (error) {
        return signal.aborted ? { kind: 'cancelled' } : askError(error);
      }
    },
    progress: progressOf(request, ctx),
    log: logOf(ctx),
    signal: ctx.mcpReq.signal,
  };
}

/** What `inputResponse` read back, as the raw result a 2025 client would have answered. */
function modernOutcome(ask: ClientAsk, view: ReturnType<typeof inputResponse>): AskOutcome {
  switch (view.kind) {
    case 'missing':
      throw new InputNeeded(ask);
    case 'elicit':
      return {
        kind: 'result',
        result: {
          action: view.action,
          ...(view.content !== undefined && { content: view.content }),
        },
      };
    case 'sampling':
      return { kind: 'result', result: view.result as unknown as Record<string, unknown> };
    case 'roots':
      return { kind: 'result', result: { roots: view.roots } };
  }
}

/**
 * 2026-07-28: the answer comes with the retried call (`inputResponses`); on the first round
 * `ask` throws `InputNeeded` and the handler answers `input_required`.
 */
function modernIO(request: CallToolRequest, ctx: ServerContext): ToolIO {
  return {
    async ask(ask) {
      return modernOutcome(ask, inputResponse(ctx.mcpReq.inputResponses, INPUT_KEY));
    },
    progress: progressOf(request, ctx),
    log: logOf(ctx),
    signal: ctx.mcpReq.signal,
  };
}

function inputRequest(ask: ClientAsk) {
  switch (ask.method) {
    case 'elicitation/create':
      if (ask.params.mode === 'url') {
        return inputRequired.elicitUrl({ message: ask.params.message, url: ask.params.url });
      }
      return inputRequired.elicit({
        message: ask.params.message,
        requestedSchema: ask.params.requestedSchema as Parameters<
          typeof inputRequired.elicit
        >[0]['requestedSchema'],
      });
    case 'sampling/createMessage':
      return inputRequired.createMessage(ask.params);
    case 'roots/list':
      return inputRequired.listRoots();
  }
}

/**
 * tools/list + tools/call, prompts/list + prompts/get and completion/complete only when declared (the SDK refuses a handler for an undeclared capability, and the client
 * then gets MethodNotFound); resources/templates/list always, as part of resources.
 */
export function installV2CatalogHandlers(
  server: McpServer,
  catalog: CatalogService,
  caps: ResolvedCapabilities,
  /**
   * Which era the instance serves (`createMcpHandler`'s `ctx.era`); when omitted, each call is
   * judged by whether it carries the 2026-07-28 `_meta` envelope.
   */
  options: { modern?: boolean } = {},
): void {
  const low = server.server;
  if (options.modern !== true) {
    low.setNotificationHandler('notifications/roots/list_changed', () => {
      catalog.rootsListChanged();
    });
  }
  low.setRequestHandler('resources/templates/list', (request) =>
    mapped(() => catalog.listTemplates(request.params?.cursor)),
  );
  if (caps.tools) {
    low.setRequestHandler('tools/list', (request) =>
      mapped(() => catalog.listTools(request.params?.cursor)),
    );
    low.setRequestHandler('tools/call', async (request, ctx) => {
      const modern = options.modern ?? ctx.mcpReq.envelope !== undefined;
      const io = modern ? modernIO(request, ctx) : legacyIO(request, ctx);
      try {
        return await mapped(() =>
          catalog.callTool(request.params.name, request.params.arguments, io),
        );
      } catch (error) {
        if (!(error instanceof InputNeeded)) throw error;
        return inputRequired({ inputRequests: { [INPUT_KEY]: inputRequest(error.request) } });
      }
    });
  }
  if (caps.prompts) {
    low.setRequestHandler('prompts/list', (request) =>
      mapped(() => catalog.listPrompts(request.params?.cursor)),
    );
    low.setRequestHandler('prompts/get', (request) =>
      mapped(() => catalog.getPrompt(request.params.name, request.params.arguments)),
    );
  }
  if (caps.completions) {
    low.setRequestHandler('completion/complete', (request, ctx) =>
      mapped(() =>
        catalog.complete(
          request.params.ref as CompletionRef,
          request.params.argument,
          ctx.mcpReq.signal,
        ),
      ),
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
  low.setRequestHandler('resources/read', (request, ctx) =>
    mapped(() => service.read(request.params.uri, options.cacheHints, userOf(ctx.http?.authInfo))),
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
