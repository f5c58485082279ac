/**
 * The SDK-agnostic half of the servers: what a list or a read answers, counted the same way on
 * every server. Each SDK adapter maps `HandlerFailure` to its own native error class, so the
 * client sees exactly what a server built on that SDK would send.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type CompletionRef,
  type LogLevel,
  promptMessages,
  type ServerExtras,
  type TaskState,
} from './extras';
import type {
  AskRecord,
  ResourceStore,
  StoredPrompt,
  StoredResource,
  StoredTemplate,
  StoredTool,
} from './resourceStore';
import type {
  EndpointCounters,
  EndpointOptions,
  McpEndpoint,
  ServerCapabilityOptions,
  ServerKind,
} from './types';

export type Failure =
  | { kind: 'resource-not-found'; uri: string }
  | { kind: 'tool-not-found'; name: string }
  | { kind: 'method-not-found'; method: string }
  | { kind: 'invalid-params'; message: string }
  | { kind: 'error'; code: number; message: string };

export class HandlerFailure extends Error {
  constructor(readonly failure: Failure) {
    super(`${failure.kind}`);
    this.name = 'HandlerFailure';
  }
}

export interface ResolvedCapabilities {
  subscribe: boolean;
  listChanged: boolean;
  tools: boolean;
  prompts: boolean;
  completions: boolean;
  logging: boolean;
  tasks: boolean;
}

export function resolveCapabilities(options?: ServerCapabilityOptions): ResolvedCapabilities {
  return {
    subscribe: options?.subscribe ?? true,
    listChanged: options?.listChanged ?? true,
    tools: options?.tools ?? true,
    prompts: options?.prompts ?? true,
    completions: options?.completions ?? true,
    logging: options?.logging ?? true,
    tasks: options?.tasks ?? false,
  };
}

/** The `tasks` capability of a 2025-11-25 server that runs tool calls as tasks. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

export function newCounters(): EndpointCounters {
  return {
    listenRequests: 0,
    listenFilterEntries: 0,
    subscribeRequests: 0,
    unsubscribeRequests: 0,
    listRequests: 0,
    reads: 0,
    toolListRequests: 0,
    promptListRequests: 0,
    templateListRequests: 0,
    toolCalls: 0,
    rootsListChanged: 0,
    promptGets: 0,
    setLevelRequests: 0,
    methods: {},
  };
}

/** Counts one JSON-RPC message (or a batch) seen over HTTP, by method. */
export function countMethods(counters: EndpointCounters, body: unknown): void {
  for (const message of Array.isArray(body) ? body : [body]) {
    const method = (message as { method?: unknown } | null)?.method;
    if (typeof method !== 'string') continue;
    counters.methods[method] = (counters.methods[method] ?? 0) + 1;
    if (method === 'logging/setLevel') counters.setLevelRequests += 1;
  }
}

export function addCounters(a: EndpointCounters, b: EndpointCounters): EndpointCounters {
  return {
    listenRequests: a.listenRequests + b.listenRequests,
    listenFilterEntries: a.listenFilterEntries + b.listenFilterEntries,
    subscribeRequests: a.subscribeRequests + b.subscribeRequests,
    unsubscribeRequests: a.unsubscribeRequests + b.unsubscribeRequests,
    listRequests: a.listRequests + b.listRequests,
    reads: a.reads + b.reads,
    toolListRequests: a.toolListRequests + b.toolListRequests,
    promptListRequests: a.promptListRequests + b.promptListRequests,
    templateListRequests: a.templateListRequests + b.templateListRequests,
    toolCalls: a.toolCalls + b.toolCalls,
    rootsListChanged: a.rootsListChanged + b.rootsListChanged,
    promptGets: a.promptGets + b.promptGets,
    setLevelRequests: a.setLevelRequests + b.setLevelRequests,
    methods: Object.fromEntries(
      [...new Set([...Object.keys(a.methods), ...Object.keys(b.methods)])].map((method) => [
        method,
        (a.methods[method] ?? 0) + (b.methods[method] ?? 0),
      ]),
    ),
  };
}

