/**
 * 2025-era server on the v1 SDK (`@modelcontextprotocol/sdk@1.32.2`), which is what most
 * deployed servers run: McpServer + a session-per-client `StreamableHTTPServerTransport`.
 * Session routing and subscription filtering live in `legacyCore`.
 *
 * Not-found, measured on 1.32.2: McpServer's own resources/read handler throws
 * `new McpError(ErrorCode.InvalidParams, 'Resource <uri> not found')`, i.e. code -32602 (NOT
 * -32002: v1's ErrorCode has no ResourceNotFound member), message
 * 'MCP error -32602: Resource <uri> not found' on the wire, and no `data`. So the v2 client
 * turns it into a plain ProtocolError, not a ResourceNotFoundError (that needs `data.uri`).
 * This server answers exactly that.
 *
 * Unknown tool, same version: McpServer's tools/call catches its own
 * `McpError(InvalidParams, 'Tool <name> not found')` and answers a *result*
 * `{ content: [{ type: 'text', text: 'MCP error -32602: Tool <name> not found' }], isError: true }`
 * (the v2 SDK throws a -32602 error instead). This server answers that too.
 */
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListRootsResultSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  RootsListChangedNotificationSchema,
  type ServerNotification,
  type ServerRequest,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { CompletionRef, LogLevel } from './extras';
import { startHostedServer } from './httpHost';
import { createLegacyCoreEndpoint, type LegacySessionFactory } from './legacyCore';
import {
  askError,
  HandlerFailure,
  type ResolvedCapabilities,
  TASKS_CAPABILITY,
  type ToolIO,
  userOf,
} from './protocol';
import { ResourceStore } from './resourceStore';
import type { EndpointOptions, McpEndpoint, StartServerOptions, TestServer } from './types';

function toV1Error(error: unknown): unknown {
  if (!(error instanceof HandlerFailure)) return error;
  const failure = error.failure;
  switch (failure.kind) {
    case 'resource-not-found':
      return new McpError(ErrorCode.InvalidParams, `Resource ${failure.uri} not found`);
    case 'tool-not-found':
      return new McpError(ErrorCode.InvalidParams, `Tool ${failure.name} not found`);
    case 'method-not-found':
      return new McpError(ErrorCode.MethodNotFound, 'Method not found');
    case 'invalid-params':
      return new McpError(ErrorCode.InvalidParams, failure.message);
    case 'error':
      return new McpError(failure.code, failure.message);
  }
}

async function mapped<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toV1Error(error);
  }
}

const RESULT_SCHEMAS = {
  'elicitation/create': ElicitResultSchema,
  'sampling/createMessage': CreateMessageResultSchema,
  'roots/list': ListRootsResultSchema,
} as const;

/**
 * `extra.sendRequest` relates the request to the call (it travels on the call's SSE stream) and,
 * without `enforceStrictCapabilities`, checks no client capability: the client's own answer
 * (-32601 without a handler) is what the test sees.
 */
function v1IO(
  request: CallToolRequest,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  isIgnored: (level: LogLevel, sessionId: string | undefined) => boolean,
): ToolIO {
  const token = request.params._meta?.progressToken;
  return {
    async ask(ask, signal) {
      try {
        const result = await extra.sendRequest(
          { method: ask.method, ...(ask.params && { params: ask.params }) } as ServerRequest,
          RESULT_SCHEMAS[ask.method],
          { signal },
        );
        return { kind: 'result', result: result as Record<string, unknown> };
      } catch (error) {
        return signal.aborted ? { kind: 'cancelled' } : askError(error);
      }
    },
    signal: extra.signal,
    async progress(progress, total, message) {
      if (token === undefined) return;
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress, total, message },
      });
    },
    async log(level, data) {
      // Related to the call, at the level the session set (what sendLoggingMessage checks).
      if (isIgnored(level, extra.sessionId)) return;
      await extra.sendNotification({ method: 'notifications/message', params: { level, data } });
    },
  };
}

/**
 * 1.32.2's McpServer forces `listChanged: true` into `tools` / `prompts` whenever they are
 * declared (which is what we want when they are on) and declares nothing when they are left out.
 */
function v1Capabilities(caps: ResolvedCapabilities): {
  resources: { subscribe?: boolean };
  tools?: { listChanged: true };
  prompts?: { listChanged: true };
  completions?: Record<string, never>;
  logging?: Record<string, never>;
  tasks?: typeof TASKS_CAPABILITY;
} {
  return {
    resources: caps.subscribe ? { subscribe: true } : {},
    ...(caps.tools ? { tools: { listChanged: true as const } } : {}),
    ...(caps.prompts ? { prompts: { listChanged: true as const } } : {}),
    ...(caps.completions ? { completions: {} } : {}),
    ...(caps.logging ? { logging: {} } : {}),
    ...(caps.tasks ? { tasks: TASKS_CAPABILITY } : {}),
  };
}

