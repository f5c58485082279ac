import type {
  Client,
  ClientCapabilities,
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
  Root,
} from '@modelcontextprotocol/client';
import { fitAnswer, isSafeElicitation, MAX_PENDING_ELICITATIONS } from './elicitationChecks';
import { Store } from './store';

export interface ElicitationOptions {
  /** Forms the user fills in (default true). */
  form?: boolean;
  /** Sending the user to a URL (default false). */
  url?: boolean;
}

export interface ServerRequestOptions {
  /**
   * Let the server ask the user for input (`elicitation/create`; on
   * 2026-07-28 also inside `input_required` results). Requests wait for
   * `onElicitation`, else for a mounted `useElicitations()` to answer;
   * with neither, they are declined at once.
   */
  elicitation?: boolean | ElicitationOptions;
  /** Answer elicitations in code (wins over the pending list). */
  onElicitation?: (
    params: ElicitRequestParams,
    context: { signal: AbortSignal },
  ) => Promise<ElicitResult>;
  /** Let the server ask the app's model for a completion (`sampling/createMessage`). */
  sampling?: (
    params: CreateMessageRequestParams,
    context: { signal: AbortSignal },
  ) => Promise<CreateMessageResult>;
  /** The roots the server may look at (`roots/list`). */
  roots?: Root[];
  /**
   * Protocol extensions this client supports, declared as `capabilities.extensions` (MCP Apps:
   * `MCP_APPS_EXTENSION` from `mcp-react-query/apps`).
   */
  extensions?: ClientCapabilities['extensions'];
}

/** An elicitation waiting for the user: render a form from `params`, then answer once. */
export interface PendingElicitation {
  readonly id: number;
  readonly params: ElicitRequestParams;
  /**
   * Send the content (the schema's defaults fill what is missing). Content
   * that does not fit `params.requestedSchema` (a type, a required field, an
   * enum, a field not asked for) throws a TypeError and nothing is sent.
   */
  accept(content?: Record<string, unknown>): void;
  decline(): void;
  cancel(): void;
}

/** A pending elicitation as it crosses to another tab. */
export interface SharedElicitation {
  id: number;
  params: ElicitRequestParams;
}

const NO_PENDING: readonly PendingElicitation[] = [];

/**
 * The server's requests to the client: the capabilities they need, one
 * handler per method on each client we make, and the elicitations waiting
 * for the user. Nothing waits forever: an elicitation nobody can answer is
 * declined at once (or once the last one who could goes), one the server
 * cancels leaves the list. Nothing the server asks is taken on trust: past
 * MAX_PENDING_ELICITATIONS per connection, or for a URL that is not https,
 * it is declined; an answer is sent only if it fits what was asked.
 */
export class ServerRequests {
  readonly #options: ServerRequestOptions;
  readonly pending = new Store<readonly PendingElicitation[]>(NO_PENDING);
  #roots: Root[] | undefined;
  /** The latest client handlers were installed on (the connected one). */
  #client: Client | undefined;
  #answerers = 0;
  /** Tabs sharing this connection whose components answer elicitations (tab sharing). */
  #remoteAnswerers = 0;
  readonly #answeringListeners = new Set<() => void>();
  /** How to settle each pending elicitation of this tab's connection, by id. */
  readonly #settlers = new Map<number, (result: ElicitResult) => void>();
  #nextId = 0;

  constructor(options: ServerRequestOptions) {
    this.#options = options;
    this.#roots = options.roots;
  }

