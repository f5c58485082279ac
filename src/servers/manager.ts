import type { CallToolResult } from '@modelcontextprotocol/client';
import type { QueryClient } from '@tanstack/query-core';
import { McpQueryError } from '../core/errors';
import { Holds } from '../core/holds';
import type { McpCacheSync, StartPolicy } from '../core/mcpCacheSync';
import { isServed } from '../core/routing';
import type { CallToolVariables } from '../core/tools';
import {
  checkAdded,
  type McpServerConfig,
  type McpServerInput,
  type ServerConfigResult,
  sameConnection,
  sameSignIn,
  updateIn,
  withOAuth,
} from './config';
import { ConfigStore } from './configStore';
import { ElicitationsOfServers } from './elicitations';
import { type AddServerResult, type McpServer, type McpServerPatch, serverEntry } from './entry';
import { qualifiedOf, sameItems, toolOf } from './lists';
import { DEFAULT_STORAGE_KEY, type McpServerManagerOptions, separatorOf } from './options';
import type { Qualified } from './qualify';
import { removeScope, resetScope, ServerRuntime } from './runtime';

export type { AddServerResult, McpServer, McpServerPatch };

/**
 * The servers a user added, each its own McpCacheSync (on a scope of its own, `scopeOf(id)`, which
 * no app provider shares) made and ended here, never by a render: adding, editing or removing one
 * never touches another's connection. The list is configuration only (no token), kept in a
 * storage, restored on reload and followed across tabs (`ConfigStore`). docs/design.md, "Many
 * servers".
 */
export class McpServerManager {
  readonly queryClient: QueryClient;
  readonly separator: string;
  readonly #options: McpServerManagerOptions;
  readonly #storageKey: string;
  readonly #store: ConfigStore;
  readonly #runtimes = new Map<string, ServerRuntime>();
  readonly #entries = new WeakMap<ServerRuntime, McpServer>();
  readonly #unwatch = new WeakMap<ServerRuntime, () => void>();
  readonly #listeners = new Set<() => void>();
  readonly #elicitations = new ElicitationsOfServers();
  #servers: readonly McpServer[] = [];
  #syncs: ReadonlyMap<string, McpCacheSync> = new Map();
  readonly #holds = new Holds(() => void this.#stop());
  #started = false;
  /** Before the first mount, a read may start a server (Suspense above the provider); then not. */
  #policy: StartPolicy = 'on-render';
  #disposing: Promise<void> | undefined;

  /** Reads the stored list and prepares each server; nothing connects before `mount()`. */
  constructor(options: McpServerManagerOptions) {
    this.queryClient = options.queryClient;
    this.separator = separatorOf(options);
    this.#options = options;
    const { storage, channel } = options;
    this.#storageKey = options.storageKey ?? DEFAULT_STORAGE_KEY;
    this.#store = new ConfigStore({ key: this.#storageKey, storage, channel });
    this.#store.subscribe(() => void this.#reconcile());
    void this.#reconcile();
  }

  // ── the list ─────────────────────────────────────────────────────────────

  getServers = (): readonly McpServer[] => this.#servers;

  /** A server's scope on the QueryClient, which no app provider or other manager has. */
  scopeOf = (id: string): string => `${this.#storageKey}/${id}`;

