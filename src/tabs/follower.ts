import type { CallToolResult } from '@modelcontextprotocol/client';
import { hashKey, type Query, type QueryKey } from '@tanstack/query-core';
import type { NotifiedList } from '../core/lists';
import type { SharedElicitation } from '../core/serverRequests';
import type { CallToolVariables, McpAction, Upstream } from '../core/upstream';
import { fitsKey, isLiveRequest, misfit } from './keyShapes';
import type { GroupLink } from './link';
import { fromWire, type TabMessage, type WireCall } from './protocol';
import { fitsCall, isShownElicitation, misshapenResult, tooBigToShare } from './replyShapes';
import { Requests } from './requests';
import { readBoundMs } from './serving';
import { isKey, MAX_KEYS_PER_TAB } from './validate';

/** How far ahead of this tab's clock content may be dated (one browser, one clock: coarsening). */
const MAX_AHEAD_MS = 1000;

/** Messages only a follower acts on. */
export type FollowerMessage = Extract<
  TabMessage,
  { type: 'events' | 'data' | 'progress' | 'working' | 'reply' | 'elicitations' }
>;

/**
 * A tab that goes through the leader: its reads and calls as requests that
 * wait for the leader's reply (and move to the next leader on a handover),
 * the leader's coverage as its own, and the content the leader read taken
 * into this tab's cache without reading again.
 */
export class Follower {
  readonly #link: GroupLink;
  #leader: string | undefined;
  readonly #requests: Requests;
  /** The leader's coverage, and the URIs it declined, as its forwarded events said. */
  readonly #covered = new Set<string>();
  #listsCovered = new Set<NotifiedList>();
  readonly #declined = new Set<string>();
  /**
   * When each entry last took content from the leader: older content is not taken. Content of
   * the same millisecond is (two reads can end in one, or in one coarsened `Date.now()`).
   */
  readonly #applied = new WeakMap<Query, number>();
  #interestQueued = false;

  constructor(link: GroupLink) {
    this.#link = link;
    this.#requests = new Requests(link.tab, (message) => link.send(message));
  }