// A type alias, not an interface: the SDKs' result types have index signatures, which only
// object type aliases satisfy.
export type ListEntry = {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: StoredResource['annotations'];
  size?: number;
};

export type ContentEntry =
  | { uri: string; mimeType?: string; text: string; _meta?: Record<string, unknown> }
  | { uri: string; mimeType?: string; blob: string; _meta?: Record<string, unknown> };

export type ReadAnswer = {
  contents: ContentEntry[];
  ttlMs?: number;
  cacheScope?: 'public' | 'private';
};

export type ListAnswer = {
  resources: ListEntry[];
  nextCursor?: string;
};

/** What the SDKs' result types demand of schema properties: plain JSON. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };

export type ToolEntry = {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; properties?: Record<string, JsonValue>; required?: string[] };
  _meta?: Record<string, unknown>;
  execution?: { taskSupport: 'optional' | 'required' };
};

export type PromptEntry = {
  name: string;
  title?: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
};

export type TemplateEntry = {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
};

export type ToolListAnswer = { tools: ToolEntry[]; nextCursor?: string };
export type PromptListAnswer = { prompts: PromptEntry[]; nextCursor?: string };
export type TemplateListAnswer = { resourceTemplates: TemplateEntry[]; nextCursor?: string };

export type ToolCallAnswer = { content: { type: 'text'; text: string }[]; isError?: boolean };

/** A request a tool sends to the client (2025) or embeds in `input_required` (2026-07-28). */
export type ClientAsk =
  | {
      method: 'elicitation/create';
      params:
        | { mode: 'form'; message: string; requestedSchema: ElicitFormSchema }
        | { mode: 'url'; message: string; url: string; elicitationId: string };
    }
  | {
      method: 'sampling/createMessage';
      params: {
        messages: { role: 'user'; content: { type: 'text'; text: string } }[];
        maxTokens: number;
      };
    }
  | { method: 'roots/list'; params?: undefined };

export type ElicitFormSchema = {
  type: 'object';
  properties: Record<string, JsonValue>;
  required?: string[];
};

/** What came back: the client's result (raw), its error, or nothing because the server gave up. */
export type AskOutcome = AskRecord['outcome'];

/**
 * How a tool talks to the client on one SDK and era. `ask` resolves with the outcome (a client
 * error is an outcome, not a rejection); on 2026-07-28 it throws `InputNeeded` on the first
 * round, which the adapter turns into an `input_required` result.
 */
export interface ToolIO {
  ask(request: ClientAsk, signal: AbortSignal): Promise<AskOutcome>;
  /** Aborts when the client cancels the call: a server then gives up its own questions too. */
  signal: AbortSignal;
  /** A progress notification for this call; nothing when the client sent no progress token. */
  progress(progress: number, total: number, message: string): Promise<void>;
  /** A `notifications/message` related to this call, at the level the client asked for. */
  log(level: LogLevel, data: unknown): Promise<void>;
}

/** Thrown by a 2026-07-28 `ToolIO.ask` when the answer is not in the request yet. */
export class InputNeeded extends Error {
  constructor(readonly request: ClientAsk) {
    super(`input needed: ${request.method}`);
    this.name = 'InputNeeded';
  }
}

/** The key of the one input request a tool embeds in `input_required`. */
export const INPUT_KEY = 'input';

/** A JSON-RPC error as any SDK's request rejection carries it. */
export function askError(error: unknown): AskOutcome {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return {
    kind: 'error',
    code: typeof code === 'number' ? code : -32603,
    message: typeof message === 'string' ? message : String(error),
  };
}

function text(value: string, isError = false): ToolCallAnswer {
  return { content: [{ type: 'text', text: value }], ...(isError && { isError: true }) };
}