  /** What to declare when connecting (fixed for the life of a client). */
  capabilities(): ClientCapabilities {
    const { elicitation, onElicitation, sampling } = this.#options;
    const capabilities: ClientCapabilities = {};
    if (elicitation || onElicitation) {
      const modes = typeof elicitation === 'object' ? elicitation : {};
      capabilities.elicitation = {
        ...(modes.form !== false && { form: { applyDefaults: true } }),
        ...(modes.url === true && { url: {} }),
      };
    }
    if (sampling) capabilities.sampling = {};
    if (this.#roots) capabilities.roots = { listChanged: true };
    if (this.#options.extensions) capabilities.extensions = this.#options.extensions;
    return capabilities;
  }

  /** Register the handlers on a fresh client (before it connects). */
  install(client: Client): void {
    this.#client = client;
    const capabilities = this.capabilities();
    if (capabilities.elicitation) {
      let waiting = 0;
      client.setRequestHandler('elicitation/create', async (request, context) => {
        const { params } = request;
        if (waiting >= MAX_PENDING_ELICITATIONS || !isSafeElicitation(params)) {
          return { action: 'decline' };
        }
        waiting += 1;
        try {
          return fitAnswer(params, await this.#elicit(params, context.mcpReq.signal));
        } finally {
          waiting -= 1;
        }
      });
    }
    const { sampling } = this.#options;
    if (sampling) {
      client.setRequestHandler('sampling/createMessage', (request, context) =>
        sampling(request.params, { signal: context.mcpReq.signal }),
      );
    }
    if (capabilities.roots) {
      client.setRequestHandler('roots/list', () => ({ roots: this.#roots ?? [] }));
    }
  }

  /**
   * New roots. A 2025 server is told (`notifications/roots/list_changed`);
   * a 2026-07-28 server asks for them when it needs them.
   */
  setRoots(roots: Root[]): void {
    this.#roots = roots;
    const client = this.#client;
    if (client?.getProtocolEra() === 'legacy') void client.sendRootsListChanged().catch(() => {});
  }

  /** The elicitations waiting for the user. */
  getElicitations = (): readonly PendingElicitation[] => this.pending.get();

  /**
   * Listen to the pending elicitations. While anyone listens, elicitations
   * wait to be answered; with no listener (and no `onElicitation`) they are
   * declined at once.
   */
  subscribeElicitations = (listener: () => void): (() => void) => {
    this.#setAnswerers(1);
    const unsubscribe = this.pending.subscribe(listener);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      unsubscribe();
      this.#setAnswerers(-1);
    };
  };

  // ── tab sharing: the leader's elicitations show in every tab that answers them ──

  /** Whether a component in this tab answers elicitations. */
  get answering(): boolean {
    return this.#answerers > 0;
  }

  /** Told when `answering` may have changed. */
  onAnswering(listener: () => void): () => void {
    this.#answeringListeners.add(listener);
    return () => this.#answeringListeners.delete(listener);
  }

  /** How many other tabs answer this connection's elicitations (set by the leader tab). */
  setRemoteAnswerers(count: number): void {
    this.#remoteAnswerers = count;
    this.#declineIfUnanswerable();
  }

  /** This connection's pending elicitations, as they can cross to another tab. */
  shared(): SharedElicitation[] {
    return this.pending
      .get()
      .filter((entry) => this.#settlers.has(entry.id))
      .map(({ id, params }) => ({ id, params }));
  }

  /**
   * An answer another tab gave: the first answer that fits what was asked
   * wins, later ones (and misfits) are ignored.
   */
  answer(id: number, result: ElicitResult): void {
    const entry = this.pending.get().find((pending) => pending.id === id);
    const settle = this.#settlers.get(id);
    if (!entry || !settle) return;
    try {
      settle(fitAnswer(entry.params, result));
    } catch {
      // A misfit from another tab: the question stays for a fitting answer.
    }
  }

  /**
   * Show the leader tab's pending elicitations here (`[]`: none, or this tab
   * no longer follows); answering one sends the answer there.
   */
  mirror(
    items: readonly SharedElicitation[],
    send: (id: number, result: ElicitResult) => void,
  ): void {
    const shown = new Map(this.pending.get().map((entry) => [entry.id, entry]));
    const next = items.map(
      ({ id, params }) =>
        shown.get(id) ??
        pendingEntry(id, params, (result) => {
          this.pending.set(this.pending.get().filter((entry) => entry.id !== id));
          send(id, result);
        }),
    );
    if (next.length > 0 || shown.size > 0) this.pending.set(next);
  }

  #setAnswerers(delta: number): void {
    const was = this.answering;
    this.#answerers += delta;
    if (this.answering !== was) for (const listener of this.#answeringListeners) listener();
    this.#declineIfUnanswerable();
  }

  /**
   * Nobody left to answer (the last form unmounted, the last answering tab
   * closed) is nobody there: what waits is declined, as it would have been
   * at once. On the next macrotask, so a component that subscribes again
   * right away (StrictMode, a re-render) keeps its question.
   */
  #declineIfUnanswerable(): void {
    const unanswerable = () => this.#answerers + this.#remoteAnswerers === 0;
    if (!unanswerable() || this.#settlers.size === 0) return;
    setTimeout(() => {
      if (!unanswerable()) return;
      for (const settle of [...this.#settlers.values()]) settle({ action: 'decline' });
    }, 0);
  }

  #elicit(params: ElicitRequestParams, signal: AbortSignal): Promise<ElicitResult> {
    const { onElicitation } = this.#options;
    if (onElicitation) return onElicitation(params, { signal });
    if (this.#answerers + this.#remoteAnswerers === 0 || signal.aborted) {
      return Promise.resolve({ action: 'decline' });
    }
    return new Promise<ElicitResult>((resolve) => {
      this.#nextId += 1;
      const id = this.#nextId;
      const settle = (result: ElicitResult) => {
        if (!this.#settlers.delete(id)) return;
        signal.removeEventListener('abort', onAbort);
        this.pending.set(this.pending.get().filter((other) => other !== entry));
        resolve(result);
      };
      const entry = pendingEntry(id, params, settle);
      const onAbort = () => settle({ action: 'cancel' });
      signal.addEventListener('abort', onAbort);
      this.#settlers.set(id, settle);
      this.pending.set([...this.pending.get(), entry]);
    });
  }
}

function pendingEntry(
  id: number,
  params: ElicitRequestParams,
  settle: (result: ElicitResult) => void,
): PendingElicitation {
  return {
    id,
    params,
    accept: (content) =>
      settle(fitAnswer(params, { action: 'accept', content: content ?? {} } as ElicitResult)),
    decline: () => settle({ action: 'decline' }),
    cancel: () => settle({ action: 'cancel' }),
  };
}

/**
 * What the client lets the server ask of it, for `McpProvider`'s (or
 * McpCacheSync's) `serverRequests`. Create it once (module scope, `useState`):
 * the capabilities are declared when connecting.
 */
export function createServerRequests(options: ServerRequestOptions): ServerRequests {
  return new ServerRequests(options);
}