  read(key: QueryKey, signal: AbortSignal): Promise<unknown> {
    const { context, tab } = this.#link;
    // The leader refuses a key past the bounds of a tab message, unanswered: fail now.
    if (!isKey(key)) return Promise.reject(tooBigToShare(key));
    const fresh = this.#find(key)?.state.isInvalidated === true;
    // The leader's read may take long (a flight of its own, retried, each try bounded): this
    // waits while the leader says it still runs it, up to the longest it may take.
    return this.#requests.make((id) => ({ type: 'read', tab, id, key, fresh }), {
      signal,
      quietMs: this.#quietMs(),
      boundMs: readBoundMs(context.requestTimeoutMs),
    });
  }

  callTool(variables: CallToolVariables): Promise<CallToolResult> {
    const { context, tab } = this.#link;
    // The leader times the call (restarted by progress): this waits while the leader says it
    // still runs it, or sends its progress, up to the longest it may take (a wait for its
    // connection, a first tool list and the call, each bounded; one requestTimeoutMs more for
    // the messages).
    const maxTotal = variables.maxTotalTimeoutMs ?? context.toolMaxTotalTimeoutMs;
    const boundMs = 2 * maxTotal + 2 * context.requestTimeoutMs;
    const { name, arguments: args, timeoutMs: callTimeout, maxTotalTimeoutMs } = variables;
    // Whole milliseconds on the wire (`seconds * 1000` seldom is one; callTool checked the
    // range): a leader of an earlier version drops a call with a fraction, unanswered.
    const call: WireCall = {
      name,
      ...(args && { arguments: args }),
      ...(callTimeout !== undefined && { timeoutMs: Math.ceil(callTimeout) }),
      ...(maxTotalTimeoutMs !== undefined && { maxTotalTimeoutMs: Math.ceil(maxTotalTimeoutMs) }),
      progress: variables.onProgress !== undefined,
    };
    return this.#requests.make((id) => ({ type: 'call', tab, id, variables: call }), {
      signal: variables.signal,
      quietMs: this.#quietMs(),
      boundMs,
      call: variables,
    }) as Promise<CallToolResult>;
  }

  /** A task request, run in the leading tab (like a call: not sent again to the next leader, run here if this tab wins before sending it). */
  request(
    method: McpAction,
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const { context, tab } = this.#link;
    const call: WireCall = { name: method, arguments: params, progress: false, action: true };
    return this.#requests.make((id) => ({ type: 'call', tab, id, variables: call }), {
      signal,
      quietMs: this.#quietMs(),
      // The leader's wait for its connection, then the request; one more for the messages.
      boundMs: 3 * context.requestTimeoutMs,
      action: { method, params },
    });
  }

  /**
   * How long a request waits without a sign of the leader working on it (it asks meanwhile, and
   * the leader answers for the reads and calls it still runs): then the leader is taken to be
   * stuck, whatever the request's own bound.
   */
  #quietMs(): number {
    return 2 * this.#link.context.requestTimeoutMs;
  }

  /** Tell the leader, once per tick, every key this tab holds. */
  interest(): void {
    if (this.#interestQueued) return;
    this.#interestQueued = true;
    queueMicrotask(() => {
      this.#interestQueued = false;
      if (this.#leader === undefined) return;
      this.#link.send({
        type: 'interest',
        tab: this.#link.tab,
        keys: this.#heldKeys(),
        answering: this.#link.context.serverRequests?.answering === true,
        ...(this.#link.logLevel() && { logLevel: this.#link.logLevel() }),
      });
    });
  }

  isCovered(uri: string): boolean {
    return this.#covered.has(uri);
  }

  isListCovered(list: NotifiedList): boolean {
    return this.#listsCovered.has(list);
  }

  /** Whether another tab is known to lead. */
  get following(): boolean {
    return this.#leader !== undefined;
  }

  /**
   * Another tab leads (a newcomer hears it in answer to its hello; the
   * others on a handover). Returns whether that is news.
   */
  follow(leader: string): boolean {
    if (leader === this.#leader) return false;
    this.#leader = leader;
    // What the previous leader covered, declined or asked says nothing about the new one.
    this.#drop();
    this.#mirror([]);
    this.#requests.follow(leader);
    this.interest();
    return true;
  }

  /** This tab leads now, or leaves: it follows nobody. Returns whether it followed someone. */
  unfollow(): boolean {
    const followed = this.#leader !== undefined;
    this.#leader = undefined;
    this.#requests.follow(undefined);
    this.#drop();
    this.#mirror([]);
    return followed;
  }

  /**
   * Forget the leader's coverage and declined URIs, and say so as the session would (a leader
   * that crashed says nothing): every consumer of this tab's events (diagnostics, devtools,
   * useMcpEvents) sees the loss. Emitted before the `tabs` event that names the new leader.
   */
  #drop(): void {
    const { bus } = this.#link.context;
    const lost = [...this.#covered];
    const declined = [...this.#declined];
    const lists = this.#listsCovered.size;
    this.#covered.clear();
    this.#listsCovered = new Set();
    this.#declined.clear();
    if (lost.length > 0 || lists > 0) {
      bus.emit({ type: 'coverage', acknowledged: [], lost, lists: [] });
    }
    if (declined.length > 0) {
      bus.emit({ type: 'declined', changes: declined.map((uri) => [uri, null]) });
    }
  }

  receive(message: FollowerMessage): void {
    const { context, tab } = this.#link;
    switch (message.type) {
      case 'events':
        if (message.to !== undefined && message.to !== tab) return;
        for (const event of message.events) {
          if (event.type === 'coverage') {
            for (const uri of event.acknowledged) this.#covered.add(uri);
            for (const uri of event.lost) this.#covered.delete(uri);
            this.#listsCovered = new Set(event.lists);
          } else if (event.type === 'declined') {
            for (const [uri, reason] of event.changes) {
              if (reason === null) this.#declined.delete(uri);
              else this.#declined.add(uri);
            }
          }
          context.bus.dispatch(event);
        }
        break;
      case 'data':
        this.#apply(message.key, message.data, message.updatedAt);
        break;
      case 'progress':
        if (message.to !== tab) return;
        // Progress is a sign of the leader working on the call, as its `working` is.
        this.#requests.working([message.id]);
        this.#requests.get(message.id)?.call?.onProgress?.(message.progress);
        break;
      case 'working':
        if (message.to === tab) this.#requests.working(message.ids);
        break;
      case 'elicitations':
        if (message.to === undefined || message.to === tab) this.#mirror(message.items);
        break;
      case 'reply': {
        const pending =
          message.to === tab ? this.#requests.replied(message.id, message.error) : undefined;
        if (!pending) return;
        if (message.error) {
          pending.reject(fromWire(message.error));
          return;
        }
        if (pending.request.type === 'call') {
          // What the app is given as the call's result (the leader's SDK checked its own).
          if (!fitsCall(pending.request.variables, message.value)) {
            // It may be a script's: the call may still run there, and nobody waits for it now.
            this.#link.send({ type: 'cancel', tab, id: message.id });
            pending.reject(misshapenResult());
            return;
          }
        }
        if (pending.request.type === 'read') {
          // Only what a read of the key could return, dated no later than now, is taken.
          const { key } = pending.request;
          const refused =
            misfit(context.keys, key, message.value) ?? this.#future(message.updatedAt);
          if (refused) {
            pending.reject(refused);
            return;
          }
          const query = this.#find(key);
          if (query && message.updatedAt !== undefined) {
            this.#applied.set(query, message.updatedAt);
          }
        }
        pending.resolve(message.value);
        break;
      }
    }
  }

  /** This tab leads now, or leaves: Requests.handOver. */
  handOver(
    to: Pick<Upstream, 'query' | 'callTool' | 'request'> | undefined,
    why: string,
    unsent?: () => Error,
  ): void {
    this.#requests.handOver(to, why, unsent);
  }

  /** The leader's pending elicitations, shown here; an answer goes back to it. */
  #mirror(items: SharedElicitation[]): void {
    // Only what this tab's own connection would have shown (a form, a safe link).
    const shown = items.filter((item) => isShownElicitation(item.params));
    this.#link.context.serverRequests?.mirror(shown, (id, result) =>
      this.#link.send({ type: 'answer', tab: this.#link.tab, id, result }),
    );
  }

  /**
   * What this tab holds: the lists, prompts and tasks someone here shows (the leader holds them
   * too, so they stay live for this tab), and its wanted URIs; at most MAX_KEYS_PER_TAB (the
   * leader refuses more whole), the shown lists first.
   */
  #heldKeys(): QueryKey[] {
    const { keys, desire, queryClient } = this.#link.context;
    const held: QueryKey[] = [];
    for (const query of queryClient.getQueryCache().getAll()) {
      const key = query.queryKey;
      const live = keys.listOf(key) !== undefined || isLiveRequest(keys, key);
      if (live && query.getObserversCount() > 0 && isKey(key)) held.push(key);
    }
    for (const uri of desire().uris) {
      if (held.length >= MAX_KEYS_PER_TAB) break;
      const key = keys.resource(uri);
      if (isKey(key)) held.push(key);
    }
    return held.slice(0, MAX_KEYS_PER_TAB);
  }

  /**
   * Content the leader read: an entry this tab has takes it, unless it has
   * newer, but only for what this tab asked about (it holds the key, or is
   * reading it) and only content of the right shape: the channel is open to
   * every script of the origin, and no message may empty or plant an entry.
   */
  #apply(key: QueryKey, data: unknown, updatedAt: number): void {
    const query = this.#find(key);
    if (!query || (this.#applied.get(query) ?? 0) > updatedAt || this.#future(updatedAt)) return;
    if (!this.#asked(query) || !fitsKey(this.#link.context.keys, key, data)) return;
    this.#applied.set(query, updatedAt);
    this.#link.context.queryClient.setQueryData(key, data, { updatedAt });
  }

  /**
   * A date ahead of this tab's clock (the tabs share one): no read ended then, and content
   * dated so would shut out every later read of its key.
   */
  #future(updatedAt: number | undefined): Error | undefined {
    if (updatedAt === undefined || updatedAt <= this.#link.context.clock.now() + MAX_AHEAD_MS) {
      return undefined;
    }
    return new Error(
      `a reply from the tab holding the connection dated ${updatedAt}, ahead of this tab's clock, was refused`,
    );
  }

  #asked(query: Query): boolean {
    const { keys, wants } = this.#link.context;
    const uri = keys.uriOf(query.queryKey);
    if (uri !== undefined ? wants(uri) : query.getObserversCount() > 0) return true;
    for (const { request } of this.#requests.values()) {
      if (request.type === 'read' && hashKey(request.key) === query.queryHash) return true;
    }
    return false;
  }

  #find(key: QueryKey): Query | undefined {
    return this.#link.context.queryClient.getQueryCache().get(hashKey(key));
  }
}
