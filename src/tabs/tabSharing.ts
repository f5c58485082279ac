import type { CallToolResult, Progress } from '@modelcontextprotocol/client';
import {
  hashKey,
  type Query,
  type QueryCacheNotifyEvent,
  type QueryKey,
  QueryObserver,
} from '@tanstack/query-core';
import { McpQueryError, type McpQueryErrorCode } from '../core/errors';
import type { McpEvent, McpEventInput } from '../core/events';
import type { Remote, SyncInternals, TabSharingOption } from '../core/internals';
import { LIST_KINDS, type NotifiedList } from '../core/lists';
import { DEFAULTS } from '../core/options';
import { type CallToolVariables, callTool } from '../core/tools';
import type { ChannelLike, LocksLike, TabMessage, WireCall, WireError } from './protocol';

export interface ShareAcrossTabsOptions {
  /** The lock manager that elects the leader. Default: `navigator.locks`. */
  locks?: LocksLike;
  /** Opens the channel the tabs talk over. Default: `new BroadcastChannel(name)`. */
  channel?: (name: string) => ChannelLike;
  /** How often the leader looks for tabs that closed without saying goodbye. Default 2000 ms. */
  livenessMs?: number;
}

/**
 * One connection for all of a browser's tabs (per server, scope and
 * identity), for `McpCacheSync`'s `shareAcrossTabs` option or
 * `<McpProvider shareAcrossTabs>`. One tab, elected with Web Locks, holds
 * the connection and the stream; the others read, hold and call through it
 * over a BroadcastChannel, and take what it reads without reading again.
 * When it closes, another tab takes over and catches up. Where there are no
 * Web Locks or no BroadcastChannel (server rendering, old browsers), and
 * for a `client` or `transport` passed in (another tab cannot have the same
 * one), each tab connects by itself. docs/design.md, "Tab sharing".
 */
export function shareAcrossTabs(options: ShareAcrossTabsOptions = {}): TabSharingOption {
  return {
    attach(owner, internals) {
      const locks =
        options.locks ?? (globalThis.navigator as { locks?: LocksLike } | undefined)?.locks;
      const open =
        options.channel ??
        (typeof BroadcastChannel === 'function'
          ? (name: string) => new BroadcastChannel(name) as unknown as ChannelLike
          : undefined);
      if (!locks || !open || !internals.identity().connection.startsWith('url:')) return;
      const settings = { locks, open, livenessMs: options.livenessMs ?? 2000 };
      let membership = new Membership(owner, internals, settings);
      let disposed = false;
      internals.addFacts(() => [membership.fact()]);
      // Another identity is another group: private data never crosses identities.
      internals.onIdentity(() => {
        if (disposed) return;
        const previous = membership;
        membership = new Membership(owner, internals, settings);
        previous.leave(membership);
      });
      internals.onDispose(() => {
        disposed = true;
        membership.leave(undefined);
      });
    },
  };
}

interface Settings {
  locks: LocksLike;
  open(name: string): ChannelLike;
  livenessMs: number;
}

type Request = Extract<TabMessage, { type: 'read' | 'call' }>;

interface Pending {
  request: Request;
  /** The leader it was sent to (undefined: not sent yet). */
  sentTo: string | undefined;
  /** A call, as given (to run it elsewhere if it never left this tab). */
  call: CallToolVariables | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Stop the timeout and the abort listener. */
  done(): void;
}

/** Events that describe the leader's connection (what every tab of the group shows). */
const FORWARDED = new Set<McpEvent['type']>([
  'connection',
  'status',
  'stream',
  'coverage',
  'declined',
  'updated',
  'list_changed',
  'malformed',
  'read',
  'list',
]);

/** How long a new leader lets the other tabs introduce themselves before it counts them. */
const GROUP_SETTLE_MS = 100;

/**
 * This tab's place in one sharing group: a follower (the `Remote` its
 * McpCacheSync reads through) until it wins the leader lock, then the
 * leader until it leaves. The group is named by the server, the scope and
 * the identity, so private data never crosses identities (docs/design.md, rule 14).
 */