function askFor(tool: StoredTool): ClientAsk | undefined {
  if (tool.elicit && 'url' in tool.elicit) {
    const { message, url } = tool.elicit;
    return {
      method: 'elicitation/create',
      params: { mode: 'url', message, url, elicitationId: `${tool.name}-${Date.now()}` },
    };
  }
  if (tool.elicit) {
    const { message, requestedSchema } = tool.elicit;
    return {
      method: 'elicitation/create',
      params: { mode: 'form', message, requestedSchema: requestedSchema as ElicitFormSchema },
    };
  }
  if (tool.sample) {
    return {
      method: 'sampling/createMessage',
      params: {
        messages: [{ role: 'user', content: { type: 'text', text: tool.sample.prompt } }],
        maxTokens: tool.sample.maxTokens ?? 100,
      },
    };
  }
  if (tool.listRoots) return { method: 'roots/list' };
  return undefined;
}

/** The tool's answer for what the client said. */
function answerFor(request: ClientAsk, outcome: AskOutcome): ToolCallAnswer {
  if (outcome.kind === 'cancelled') return text(`${request.method} cancelled by the server`, true);
  if (outcome.kind === 'error') {
    return text(`${request.method} failed: ${outcome.code} ${outcome.message}`, true);
  }
  const result = outcome.result as {
    action?: unknown;
    content?: unknown;
    roots?: { uri?: unknown }[];
  };
  switch (request.method) {
    case 'elicitation/create': {
      const content = result.content === undefined ? '' : ` ${JSON.stringify(result.content)}`;
      return text(`answered ${String(result.action)}${content}`);
    }
    case 'sampling/createMessage': {
      const content = result.content as { type?: unknown; text?: unknown } | undefined;
      return text(
        `sampled ${content?.type === 'text' ? String(content.text) : JSON.stringify(content)}`,
      );
    }
    case 'roots/list':
      return text(`roots ${JSON.stringify((result.roots ?? []).map((root) => root.uri))}`);
  }
}

function listEntry(resource: StoredResource): ListEntry {
  const entry: ListEntry = { uri: resource.uri, name: resource.name };
  if (resource.title !== undefined) entry.title = resource.title;
  if (resource.description !== undefined) entry.description = resource.description;
  if (resource.mimeType !== undefined) entry.mimeType = resource.mimeType;
  if (resource.annotations !== undefined) entry.annotations = resource.annotations;
  if (resource.size !== undefined) entry.size = resource.size;
  return entry;
}

function contentEntry(resource: StoredResource): ContentEntry {
  const mime = resource.mimeType === undefined ? {} : { mimeType: resource.mimeType };
  const meta = resource._meta === undefined ? {} : { _meta: resource._meta };
  if (resource.blob !== undefined) {
    return { uri: resource.uri, ...mime, blob: resource.blob, ...meta };
  }
  return { uri: resource.uri, ...mime, text: resource.text ?? '', ...meta };
}

// Cursors are opaque to clients; a prefix makes a forged or stale one detectable.
const CURSOR_PREFIX = 'offset:';

function encodeCursor(offset: number): string {
  return Buffer.from(`${CURSOR_PREFIX}${offset}`).toString('base64url');
}

function decodeCursor(cursor: string): number {
  const raw = Buffer.from(cursor, 'base64url').toString('utf8');
  const offset = raw.startsWith(CURSOR_PREFIX) ? Number(raw.slice(CURSOR_PREFIX.length)) : NaN;
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new HandlerFailure({ kind: 'invalid-params', message: `Invalid cursor: ${cursor}` });
  }
  return offset;
}

/** One page of `all` and the cursor of the next one; the same scheme for every list. */
function paginate<T>(
  all: T[],
  cursor: string | undefined,
  pageSize: number | undefined,
): { page: T[]; nextCursor?: string } {
  if (pageSize === undefined || pageSize <= 0) {
    if (cursor !== undefined) decodeCursor(cursor);
    return { page: all };
  }
  const start = cursor === undefined ? 0 : decodeCursor(cursor);
  const page = all.slice(start, start + pageSize);
  const next = start + pageSize;
  return next < all.length ? { page, nextCursor: encodeCursor(next) } : { page };
}

