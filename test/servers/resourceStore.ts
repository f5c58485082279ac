import { type LogLevel, ServerExtras } from './extras';

/**
 * The data behind every test server. It is SDK-agnostic on purpose: the modern, legacy-v2 and
 * legacy-v1 servers (and several endpoints at once, e.g. the playground's) can share one store,
 * so a test changes data once and every era sees the same thing.
 *
 * The store never publishes notifications itself; endpoints do (see `McpEndpoint.setText` etc.).
 * That split lets tests create the interesting mismatches on purpose: content changed but nobody
 * told, or a notification with no change behind it.
 */

export interface ResourceAnnotations {
  lastModified?: string;
  priority?: number;
  audience?: ('user' | 'assistant')[];
}

export interface StoredResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Exactly one of `text` / `blob` (base64) is set. */
  text?: string;
  blob?: string;
  /**
   * Protected servers (`auth`): the text a signed-in user (the token's `sub`) reads instead of
   * `text`. Users not listed, and unprotected servers, read `text`.
   */
  textByUser?: Record<string, string>;
  /** Cache hints the modern server puts on reads of this resource. */
  ttlMs?: number;
  cacheScope?: 'public' | 'private';
  annotations?: ResourceAnnotations;
  size?: number;
  /** The `_meta` of the content a read answers (MCP Apps put `ui.csp` there). */
  _meta?: Record<string, unknown>;
}

/** The form of an elicitation: a flat object schema of primitive properties (the spec's subset). */
export interface ElicitSchema {
  type: 'object';
  properties: Record<string, object>;
  required?: string[];
}

/**
 * A `tools/list` entry. tools/call on it answers `called <name> with <json args>`, unless a
 * behaviour below says otherwise. The behaviours are listed in the order they run; a tool has at
 * most one of `elicit`, `sample`, `listRoots`.
 *
 * How the server asks the client depends on the era, as real servers do: on 2026-07-28 the tool
 * answers `input_required` (`inputRequired.elicit(...)` etc.) and reads the answer from the
 * retried call's `inputResponses`; on 2025 (v2 and v1 SDKs) it sends a server-to-client request
 * related to the call (on the call's SSE stream). A client error (e.g. -32601 when the client has
 * no handler) answers `isError: true` with `<method> failed: <code> <message>`; a request the
 * server cancelled (`ResourceStore.cancelAsks`, or because the client cancelled the call) answers
 * `isError: true` with `<method> cancelled by the server`.
 */
export interface StoredTool {
  name: string;
  title?: string;
  description?: string;
  /** Listed as `{ type: 'object' }` when omitted (the spec requires an input schema). */
  inputSchema?: { type: 'object'; properties?: Record<string, object>; required?: string[] };
  /** Sends this many progress notifications (`i` of `n`, message `step i`) before answering. */
  progress?: number;
  /**
   * Waits this long before each progress step (a slow tool for the playground); a client that
   * cancels meanwhile is recorded in `store.extras.cancelledCalls`, as with `hold`.
   */
  stepMs?: number;
  /**
   * Asks the user (`elicitation/create`: form mode, or URL mode when `url` is given: go there)
   * and answers `answered <action>` followed by ` <json content>` when the client sent content.
   */
  elicit?: { message: string; requestedSchema: ElicitSchema } | { message: string; url: string };
  /** Asks the client's model (`sampling/createMessage`) and answers `sampled <text>`. */
  sample?: { prompt: string; maxTokens?: number };
  /** Asks for the client's roots (`roots/list`) and answers `roots <json array of the URIs>`. */
  listRoots?: boolean;
  /** Answers `isError: true` with `failed <name>` (the tool ran and reports a failure). */
  fail?: boolean;
  /** The tool's `_meta` in `tools/list` (MCP Apps: `ui.resourceUri`, `ui.visibility`). */
  _meta?: Record<string, unknown>;
  /**
   * Sends these `notifications/message` before answering (at the level the client asked for:
   * `logging/setLevel` on 2025, the request's `_meta` log level on 2026-07-28).
   */
  log?: { level: LogLevel; data: unknown }[];
  /**
   * Waits, after its progress, until `store.extras.release()`; a client that cancels the call
   * meanwhile is recorded in `store.extras.cancelledCalls`.
   */
  hold?: boolean;
  /** Listed with `execution.taskSupport` (2025-11-25 tasks; on servers that declare them). */
  taskSupport?: 'optional' | 'required';
}