const openV1Session: LegacySessionFactory = async (setup) => {
  const server = new McpServer(
    { name: setup.name, version: '1.0.0' },
    { capabilities: v1Capabilities(setup.caps) },
  );
  const caps = setup.caps;
  const low = server.server;
  // 1.32.2's McpServer merges `resources.listChanged: true` into the capabilities whenever
  // `resources` is declared, overriding whatever was passed. Re-asserting it afterwards (before
  // connect) is the only way to advertise "no list_changed" without dropping McpServer.
  low.registerCapabilities({ resources: { listChanged: caps.listChanged } });
  // Low-level handlers rather than registerResource: see v2Handlers.ts for why (URI
  // normalisation, dynamic store, unsolicited list_changed on registration). They replace the
  // ones McpServer installed in its constructor.
  low.setRequestHandler(ListResourcesRequestSchema, (request) =>
    mapped(() => setup.service.list(request.params?.cursor)),
  );
  low.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    mapped(() => setup.service.read(request.params.uri, false, userOf(extra.authInfo))),
  );
  low.setRequestHandler(SubscribeRequestSchema, (request) =>
    mapped(() => {
      setup.subscriptions.subscribe(request.params.uri);
      return {};
    }),
  );
  low.setRequestHandler(UnsubscribeRequestSchema, (request) =>
    mapped(() => {
      setup.subscriptions.unsubscribe(request.params.uri);
      return {};
    }),
  );
  low.setNotificationHandler(RootsListChangedNotificationSchema, () => {
    setup.catalog.rootsListChanged();
  });
  // Templates belong to resources (always declared). Tools and prompts only when declared: the
  // SDK refuses handlers for an undeclared capability, so the client then gets MethodNotFound.
  // McpServer's own prompts/get stays: it knows no prompt.
  low.setRequestHandler(ListResourceTemplatesRequestSchema, (request) =>
    mapped(() => setup.catalog.listTemplates(request.params?.cursor)),
  );
  if (caps.tools) {
    low.setRequestHandler(ListToolsRequestSchema, (request) =>
      mapped(() => setup.catalog.listTools(request.params?.cursor)),
    );
    // A server without logging sends none (the SDK refuses to), as sendLoggingMessage does.
    const isIgnored = (level: LogLevel, sessionId: string | undefined) =>
      !caps.logging ||
      (
        low as unknown as { isMessageIgnored(level: string, id?: string): boolean }
      ).isMessageIgnored(level, sessionId);
    low.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      try {
        if (request.params.task && caps.tasks) {
          // A 2025-11-25 task: answered at once, the tool goes on in the background.
          return setup.catalog.startTask(request.params.name, request.params.arguments, {
            owner: userOf(extra.authInfo),
            ttl: request.params.task.ttl,
            notify: (state) =>
              void low
                .notification({ method: 'notifications/tasks/status', params: state } as never)
                .catch(() => {}),
          }) as never;
        }
        return await setup.catalog.callTool(
          request.params.name,
          request.params.arguments,
          v1IO(request, extra, isIgnored),
        );
      } catch (error) {
        const mappedError = toV1Error(error);
        if (error instanceof HandlerFailure && error.failure.kind === 'tool-not-found') {
          return {
            content: [{ type: 'text', text: (mappedError as Error).message }],
            isError: true,
          };
        }
        throw mappedError;
      }
    });
  }
  if (caps.prompts) {
    low.setRequestHandler(ListPromptsRequestSchema, (request) =>
      mapped(() => setup.catalog.listPrompts(request.params?.cursor)),
    );
    low.setRequestHandler(GetPromptRequestSchema, (request) =>
      mapped(() => setup.catalog.getPrompt(request.params.name, request.params.arguments)),
    );
  }
  if (caps.completions) {
    low.setRequestHandler(CompleteRequestSchema, (request, extra) =>
      mapped(() =>
        setup.catalog.complete(
          request.params.ref as CompletionRef,
          request.params.argument,
          extra.signal,
        ),
      ),
    );
  }
  if (caps.tasks) {
    const { extras } = setup.catalog;
    const owner = (extra: { authInfo?: { extra?: Record<string, unknown> } }) =>
      userOf(extra.authInfo);
    low.setRequestHandler(GetTaskRequestSchema, (request, extra) =>
      mapped(() => extras.getTask(request.params.taskId, owner(extra)) as never),
    );
    low.setRequestHandler(GetTaskPayloadRequestSchema, (request, extra) =>
      mapped(() => extras.taskResult(request.params.taskId, owner(extra), extra.signal) as never),
    );
    low.setRequestHandler(ListTasksRequestSchema, (_request, extra) =>
      mapped(() => extras.listTasks(owner(extra)) as never),
    );
    low.setRequestHandler(CancelTaskRequestSchema, (request, extra) =>
      mapped(() => extras.cancelTask(request.params.taskId, owner(extra)) as never),
    );
  }
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => setup.onInitialized(id),
  });
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

export function createLegacyV1Endpoint(options: EndpointOptions = {}): McpEndpoint {
  return createLegacyCoreEndpoint('legacy-v1', options, openV1Session);
}

export function startLegacyV1Server(options: StartServerOptions = {}): Promise<TestServer> {
  const store = options.store ?? new ResourceStore();
  return startHostedServer(() => createLegacyV1Endpoint({ ...options, store }), {
    port: options.port ?? 0,
    protect: options.auth,
  });
}