function withCursor<T extends object>(answer: T, nextCursor: string | undefined): T {
  return nextCursor === undefined ? answer : { ...answer, nextCursor };
}

/** Legacy subscribe/unsubscribe bookkeeping; throws HandlerFailure to refuse. */
export interface SubscriptionHooks {
  subscribe(uri: string): void;
  unsubscribe(uri: string): void;
}

export interface ResourceService {
  list(cursor: string | undefined): ListAnswer;
  /**
   * `withCacheHints`: only 2026-era results have `ttlMs` / `cacheScope`. `user`: who is signed in
   * on a protected server.
   */
  read(uri: string, withCacheHints: boolean, user?: string): Promise<ReadAnswer>;
}

export function createResourceService(
  store: ResourceStore,
  counters: EndpointCounters,
  pageSize: number | undefined,
): ResourceService {
  return {
    list(cursor) {
      counters.listRequests += 1;
      const { page, nextCursor } = paginate(store.list(), cursor, pageSize);
      return withCursor({ resources: page.map(listEntry) }, nextCursor);
    },
    async read(uri, withCacheHints, user) {
      counters.reads += 1;
      const outcome = await store.serveRead(uri, user);
      if (outcome.kind === 'missing') throw new HandlerFailure({ kind: 'resource-not-found', uri });
      if (outcome.kind === 'failed') throw new HandlerFailure({ kind: 'error', ...outcome.error });
      const answer: ReadAnswer = { contents: [contentEntry(outcome.resource)] };
      if (withCacheHints) {
        if (outcome.resource.ttlMs !== undefined) answer.ttlMs = outcome.resource.ttlMs;
        if (outcome.resource.cacheScope !== undefined)
          answer.cacheScope = outcome.resource.cacheScope;
      }
      return answer;
    },
  };
}

function toolEntry(tool: StoredTool): ToolEntry {
  // StoredTool says `object` for property schemas; the store hands out structured clones, which
  // is as JSON as a test can reasonably ask for.
  const inputSchema = (tool.inputSchema ?? { type: 'object' }) as ToolEntry['inputSchema'];
  const entry: ToolEntry = { name: tool.name, inputSchema };
  if (tool.title !== undefined) entry.title = tool.title;
  if (tool.description !== undefined) entry.description = tool.description;
  if (tool._meta !== undefined) entry._meta = tool._meta;
  if (tool.taskSupport !== undefined) entry.execution = { taskSupport: tool.taskSupport };
  return entry;
}

function promptEntry(prompt: StoredPrompt): PromptEntry {
  const entry: PromptEntry = { name: prompt.name };
  if (prompt.title !== undefined) entry.title = prompt.title;
  if (prompt.description !== undefined) entry.description = prompt.description;
  if (prompt.arguments !== undefined) entry.arguments = prompt.arguments;
  return entry;
}

function templateEntry(template: StoredTemplate): TemplateEntry {
  const entry: TemplateEntry = { uriTemplate: template.uriTemplate, name: template.name };
  if (template.title !== undefined) entry.title = template.title;
  if (template.description !== undefined) entry.description = template.description;
  if (template.mimeType !== undefined) entry.mimeType = template.mimeType;
  return entry;
}

/**
 * Tools, prompts and resource templates, answered from the store like resources: dynamic,
 * shared, paged with the same cursors. No cache hints of ours on any era (on 2026-era results
 * the SDK's encoder stamps its defaults, `ttlMs: 0, cacheScope: 'private'`, as on resources/list).
 */