  /** The McpCacheSync of each server, by id (a new map only when one comes, goes or is replaced). */
  getSyncs = (): ReadonlyMap<string, McpCacheSync> => this.#syncs;

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  };

  /**
   * Add a server, checked at once: a bad URL, name, id or header, or a URL or name already in
   * the list, is refused with a reason and changes nothing. It starts signed out in every tab:
   * its tokens are stored under a nonce of this add (`checkAdded`), so none kept for an earlier
   * add of it is found (this tab's, under the key of a version without nonces, is forgotten).
   * Call it from an event handler, not while rendering.
   */
  add = (input: McpServerInput): AddServerResult => {
    this.#alive();
    let result: ServerConfigResult | undefined;
    this.#store.change((servers) => {
      result = checkAdded(input, servers, (id) => isServed(this.queryClient, id));
      return result.ok ? [...servers, result.server] : undefined;
    });
    const checked = result as ServerConfigResult;
    if (!checked.ok) return checked;
    void this.#sweeping()?.forgetStored(checked.server, this.#storageKey);
    void this.#reconcile();
    return { ok: true, server: this.#entryOf(checked.server.id) as McpServer };
  };

  /**
   * Change a server. Only a new name keeps its connection; anything else (URL, headers,
   * sign-in) replaces it, and what its scope held, with a new one, and leaves the others alone.
   */
  update = (id: string, patch: McpServerPatch): AddServerResult => {
    this.#alive();
    let result: ServerConfigResult | undefined;
    this.#store.change((servers) => {
      const updated = updateIn(servers, id, patch);
      result = updated.result;
      return updated.servers;
    });
    const checked = result as ServerConfigResult;
    if (!checked.ok) return checked;
    void this.#reconcile();
    return { ok: true, server: this.#entryOf(id) as McpServer };
  };

  /**
   * Remove a server and end it completely: its calls cancelled, its connection closed (2025: the
   * session DELETEd) and with it its open questions, its credentials forgotten and every cache
   * entry of its scope removed. Resolves (true) once the server has seen the end; false for an
   * unknown id.
   */
  remove = async (id: string): Promise<boolean> => {
    this.#alive();
    let removed: McpServerConfig | undefined;
    this.#store.change((servers) => {
      removed = servers.find((server) => server.id === id);
      return removed && servers.filter((server) => server !== removed);
    });
    if (!removed) return false;
    await this.#reconcile();
    return true;
  };

  // ── across servers ───────────────────────────────────────────────────────

  /** Every server's cached tools or prompts under qualified names (`qualify.ts`), in order. */
  qualified<T extends { name: string }>(kind: 'tools' | 'prompts'): Qualified<T>[] {
    const { queryClient, separator } = this;
    return qualifiedOf<T>(queryClient, this.#store.servers, this.scopeOf, kind, separator);
  }

  /** Which server and tool a qualified name stands for (undefined: none, or it could be several). */
  resolveTool(qualifiedName: string): { serverId: string; name: string } | undefined {
    const target = this.#toolOf(qualifiedName);
    return 'problem' in target ? undefined : target;
  }

  /** Call a tool by its qualified name on its server; removing that server cancels the call. */
  callTool = (variables: CallToolVariables): Promise<CallToolResult> => {
    const target = this.#toolOf(variables.name);
    const runtime = 'problem' in target ? undefined : this.#runtimes.get(target.serverId);
    if (!runtime || 'problem' in target) {
      const why = 'problem' in target ? target.problem : `no server "${target.serverId}"`;
      return Promise.reject(new McpQueryError('UNKNOWN_SERVER', why));
    }
    return runtime.callTool({ ...variables, name: target.name });
  };

  #toolOf = (name: string) =>
    toolOf(this.queryClient, this.#store.servers, this.scopeOf, name, this.separator);

  /** Whether the servers may ask the user things (`serverRequests` with elicitation). */
  get asksUser(): boolean {
    const requests = this.#options.serverRequests;
    return Boolean(requests?.elicitation || requests?.onElicitation);
  }

  /** Every server's elicitations waiting for the user (listening answers for all of them). */
  getElicitations = this.#elicitations.get;
  subscribeElicitations = this.#elicitations.subscribe;

  // ── lifecycle ────────────────────────────────────────────────────────────

  /**
   * Connect every server and follow the other tabs; the returned function lets go. The last
   * holder letting go ends every connection on the next macrotask (React StrictMode's remount
   * keeps them); mounted again (an `<Activity>` shown again), every server connects anew.
   */
  mount(): () => void {
    this.#alive();
    const release = this.#holds.take();
    if (!this.#started) {
      this.#started = true;
      this.#policy = 'on-mount';
      this.#store.start();
      this.#store.reload();
      for (const runtime of [...this.#runtimes.values()]) this.#run(runtime);
      this.#publish();
      this.#forgetGone();
    }
    return release;
  }

  /** End every connection (the list stays stored). Resolves once each server has seen it. */
  dispose(): Promise<void> {
    this.#holds.cancel();
    this.#disposing ??= this.#stop();
    return this.#disposing;
  }

  /** Nobody holds it (or disposed): every connection ends; servers added later wait for a mount. */
  #stop(): Promise<void> {
    this.#started = false;
    this.#store.stop();
    const runtimes = [...this.#runtimes.values()];
    for (const runtime of runtimes) this.#unwatch.get(runtime)?.();
    return Promise.all(runtimes.map((runtime) => runtime.end())).then(() => {});
  }

  // ── internals ────────────────────────────────────────────────────────────

  #alive(): void {
    if (this.#disposing) throw new McpQueryError('DISPOSED', 'this McpServerManager was disposed');
  }

  /**
   * Make the servers what the stored list says (changed here or in another tab): new ones made
   * (and started, once mounted), changed ones replaced, missing ones ended. Resolves once the
   * ended ones have closed on their servers, and those gone or moved have their tokens forgotten.
   */
  #reconcile(): Promise<void> {
    const wanted = new Map(this.#store.servers.map((server) => [server.id, server]));
    const ending: Promise<void>[] = [];
    for (const [id, runtime] of this.#runtimes) {
      const config = wanted.get(id);
      if (config && sameConnection(config, runtime.config)) {
        runtime.config = config;
        continue;
      }
      this.#runtimes.delete(id);
      this.#unwatch.get(runtime)?.();
      ending.push(runtime.end());
      // Tokens are bound to their URL and add: a server gone, moved or added again (here or in another
      // tab) has none left in this tab's storage either (nobody is there to hear forgetting failed).
      if (!config || !sameSignIn(config, runtime.config)) {
        ending.push(Promise.resolve(this.#options.signIn?.forget(runtime.config)).catch(() => {}));
      }
      // Synchronously: nothing renders the ended connection's data from now on.
      if (config) resetScope(this.queryClient, runtime.scope);
      else removeScope(this.queryClient, runtime.scope);
    }
    for (const config of wanted.values()) {
      if (this.#runtimes.has(config.id)) continue;
      const runtime = this.#make(config);
      if (this.#started && !this.#disposing) this.#run(runtime);
    }
    this.#publish();
    this.#forgetGone();
    return Promise.all(ending).then(() => {});
  }

  /** Started, it learnt the list: this tab's storage forgets adds it no longer has (signIn.ts). */
  #forgetGone(): void {
    if (!this.#started || this.#disposing || !this.#sweeping()) return;
    this.#store.reload(); // the stored list: a server another tab just added is not gone
    void this.#sweeping()?.forgetGone(this.#store.servers, this.#storageKey);
  }

  /** Sign-ins this list may tell orphans of: not one in memory, this manager's alone (signIn.ts). */
  #sweeping = () => (this.#store.stored ? this.#options.signIn : undefined);

  /**
   * Start a server and follow its state. One that ended (the manager was let go, or a read
   * started it before any mount and let go) is made again on its scope, whose data stays.
   */
  #run(runtime: ServerRuntime): void {
    const live = runtime.start() ? runtime : this.#make(runtime.config);
    live.start();
    this.#watch(live);
  }

  #make(config: McpServerConfig): ServerRuntime {
    const scope = this.scopeOf(config.id);
    const runtime = new ServerRuntime(config, scope, this.queryClient, this.#options, this.#policy);
    this.#runtimes.set(config.id, runtime);
    return runtime;
  }

  /** Follow a server's state from its start (a manager React made and dropped never starts). */
  #watch(runtime: ServerRuntime): void {
    if (this.#unwatch.has(runtime)) return;
    const changed = () => {
      if (this.#runtimes.get(runtime.config.id) !== runtime) return;
      this.#learnSignIn(runtime);
      this.#refresh(runtime);
    };
    const stops = [runtime.sync.subscribeState(changed), runtime.provider?.subscribe(changed)];
    this.#unwatch.set(runtime, () => {
      this.#unwatch.delete(runtime);
      for (const stop of stops) stop?.();
    });
  }

  /**
   * A server that answered 401 signs in from now on (when the manager can): stored as
   * `auth: 'oauth'`, so it gets its provider, here and after a reload, in every tab.
   */
  #learnSignIn(runtime: ServerRuntime): void {
    if (!runtime.needsSignIn(this.#options.signIn)) return;
    queueMicrotask(() => {
      if (this.#disposing) return;
      this.#store.change((servers) => withOAuth(servers, runtime.config));
      void this.#reconcile();
    });
  }

  /** One server's state changed: only its entry is made again, and only if it shows a change. */
  #refresh(runtime: ServerRuntime): void {
    const previous = this.#entries.get(runtime);
    const entry = this.#entryOf(runtime.config.id);
    if (!entry || entry === previous) return;
    this.#servers = this.#servers.map((server) => (server.id === entry.id ? entry : server));
    for (const listener of [...this.#listeners]) listener();
  }

  /** The list changed (a server came, went or was replaced): every snapshot is made again. */
  #publish(): void {
    const servers = this.#store.servers.map((config) => this.#entryOf(config.id) as McpServer);
    const syncs = servers.map(({ id }) => this.#runtimes.get(id)?.sync as McpCacheSync);
    let changed = false;
    if (!sameItems(servers, this.#servers)) {
      this.#servers = servers;
      changed = true;
    }
    // The same syncs in the same places are the same servers (a sync serves one id).
    if (!sameItems(syncs, [...this.#syncs.values()])) {
      this.#syncs = new Map(servers.map(({ id }, i) => [id, syncs[i] as McpCacheSync]));
      changed = true;
    }
    this.#elicitations.setSources(
      servers.flatMap(({ id, name }) => {
        const requests = this.#runtimes.get(id)?.requests;
        return requests ? [{ id, name, requests }] : [];
      }),
    );
    if (changed) for (const listener of [...this.#listeners]) listener();
  }

  #entryOf(id: string): McpServer | undefined {
    const runtime = this.#runtimes.get(id);
    if (!runtime) return undefined;
    const entry = serverEntry(runtime, this.#entries.get(runtime));
    this.#entries.set(runtime, entry);
    return entry;
  }
}
