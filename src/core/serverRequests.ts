import type {
  Client,
  ClientCapabilities,
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
  Root,
} from '@modelcontextprotocol/client';
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
}

/** An elicitation waiting for the user: render a form from `params`, then answer once. */
export interface PendingElicitation {
  readonly id: number;
  readonly params: ElicitRequestParams;
  /** Send the content (the schema's defaults fill what is missing). */
  accept(content?: Record<string, unknown>): void;
  decline(): void;
  cancel(): void;
}

const NO_PENDING: readonly PendingElicitation[] = [];

/**
 * The server's requests to the client: the capabilities they need, one
 * handler per method on each client we make, and the elicitations waiting
 * for the user. Nothing waits forever: an elicitation nobody can answer is
 * declined at once, one the server cancels leaves the list.
 */
export class ServerRequests {
  readonly #options: ServerRequestOptions;
  readonly pending = new Store<readonly PendingElicitation[]>(NO_PENDING);
  #roots: Root[] | undefined;
  /** The latest client handlers were installed on (the connected one). */
  #client: Client | undefined;
  #answerers = 0;
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
    return capabilities;
  }

  /** Register the handlers on a fresh client (before it connects). */
  install(client: Client): void {
    this.#client = client;
    const capabilities = this.capabilities();
    if (capabilities.elicitation) {
      client.setRequestHandler('elicitation/create', (request, context) =>
        this.#elicit(request.params, context.mcpReq.signal),
      );
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
    this.#answerers += 1;
    const unsubscribe = this.pending.subscribe(listener);
    return () => {
      unsubscribe();
      this.#answerers -= 1;
    };
  };

  #elicit(params: ElicitRequestParams, signal: AbortSignal): Promise<ElicitResult> {
    const { onElicitation } = this.#options;
    if (onElicitation) return onElicitation(params, { signal });
    if (this.#answerers === 0 || signal.aborted) return Promise.resolve({ action: 'decline' });
    return new Promise<ElicitResult>((resolve) => {
      this.#nextId += 1;
      const settle = (result: ElicitResult) => {
        if (!this.pending.get().includes(entry)) return;
        signal.removeEventListener('abort', onAbort);
        this.pending.set(this.pending.get().filter((other) => other !== entry));
        resolve(result);
      };
      const entry: PendingElicitation = {
        id: this.#nextId,
        params,
        accept: (content) => settle({ action: 'accept', content: content ?? {} } as ElicitResult),
        decline: () => settle({ action: 'decline' }),
        cancel: () => settle({ action: 'cancel' }),
      };
      const onAbort = () => settle({ action: 'cancel' });
      signal.addEventListener('abort', onAbort);
      this.pending.set([...this.pending.get(), entry]);
    });
  }
}

/**
 * What the client lets the server ask of it, for `McpProvider`'s (or
 * McpCacheSync's) `serverRequests`. Create it once (module scope, `useState`):
 * the capabilities are declared when connecting.
 */
export function createServerRequests(options: ServerRequestOptions): ServerRequests {
  return new ServerRequests(options);
}