/** What the server asked the client while running a tool, and what it got. */
export interface AskRecord {
  tool: string;
  method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list';
  outcome:
    | { kind: 'result'; result: Record<string, unknown> }
    | { kind: 'error'; code: number; message: string }
    | { kind: 'cancelled' };
}

/** A `prompts/list` entry. */
export interface StoredPrompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
  /** What `prompts/get` answers, `{argument}` filled in (default: names the prompt and its arguments). */
  text?: string;
  /** `completion/complete` values per argument (those starting with what was typed). */
  completions?: Record<string, string[]>;
}

/** A `resources/templates/list` entry. */
export interface StoredTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** `completion/complete` values per template variable. */
  completions?: Record<string, string[]>;
}

/** Runs before a read is answered; may await (to hold a read open) or throw (to fail it). */
export type ReadHook = (uri: string) => void | Promise<void>;

export interface ReadError {
  code: number;
  message: string;
}

/** What a read resolved to, before any SDK turns it into a JSON-RPC answer. */
export type ReadOutcome =
  | { kind: 'found'; resource: StoredResource }
  | { kind: 'missing'; uri: string }
  | { kind: 'failed'; error: ReadError };

/** Used when `failReads(uri)` is called without an explicit error. */
export const DEFAULT_READ_ERROR: ReadError = { code: -32603, message: 'Simulated read failure' };

function copyResource(resource: StoredResource): StoredResource {
  const copy: StoredResource = { ...resource };
  if (resource._meta) copy._meta = structuredClone(resource._meta);
  if (resource.textByUser) copy.textByUser = { ...resource.textByUser };
  if (resource.annotations) {
    copy.annotations = { ...resource.annotations };
    if (resource.annotations.audience)
      copy.annotations.audience = [...resource.annotations.audience];
  }
  return copy;
}

function assertValid(resource: StoredResource): void {
  const hasText = resource.text !== undefined;
  const hasBlob = resource.blob !== undefined;
  if (hasText === hasBlob) {
    throw new Error(`StoredResource ${resource.uri}: set exactly one of text or blob`);
  }
  if (
    resource.ttlMs !== undefined &&
    (!Number.isSafeInteger(resource.ttlMs) || resource.ttlMs < 0)
  ) {
    // The modern SDK rejects such hints at encode time; failing here points at the test instead.
    throw new Error(`StoredResource ${resource.uri}: ttlMs must be a non-negative integer`);
  }
}

export class ResourceStore {
  // Map keeps insertion order, and replacing an existing key keeps its slot: list order stays
  // stable across upserts, which keeps list diffs in tests readable.
  readonly #entries = new Map<string, StoredResource>();
  readonly #readsByUri = new Map<string, number>();
  readonly #failures = new Map<string, ReadError>();
  #totalReads = 0;
  #hook: ReadHook | undefined;
  #tools: StoredTool[] = [];
  #prompts: StoredPrompt[] = [];
  #templates: StoredTemplate[] = [];
  readonly #asks = new Set<AbortController>();
  #askLog: AskRecord[] = [];
  /** Prompts, completions, held tool calls and tasks (issue 21), shared by every endpoint. */
  readonly extras = new ServerExtras();

  constructor(initial: StoredResource[] = []) {
    for (const resource of initial) this.upsert(resource);
  }

  get(uri: string): StoredResource | undefined {
    const entry = this.#entries.get(uri);
    return entry ? copyResource(entry) : undefined;
  }