export interface CatalogService {
  listTools(cursor: string | undefined): ToolListAnswer;
  listPrompts(cursor: string | undefined): PromptListAnswer;
  listTemplates(cursor: string | undefined): TemplateListAnswer;
  /**
   * Runs the tool's behaviours (see `StoredTool`) through `io`. Throws a `tool-not-found`
   * HandlerFailure for a name the store does not list, and `InputNeeded` (2026-07-28) when it
   * must ask the client first.
   */
  callTool(
    name: string,
    args: Record<string, unknown> | undefined,
    io: ToolIO,
  ): Promise<ToolCallAnswer>;
  /** A client said `notifications/roots/list_changed`. */
  rootsListChanged(): void;
  /** The store's tasks (2025-11-25). */
  readonly extras: ServerExtras;
  getPrompt(
    name: string,
    args: Record<string, string> | undefined,
  ): ReturnType<typeof promptMessages>;
  complete(
    ref: CompletionRef,
    argument: { name: string; value: string },
    signal: AbortSignal,
  ): ReturnType<ServerExtras['complete']>;
  /**
   * Runs the call as a task (2025-11-25): answers at once with the task; the tool goes on in
   * the background (it cannot ask the client anything there). `notify`: status changes, for
   * the session that created it.
   */
  startTask(
    name: string,
    args: Record<string, unknown> | undefined,
    options: {
      owner: string | undefined;
      ttl: number | undefined;
      notify?: (task: TaskState) => void;
    },
  ): { task: TaskState };
}

export function createCatalogService(
  store: ResourceStore,
  counters: EndpointCounters,
  pageSize: number | undefined,
): CatalogService {
  const catalog: CatalogService = {
    listTools(cursor) {
      counters.toolListRequests += 1;
      const { page, nextCursor } = paginate(store.tools(), cursor, pageSize);
      return withCursor({ tools: page.map(toolEntry) }, nextCursor);
    },
    listPrompts(cursor) {
      counters.promptListRequests += 1;
      const { page, nextCursor } = paginate(store.prompts(), cursor, pageSize);
      return withCursor({ prompts: page.map(promptEntry) }, nextCursor);
    },
    listTemplates(cursor) {
      counters.templateListRequests += 1;
      const { page, nextCursor } = paginate(store.templates(), cursor, pageSize);
      return withCursor({ resourceTemplates: page.map(templateEntry) }, nextCursor);
    },
    async callTool(name, args, io) {
      counters.toolCalls += 1;
      const tool = store.tools().find((entry) => entry.name === name);
      if (!tool) throw new HandlerFailure({ kind: 'tool-not-found', name });
      for (let step = 1; step <= (tool.progress ?? 0); step += 1) {
        if (tool.stepMs) await store.extras.pause(name, tool.stepMs, io.signal);
        await io.progress(step, tool.progress ?? 0, `step ${step}`);
      }
      for (const entry of tool.log ?? []) await io.log(entry.level, entry.data);
      if (tool.hold) await store.extras.hold(name, io.signal);
      const request = askFor(tool);
      if (request) {
        const controller = store.beginAsk();
        let outcome: AskOutcome;
        try {
          outcome = await io.ask(request, AbortSignal.any([controller.signal, io.signal]));
        } catch (error) {
          // InputNeeded (2026-07-28): nothing is in flight, the client answers with the retry.
          store.endAsk(controller, undefined);
          throw error;
        }
        store.endAsk(controller, { tool: name, method: request.method, outcome });
        return answerFor(request, outcome);
      }
      if (tool.fail) return text(`failed ${name}`, true);
      return text(`called ${name} with ${JSON.stringify(args ?? {})}`);
    },
    rootsListChanged() {
      counters.rootsListChanged += 1;
    },
    extras: store.extras,
    getPrompt(name, args) {
      counters.promptGets += 1;
      const prompt = store.prompts().find((entry) => entry.name === name);
      if (!prompt) {
        throw new HandlerFailure({ kind: 'invalid-params', message: `Prompt ${name} not found` });
      }
      return promptMessages(prompt, args, store.extras.promptRevision);
    },
    complete(ref, argument, signal) {
      const sources = { prompts: store.prompts(), templates: store.templates() };
      return store.extras.complete(ref, argument, sources, signal);
    },
    startTask(name, args, { owner, ttl, notify }) {
      if (!store.tools().some((entry) => entry.name === name)) {
        throw new HandlerFailure({ kind: 'tool-not-found', name });
      }
      const background: ToolIO = {
        ask: async () => ({ kind: 'error', code: -32601, message: 'no client inside a task' }),
        progress: async () => {},
        log: async () => {},
        signal: new AbortController().signal,
      };
      const task = store.extras.createTask({
        tool: name,
        owner,
        ttl,
        run: (signal) => catalog.callTool(name, args, { ...background, signal }),
        ...(notify && { notify }),
      });
      return { task };
    },
  };
  return catalog;
}