class Membership implements Remote {
  readonly tab = Math.random().toString(36).slice(2) + Date.now().toString(36);
  readonly #owner: object;
  readonly #internals: SyncInternals;
  readonly #settings: Settings;
  readonly #name: string;
  readonly #channel: ChannelLike;
  /** Aborted on leave: cancels lock requests in the queue and releases the locks held. */
  readonly #leaving = new AbortController();
  readonly #unsubscribeCache: () => void;
  #left = false;
  #leader: string | undefined;
  #leading = false;
  #handovers = 0;
  #tabs = 1;
  /** Set for a moment after taking over, while the other tabs introduce themselves. */
  #settling: ReturnType<typeof setTimeout> | undefined;
  // As a follower: requests in flight, the leader's coverage, data already taken.
  #nextId = 0;
  readonly #pending = new Map<number, Pending>();
  readonly #covered = new Set<string>();
  #listsCovered = new Set<NotifiedList>();
  readonly #applied = new WeakMap<Query, number>();
  #interestQueued = false;
  // As the leader: the other tabs and what they hold, observed here for them.
  readonly #members = new Map<string, { keys: QueryKey[]; since: number }>();
  readonly #holds = new Map<string, () => void>();
  readonly #calls = new Map<string, AbortController>();
  #outbox: McpEvent[] = [];
  #stopLeading: Array<() => void> = [];