  list(): StoredResource[] {
    return [...this.#entries.values()].map(copyResource);
  }

  /** Adds or replaces the entry and its content. Publishes nothing. */
  upsert(resource: StoredResource): void {
    assertValid(resource);
    this.#entries.set(resource.uri, copyResource(resource));
  }

  /**
   * Replaces the content only. The list entry (metadata, annotations.lastModified) stays as it
   * is, so a content change never shows up as a list change: list_changed diffs stay meaningful.
   */
  setText(uri: string, text: string): void {
    const entry = this.#entries.get(uri);
    if (!entry) throw new Error(`ResourceStore.setText: no resource ${uri}`);
    entry.text = text;
    delete entry.blob;
  }

  remove(uri: string): boolean {
    return this.#entries.delete(uri);
  }

  // The catalog lists (tools, prompts, templates) are replaced wholesale and kept in the given
  // order, duplicates included: a test may want a server that misbehaves. Deep copies in and
  // out, so neither side can mutate the other's entries.

  tools(): StoredTool[] {
    return structuredClone(this.#tools);
  }

  /** Replaces the tool list. Publishes nothing (see `McpEndpoint.setTools`). */
  setTools(tools: StoredTool[]): void {
    this.#tools = structuredClone(tools);
  }

  prompts(): StoredPrompt[] {
    return structuredClone(this.#prompts);
  }

  /** Replaces the prompt list. Publishes nothing (see `McpEndpoint.setPrompts`). */
  setPrompts(prompts: StoredPrompt[]): void {
    this.#prompts = structuredClone(prompts);
  }

  templates(): StoredTemplate[] {
    return structuredClone(this.#templates);
  }

  /** Replaces the resource template list. Publishes nothing (see `McpEndpoint.setTemplates`). */
  setTemplates(templates: StoredTemplate[]): void {
    this.#templates = structuredClone(templates);
  }

  // Server-to-client requests made by tools (any endpoint on this store), so a test can see what
  // a tool asked and got, and play the server that gives up on its question.

  /**
   * A tool is about to ask the client something (2025 eras: a request on the wire). The signal
   * aborts when `cancelAsks()` is called; `endAsk` must follow.
   */
  beginAsk(): AbortController {
    const controller = new AbortController();
    this.#asks.add(controller);
    return controller;
  }

  /** The ask is over; `record` (when it got an answer, an error or was cancelled) is logged. */
  endAsk(controller: AbortController, record: AskRecord | undefined): void {
    this.#asks.delete(controller);
    if (record) this.#askLog.push(structuredClone(record));
  }

  /** Server-to-client requests in flight (2025 eras; 2026-07-28 asks are results, never pending). */
  pendingAsks(): number {
    return this.#asks.size;
  }

  /**
   * The server gives up on every request in flight: the SDK sends `notifications/cancelled` to
   * the client, and the tool answers `<method> cancelled by the server`. Returns how many.
   */
  cancelAsks(): number {
    const all = [...this.#asks];
    this.#asks.clear();
    for (const controller of all) controller.abort(new Error('cancelled by the server'));
    return all.length;
  }

  /** Every answered (or failed, or cancelled) ask, oldest first. */
  asks(): AskRecord[] {
    return structuredClone(this.#askLog);
  }

  /** Reads served (successful or failed, known or unknown URI) for `uri`, or in total. */
  reads(uri?: string): number {
    return uri === undefined ? this.#totalReads : (this.#readsByUri.get(uri) ?? 0);
  }

  resetCounters(): void {
    this.#readsByUri.clear();
    this.#totalReads = 0;
    this.#askLog = [];
  }

  /** One global hook, so a test can hold or fail reads without knowing which server serves them. */
  onRead(hook: ReadHook | undefined): void {
    this.#hook = hook;
  }

  /** Every read of `uri` fails with `error` until cleared with `null`. The content is untouched. */
  failReads(uri: string, error?: ReadError | null): void {
    if (error === null) this.#failures.delete(uri);
    else this.#failures.set(uri, { ...(error ?? DEFAULT_READ_ERROR) });
  }

  /**
   * Serves one read for a server. The outcome is decided when the read arrives and only then
   * does the hook run: a held read answers with the content as it was when it started, like a
   * real server whose response is slow on the wire. That makes "a change landed while a read was
   * in flight" observable, which is exactly what single-flight-with-trailing-read must handle.
   * A hook that throws fails the read with whatever it threw. `user` is the signed-in user of a
   * protected server (see `textByUser`).
   */
  async serveRead(uri: string, user?: string): Promise<ReadOutcome> {
    this.#totalReads += 1;
    this.#readsByUri.set(uri, (this.#readsByUri.get(uri) ?? 0) + 1);
    const failure = this.#failures.get(uri);
    const entry = this.#entries.get(uri);
    let outcome: ReadOutcome;
    if (failure) outcome = { kind: 'failed', error: { ...failure } };
    else if (entry) {
      const resource = copyResource(entry);
      const own = user === undefined ? undefined : entry.textByUser?.[user];
      if (own !== undefined) resource.text = own;
      delete resource.textByUser;
      outcome = { kind: 'found', resource };
    } else outcome = { kind: 'missing', uri };
    const hook = this.#hook;
    if (hook) await hook(uri);
    return outcome;
  }
}