/**
 * Shared shape of every endpoint: the convenience methods are the same composition of store
 * change + notification everywhere, so they are written once.
 */
export interface EndpointCore {
  kind: ServerKind;
  store: ResourceStore;
  counters: EndpointCounters;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  resourceUpdated(uri: string): void;
  resourcesChanged(): void;
  toolsChanged(): void;
  promptsChanged(): void;
  subscribedUris(): string[];
  openStreams(): number;
  liveSessions(): number;
  dropStreams(): void;
  close(): Promise<void>;
}

export function finishEndpoint(core: EndpointCore): McpEndpoint {
  return {
    kind: core.kind,
    store: core.store,
    handle: (req, res) => core.handle(req, res),
    resourceUpdated: (uri) => core.resourceUpdated(uri),
    resourcesChanged: () => core.resourcesChanged(),
    setText(uri, text) {
      core.store.setText(uri, text);
      core.resourceUpdated(uri);
    },
    addResource(resource) {
      core.store.upsert(resource);
      core.resourcesChanged();
    },
    removeResource(uri) {
      const existed = core.store.remove(uri);
      core.resourcesChanged();
      return existed;
    },
    toolsChanged: () => core.toolsChanged(),
    promptsChanged: () => core.promptsChanged(),
    setTools(tools) {
      core.store.setTools(tools);
      core.toolsChanged();
    },
    setPrompts(prompts) {
      core.store.setPrompts(prompts);
      core.promptsChanged();
    },
    setTemplates(templates) {
      core.store.setTemplates(templates);
      core.resourcesChanged();
    },
    subscribedUris: () => core.subscribedUris(),
    openStreams: () => core.openStreams(),
    liveSessions: () => core.liveSessions(),
    counters: () => ({ ...core.counters }),
    resetCounters() {
      Object.assign(core.counters, newCounters());
    },
    dropStreams: () => core.dropStreams(),
    close: () => core.close(),
  };
}

export function sortedUnique(uris: Iterable<string>): string[] {
  return [...new Set(uris)].sort();
}

export function endpointName(kind: ServerKind, options: EndpointOptions): string {
  return options.name ?? `mcp-react-query-test-${kind}`;
}

/** A last-resort answer when serving threw before anything reached the client. */
export function failExchange(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/**
 * Reads a JSON request body. Middleware stacks that already parsed it (express.json) leave it on
 * `req.body`; Vite and plain node:http leave the stream unread.
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const preParsed = (req as IncomingMessage & { body?: unknown }).body;
  if (preParsed !== undefined) return preParsed;
  const chunks: Buffer[] = [];
  for await (const chunk of req)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text.length === 0 ? undefined : JSON.parse(text);
}

/** The signed-in user a protected server put in the SDKs' `authInfo` (see protectedResource). */
export function userOf(
  authInfo: { extra?: Record<string, unknown> } | undefined,
): string | undefined {
  const sub = authInfo?.extra?.sub;
  return typeof sub === 'string' ? sub : undefined;
}

export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
