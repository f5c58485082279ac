/**
 * The SDK-agnostic half of the servers: what a list or a read answers, counted the same way on
 * every server. Each SDK adapter maps `HandlerFailure` to its own native error class, so the
 * client sees exactly what a server built on that SDK would send.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
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
}

export function resolveCapabilities(options?: ServerCapabilityOptions): ResolvedCapabilities {
  return {
    subscribe: options?.subscribe ?? true,
    listChanged: options?.listChanged ?? true,
    tools: options?.tools ?? true,
    prompts: options?.prompts ?? true,
  };
}

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
  };
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
  | { uri: string; mimeType?: string; text: string }
  | { uri: string; mimeType?: string; blob: string };

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

export type ToolCallAnswer = { content: { type: 'text'; text: string }[] };

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
  if (resource.blob !== undefined) return { uri: resource.uri, ...mime, blob: resource.blob };
  return { uri: resource.uri, ...mime, text: resource.text ?? '' };
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
  /** `withCacheHints`: only 2026-era results have `ttlMs` / `cacheScope`. */
  read(uri: string, withCacheHints: boolean): Promise<ReadAnswer>;
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
    async read(uri, withCacheHints) {
      counters.reads += 1;
      const outcome = await store.serveRead(uri);
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
  /** Throws a `tool-not-found` HandlerFailure for a name the store does not list. */
  callTool(name: string, args: Record<string, unknown> | undefined): ToolCallAnswer;
}

export function createCatalogService(
  store: ResourceStore,
  counters: EndpointCounters,
  pageSize: number | undefined,
): CatalogService {
  return {
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
    callTool(name, args) {
      counters.toolCalls += 1;
      if (!store.tools().some((tool) => tool.name === name)) {
        throw new HandlerFailure({ kind: 'tool-not-found', name });
      }
      return {
        content: [{ type: 'text', text: `called ${name} with ${JSON.stringify(args ?? {})}` }],
      };
    },
  };
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

export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
