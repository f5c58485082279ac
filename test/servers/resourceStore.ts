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
  /** Cache hints the modern server puts on reads of this resource. */
  ttlMs?: number;
  cacheScope?: 'public' | 'private';
  annotations?: ResourceAnnotations;
  size?: number;
}

/** A `tools/list` entry; tools/call on it answers `called <name> with <json args>`. */
export interface StoredTool {
  name: string;
  title?: string;
  description?: string;
  /** Listed as `{ type: 'object' }` when omitted (the spec requires an input schema). */
  inputSchema?: { type: 'object'; properties?: Record<string, object>; required?: string[] };
}

/** A `prompts/list` entry. */
export interface StoredPrompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
}

/** A `resources/templates/list` entry. */
export interface StoredTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
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

  /** Reads served (successful or failed, known or unknown URI) for `uri`, or in total. */
  reads(uri?: string): number {
    return uri === undefined ? this.#totalReads : (this.#readsByUri.get(uri) ?? 0);
  }

  resetCounters(): void {
    this.#readsByUri.clear();
    this.#totalReads = 0;
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
   * A hook that throws fails the read with whatever it threw.
   */
  async serveRead(uri: string): Promise<ReadOutcome> {
    this.#totalReads += 1;
    this.#readsByUri.set(uri, (this.#readsByUri.get(uri) ?? 0) + 1);
    const failure = this.#failures.get(uri);
    const entry = this.#entries.get(uri);
    let outcome: ReadOutcome;
    if (failure) outcome = { kind: 'failed', error: { ...failure } };
    else if (entry) outcome = { kind: 'found', resource: copyResource(entry) };
    else outcome = { kind: 'missing', uri };
    const hook = this.#hook;
    if (hook) await hook(uri);
    return outcome;
  }
}