  constructor(owner: object, internals: SyncInternals, settings: Settings) {
    this.#owner = owner;
    this.#internals = internals;
    this.#settings = settings;
    const { connection, auth } = internals.identity();
    this.#name = `mcp-react-query|${connection}|${internals.keys.scope ?? ''}|${auth ?? ''}`;
    this.#channel = settings.open(this.#name);
    this.#channel.addEventListener('message', (event) => this.#receive(event.data as TabMessage));
    this.#unsubscribeCache = internals.queryClient
      .getQueryCache()
      .subscribe((event) => this.#onCacheEvent(event));
    internals.setRemote(this);

    const signal = this.#leaving.signal;
    const held = new Promise((resolve) => signal.addEventListener('abort', resolve));
    const { locks } = settings;
    // Held while this tab lives: the leader tells a closed tab from a quiet one by it.
    locks.request(`${this.#name}|tab|${this.tab}`, { signal }, () => held).catch(() => {});
    locks
      .request(`${this.#name}|leader`, { signal }, () => {
        if (signal.aborted) return Promise.resolve();
        this.#lead();
        return held;
      })
      .catch(() => {});
    this.#send({ type: 'hello', tab: this.tab });
    this.#emitTabs();
  }

  /**
   * Leave the group (the McpCacheSync was disposed, or the identity changed
   * and `successor` is the membership of the new group).
   */
  leave(successor: Membership | undefined): void {
    if (this.#left) return;
    this.#left = true;
    this.#send({ type: 'bye', tab: this.tab });
    for (const stop of this.#stopLeading.splice(0)) stop();
    this.#unsubscribeCache();
    // Reads go again through whatever serves this tab now (the routed query
    // function retries a superseded read); a call not yet sent goes to the
    // successor; one already sent may have run, so it is not repeated.
    this.#handOver(
      successor && ((call) => successor.callTool(call)),
      'this tab left its sharing group',
    );
    this.#leaving.abort();
    this.#channel.close();
  }

  // ── Remote: what the McpCacheSync of a follower tab does through the leader ──

  read(key: QueryKey, signal: AbortSignal): Promise<unknown> {
    const query = this.#internals.queryClient.getQueryCache().find({ queryKey: key, exact: true });
    const fresh = query?.state.isInvalidated === true;
    const timeoutMs = 2 * (this.#internals.options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs);
    return this.#request((id) => ({ type: 'read', tab: this.tab, id, key, fresh }), {
      signal,
      timeoutMs,
      call: undefined,
    });
  }

  callTool(variables: CallToolVariables): Promise<CallToolResult> {
    const { options } = this.#internals;
    const timeoutMs =
      (options.toolTimeoutMs ?? 120_000) + (options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs);
    const call: WireCall = {
      name: variables.name,
      ...(variables.arguments && { arguments: variables.arguments }),
      progress: variables.onProgress !== undefined,
    };
    return this.#request((id) => ({ type: 'call', tab: this.tab, id, variables: call }), {
      signal: variables.signal,
      timeoutMs,
      call: variables,
    }) as Promise<CallToolResult>;
  }

  interest(): void {
    if (this.#interestQueued || this.#leading) return;
    this.#interestQueued = true;
    queueMicrotask(() => {
      this.#interestQueued = false;
      if (this.#left || this.#leading || this.#leader === undefined) return;
      this.#send({ type: 'interest', tab: this.tab, keys: this.#heldKeys() });
    });
  }

  isCovered(uri: string): boolean {
    return this.#covered.has(uri);
  }

  isListCovered(list: NotifiedList): boolean {
    return this.#listsCovered.has(list);
  }

  // ── messages ───────────────────────────────────────────────────────────────

  #send(message: TabMessage): void {
    if (this.#left && message.type !== 'bye') return;
    try {
      this.#channel.postMessage(message);
    } catch {
      // A closed channel (the page is going away): nothing to tell anyone.
    }
  }

  #receive(message: TabMessage): void {
    if (this.#left || typeof message !== 'object' || message === null) return;
    if (this.#leading) this.#receiveAsLeader(message);
    else this.#receiveAsFollower(message);
  }

  #receiveAsFollower(message: TabMessage): void {
    switch (message.type) {
      case 'leader':
        this.#follow(message.tab, message.handovers);
        break;
      case 'events':
        if (message.to !== undefined && message.to !== this.tab) return;
        for (const event of message.events) {
          if (event.type === 'coverage') {
            for (const uri of event.acknowledged) this.#covered.add(uri);
            for (const uri of event.lost) this.#covered.delete(uri);
            this.#listsCovered = new Set(event.lists);
          }
          this.#internals.bus.dispatch(event);
        }
        break;
      case 'data':
        this.#apply(message.key, message.data, message.updatedAt);
        break;
      case 'progress':
        if (message.to === this.tab)
          this.#pending.get(message.id)?.call?.onProgress?.(message.progress);
        break;
      case 'reply': {
        const pending = message.to === this.tab ? this.#take(message.id) : undefined;
        if (!pending) return;
        if (message.error) {
          pending.reject(revive(message.error));
          return;
        }
        if (pending.request.type === 'read' && message.updatedAt !== undefined) {
          const query = this.#find(pending.request.key);
          if (query) this.#applied.set(query, message.updatedAt);
        }
        pending.resolve(message.value);
        break;
      }
      case 'group':
        this.#tabs = message.tabs;
        this.#handovers = message.handovers;
        this.#emitTabs();
        break;
    }
  }

  #receiveAsLeader(message: TabMessage): void {
    switch (message.type) {
      case 'hello': {
        this.#members.set(message.tab, { keys: [], since: Date.now() });
        this.#send({ type: 'leader', tab: this.tab, handovers: this.#handovers });
        const at = Date.now();
        const facts = this.#internals
          .facts()
          .filter((fact) => FORWARDED.has(fact.type))
          .map((fact) => ({ ...fact, at }) as McpEvent);
        this.#send({ type: 'events', to: message.tab, events: facts });
        this.#groupChanged();
        break;
      }
      case 'interest': {
        const keys = message.keys.filter((key) => this.#isOurs(key));
        const member = this.#members.get(message.tab);
        this.#members.set(message.tab, { keys, since: member?.since ?? Date.now() });
        this.#reconcile();
        if (!member) this.#groupChanged();
        break;
      }
      case 'bye':
        if (this.#members.delete(message.tab)) {
          this.#reconcile();
          this.#groupChanged();
        }
        break;
      case 'read':
        void this.#serveRead(message.tab, message.id, message.key, message.fresh);
        break;
      case 'call':
        void this.#serveCall(message.tab, message.id, message.variables);
        break;
      case 'cancel':
        this.#calls
          .get(`${message.tab}/${message.id}`)
          ?.abort(new McpQueryError('SUPERSEDED', 'the tab that made the call cancelled it'));
        break;
      case 'leader':
        // Two leaders cannot hold one lock; a stale message from a previous one is ignored.
        break;
    }
  }

  // ── as a follower ─────────────────────────────────────────────────────────

  #request(
    make: (id: number) => Request,
    options: {
      signal: AbortSignal | undefined;
      timeoutMs: number;
      call: CallToolVariables | undefined;
    },
  ): Promise<unknown> {
    const { signal, timeoutMs, call } = options;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      this.#nextId += 1;
      const id = this.#nextId;
      const onAbort = () => {
        const taken = this.#take(id);
        if (taken?.sentTo !== undefined && taken.request.type === 'call') {
          this.#send({ type: 'cancel', tab: this.tab, id });
        }
        taken?.reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        this.#take(id)?.reject(
          new McpQueryError(
            'NOT_CONNECTED',
            `no answer from the tab holding the connection within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      this.#pending.set(id, {
        request: make(id),
        sentTo: undefined,
        call,
        resolve,
        reject,
        done: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      });
      const pending = this.#pending.get(id) as Pending;
      signal?.addEventListener('abort', onAbort, { once: true });
      if (this.#leader !== undefined) this.#sendRequest(pending, this.#leader);
    });
  }

  /** The request `id`, out of the pending set: the one who takes it settles it. */
  #take(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    this.#pending.delete(id);
    pending.done();
    return pending;
  }

  /**
   * The leader changed, or this tab leaves: reads are read again wherever
   * this tab's queries go now (a superseded read is retried by the routed
   * query function); a call that never left this tab runs through `rerun`;
   * one already sent may have run, so it is not repeated but fails.
   */
  #handOver(rerun: ((call: CallToolVariables) => Promise<unknown>) | undefined, why: string): void {
    for (const id of [...this.#pending.keys()]) {
      const pending = this.#take(id) as Pending;
      if (pending.request.type === 'read') {
        pending.reject(new McpQueryError('SUPERSEDED', why));
      } else if (pending.sentTo === undefined && pending.call && rerun) {
        rerun(pending.call).then(pending.resolve, pending.reject);
      } else pending.reject(lostCall());
    }
  }

  #sendRequest(pending: Pending, leader: string): void {
    pending.sentTo = leader;
    this.#send(pending.request);
  }

  /** Another tab leads (a newcomer hears it in answer to its hello; the others on a handover). */
  #follow(leader: string, handovers: number): void {
    if (leader === this.#leader) return;
    this.#leader = leader;
    this.#handovers = handovers;
    // What the previous leader covered says nothing about the new one.
    this.#covered.clear();
    this.#listsCovered = new Set();
    for (const [id, pending] of [...this.#pending]) {
      if (pending.request.type === 'call' && pending.sentTo !== undefined) {
        this.#take(id)?.reject(lostCall());
      } else this.#sendRequest(pending, leader);
    }
    this.interest();
    this.#emitTabs();
  }

  /** What this tab holds: its wanted URIs, and the lists someone here shows. */
  #heldKeys(): QueryKey[] {
    const { keys, desire } = this.#internals;
    const held = desire().uris.map((uri) => keys.resource(uri));
    for (const kind of LIST_KINDS) {
      if ((this.#find(keys.list(kind))?.getObserversCount() ?? 0) > 0) held.push(keys.list(kind));
    }
    return held;
  }

  /** Content the leader read: an entry this tab has takes it, unless it has newer. */
  #apply(key: QueryKey, data: unknown, updatedAt: number): void {
    const query = this.#find(key);
    if (!query || (this.#applied.get(query) ?? 0) >= updatedAt) return;
    this.#applied.set(query, updatedAt);
    this.#internals.queryClient.setQueryData(key, data, { updatedAt });
  }

  // ── as the leader ─────────────────────────────────────────────────────────

  #lead(): void {
    if (this.#left) return;
    this.#leading = true;
    const handover = this.#leader !== undefined;
    if (handover) this.#handovers += 1;
    this.#leader = undefined;
    this.#covered.clear();
    this.#internals.setRemote(undefined);
    this.#handOver((call) => callTool(this.#owner, call), 'this tab holds the connection now');
    const { locks } = this.#settings;
    const unsubscribeBus = this.#internals.bus.subscribe((event) => this.#forward(event));
    const liveness = setInterval(() => void this.#checkLiveness(locks), this.#settings.livenessMs);
    this.#stopLeading.push(unsubscribeBus, () => {
      clearInterval(liveness);
      for (const release of this.#holds.values()) release();
      this.#holds.clear();
      for (const controller of this.#calls.values()) controller.abort();
    });
    this.#send({ type: 'leader', tab: this.tab, handovers: this.#handovers });
    if (!handover) {
      this.#groupChanged();
      return;
    }
    // The other tabs introduce themselves now: count them once, rather
    // than from 1 up, so no tab shows the group shrinking and growing back.
    this.#emitTabs();
    const settle = setTimeout(() => {
      this.#settling = undefined;
      this.#groupChanged();
    }, GROUP_SETTLE_MS);
    this.#settling = settle;
    this.#stopLeading.push(() => clearTimeout(settle));
  }

  async #serveRead(tab: string, id: number, key: QueryKey, fresh: boolean): Promise<void> {
    const { queryClient } = this.#internals;
    let reply: TabMessage;
    try {
      if (!this.#isOurs(key)) {
        throw new McpQueryError(
          'UNKNOWN_KEY',
          `not an MCP key of this group: ${JSON.stringify(key)}`,
        );
      }
      // One flight per key for every tab; cached content the leader's
      // coverage keeps fresh is answered without reading.
      const value = await queryClient.fetchQuery({
        queryKey: key,
        retry: false,
        ...(fresh && { staleTime: 0 }),
      });
      reply = {
        type: 'reply',
        to: tab,
        id,
        value,
        updatedAt: queryClient.getQueryState(key)?.dataUpdatedAt,
      };
    } catch (error) {
      reply = { type: 'reply', to: tab, id, error: wire(error) };
    }
    if (this.#leading) this.#send(reply);
  }

  async #serveCall(tab: string, id: number, variables: WireCall): Promise<void> {
    const controller = new AbortController();
    const name = `${tab}/${id}`;
    this.#calls.set(name, controller);
    let reply: TabMessage;
    try {
      const value = await callTool(this.#owner, {
        name: variables.name,
        ...(variables.arguments && { arguments: variables.arguments }),
        signal: controller.signal,
        ...(variables.progress && {
          onProgress: (progress: Progress) =>
            this.#send({ type: 'progress', to: tab, id, progress }),
        }),
      });
      reply = { type: 'reply', to: tab, id, value };
    } catch (error) {
      reply = { type: 'reply', to: tab, id, error: wire(error) };
    } finally {
      this.#calls.delete(name);
    }
    if (this.#leading) this.#send(reply);
  }

  /** Hold, here, every key some other tab holds: the leader's subscriptions are the union. */
  #reconcile(): void {
    const wanted = new Map<string, QueryKey>();
    for (const { keys } of this.#members.values()) {
      for (const key of keys) wanted.set(hashKey(key), key);
    }
    for (const [hash, release] of this.#holds) {
      if (wanted.has(hash)) continue;
      release();
      this.#holds.delete(hash);
    }
    for (const [hash, key] of wanted) {
      if (this.#holds.has(hash)) continue;
      // Cached content is not read on mount: the catch-up after the
      // acknowledgement re-reads it, once (rule 4).
      const observer = new QueryObserver(this.#internals.queryClient, {
        queryKey: key,
        refetchOnMount: false,
        refetchOnWindowFocus: false,
      });
      this.#holds.set(
        hash,
        observer.subscribe(() => {}),
      );
    }
  }

  #forward(event: McpEvent): void {
    if (!FORWARDED.has(event.type) || this.#members.size === 0) return;
    // This tab's own shutdown is not the group's state: the next leader's is.
    if (event.type === 'connection' && event.state.phase === 'closed') return;
    if (event.type === 'status' && event.status === 'closed') return;
    this.#outbox.push(event);
    if (this.#outbox.length > 1) return;
    queueMicrotask(() => {
      const events = this.#outbox;
      this.#outbox = [];
      this.#send({ type: 'events', events });
    });
  }

  /** Tabs that closed without a goodbye (crashed, killed) no longer hold their lock. */
  async #checkLiveness(locks: LocksLike): Promise<void> {
    if (this.#members.size === 0) return;
    const snapshot = await locks.query().catch(() => undefined);
    if (!snapshot || !this.#leading) return;
    const held = new Set((snapshot.held ?? []).map((lock) => lock.name));
    const cutoff = Date.now() - this.#settings.livenessMs;
    let gone = false;
    for (const [tab, member] of this.#members) {
      if (member.since > cutoff || held.has(`${this.#name}|tab|${tab}`)) continue;
      this.#members.delete(tab);
      gone = true;
    }
    if (!gone) return;
    this.#reconcile();
    this.#groupChanged();
  }

  #groupChanged(): void {
    if (this.#settling !== undefined) return;
    this.#tabs = this.#members.size + 1;
    this.#send({ type: 'group', tabs: this.#tabs, handovers: this.#handovers });
    this.#emitTabs();
  }

  // ── both ───────────────────────────────────────────────────────────────────

  #onCacheEvent(event: QueryCacheNotifyEvent): void {
    const { type, query } = event;
    if (!this.#isOurs(query.queryKey)) return;
    if (this.#leading) {
      if (type === 'updated' && event.action.type === 'success' && this.#members.size > 0) {
        const { queryKey, state } = query;
        this.#send({
          type: 'data',
          key: queryKey,
          data: state.data,
          updatedAt: state.dataUpdatedAt,
        });
      }
    } else if (
      (type === 'observerAdded' || type === 'observerRemoved') &&
      this.#internals.keys.listOf(query.queryKey) !== undefined
    ) {
      this.interest();
    }
  }

  #isOurs(key: unknown): key is QueryKey {
    if (!Array.isArray(key)) return false;
    const { keys } = this.#internals;
    return keys.uriOf(key) !== undefined || keys.listOf(key) !== undefined;
  }

  #find(key: QueryKey): Query | undefined {
    return this.#internals.queryClient.getQueryCache().find({ queryKey: key, exact: true });
  }

  /** Where this tab stands in the group, as an event. */
  fact(): Extract<McpEventInput, { type: 'tabs' }> {
    return { type: 'tabs', leader: this.#leading, tabs: this.#tabs, handovers: this.#handovers };
  }

  #emitTabs(): void {
    this.#internals.bus.emit(this.fact());
  }
}

function lostCall(): McpQueryError {
  return new McpQueryError(
    'CONNECTION_LOST',
    'the tab holding the connection went away during the call; it may or may not have run',
  );
}

function wire(error: unknown): WireError {
  const {
    name = 'Error',
    message = String(error),
    code,
  } = (error ?? {}) as {
    name?: string;
    message?: string;
    code?: unknown;
  };
  return {
    name,
    message,
    ...((typeof code === 'string' || typeof code === 'number') && { code }),
  };
}

function revive(error: WireError): Error {
  if (error.name === 'McpQueryError' && typeof error.code === 'string') {
    return new McpQueryError(error.code as McpQueryErrorCode, error.message);
  }
  return Object.assign(new Error(error.message), {
    name: error.name,
    ...(error.code !== undefined && { code: error.code }),
  });
}
