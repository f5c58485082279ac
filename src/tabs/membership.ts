import type { CallToolResult } from '@modelcontextprotocol/client';
import type { QueryCacheNotifyEvent, QueryKey } from '@tanstack/query-core';
import { McpQueryError } from '../core/errors';
import type { McpEventInput } from '../core/events';
import type { Remote, SyncInternals } from '../core/internals';
import type { NotifiedList } from '../core/lists';
import { type CallToolVariables, callTool } from '../core/tools';
import { Waiters } from '../core/waiters';
import { Follower, type FollowerMessage } from './follower';
import { Leader, type LeaderMessage, tabLock } from './leader';
import { type GroupLink, isGroupKey, type Settings } from './link';
import type { ChannelLike, TabMessage } from './protocol';

/**
 * This tab's place in one sharing group: a follower (the `Remote` its
 * McpCacheSync reads through) until it wins the leader lock, then the
 * leader until it leaves. The group is named by the server, the scope and
 * the identity, so private data never crosses identities (docs/design.md,
 * rule 14).
 */
export class Membership implements Remote {
  readonly tab = Math.random().toString(36).slice(2) + Date.now().toString(36);
  readonly #internals: SyncInternals;
  readonly #channel: ChannelLike;
  readonly #link: GroupLink;
  readonly #follower: Follower;
  #leader: Leader | undefined;
  /** Set from the moment this tab won the leader lock. */
  #leading = false;
  /** Aborted on leave: cancels lock requests in the queue and releases the locks held. */
  readonly #leaving = new AbortController();
  readonly #unsubscribeCache: () => void;
  #left = false;
  /** `leading()` calls waiting for this tab to lead or hear of a leader. */
  readonly #waiters = new Waiters();
  #handovers = 0;
  #tabs = 1;

  constructor(owner: object, internals: SyncInternals, settings: Settings) {
    this.#internals = internals;
    const { connection, auth } = internals.identity();
    const name = `mcp-react-query|${connection}|${internals.keys.scope ?? ''}|${auth ?? ''}`;
    this.#channel = settings.open(name);
    this.#link = {
      tab: this.tab,
      name,
      owner,
      internals,
      settings,
      send: (message) => this.#send(message),
    };
    this.#follower = new Follower(this.#link);
    this.#channel.addEventListener('message', (event) => this.#receive(event.data as TabMessage));
    const unsubscribeCache = internals.queryClient
      .getQueryCache()
      .subscribe((event) => this.#onCacheEvent(event));
    // A component here starting or stopping to answer elicitations tells the leader.
    const stopAnswering = internals.options.serverRequests?.onAnswering(() => this.interest());
    this.#unsubscribeCache = () => {
      unsubscribeCache();
      stopAnswering?.();
    };
    internals.setRemote(this);

    const signal = this.#leaving.signal;
    const held = new Promise((resolve) => signal.addEventListener('abort', resolve));
    const { locks } = settings;
    locks.request(tabLock(name, this.tab), { signal }, () => held).catch(() => {});
    locks
      .request(`${name}|leader`, { signal }, () => {
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
    this.#leader?.stop();
    if (!this.#leading) this.#follower.unfollow();
    this.#unsubscribeCache();
    // Reads go again through whatever serves this tab now (the routed query
    // function retries a superseded read); a call not yet sent goes to the
    // successor; one already sent may have run, so it is not repeated.
    this.#follower.handOver(
      successor && ((call) => successor.callTool(call)),
      'this tab left its sharing group',
    );
    this.#leaving.abort();
    this.#channel.close();
    this.#waiters.recheck();
  }

  /**
   * The page is going away for good. A follower leaves now; the leader keeps its place until
   * the page is gone (its locks go with it, and the next tab takes over then).
   */
  pageHidden(): void {
    if (!this.#leading) this.leave(undefined);
  }

  // ── Remote: what the McpCacheSync of a follower tab does through the leader ──

  read(key: QueryKey, signal: AbortSignal): Promise<unknown> {
    return this.#follower.read(key, signal);
  }

  callTool(variables: CallToolVariables): Promise<CallToolResult> {
    return this.#follower.callTool(variables);
  }

  interest(): void {
    if (!this.#left && !this.#leading) this.#follower.interest();
  }

  isCovered(uri: string): boolean {
    return this.#follower.isCovered(uri);
  }

  isListCovered(list: NotifiedList): boolean {
    return this.#follower.isListCovered(list);
  }

  async leading(signal: AbortSignal | undefined, timeoutMs: number): Promise<void> {
    // At start every tab waits for the election; a leader is known within a message or two.
    const settled = () => this.#leading || this.#left || this.#follower.following;
    if (!settled()) await this.#waiters.wait(settled, { timeoutMs, signal });
    signal?.throwIfAborted();
    if (this.#leading || this.#left) return;
    throw this.#follower.following
      ? new McpQueryError(
          'OTHER_TAB',
          'another tab holds the connection (shareAcrossTabs), and its SDK client; callTool, useCallTool and the hooks go through that tab',
        )
      : new McpQueryError(
          'NOT_CONNECTED',
          `no tab of the sharing group took the connection within ${timeoutMs} ms`,
        );
  }

  /** Where this tab stands in the group, as an event. */
  fact(): Extract<McpEventInput, { type: 'tabs' }> {
    return {
      type: 'tabs',
      leader: this.#leading,
      tabs: this.#tabs,
      handovers: this.#handovers,
    };
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
    if (this.#leading) {
      // A 'leader' message here is a stale one of a previous leader: two cannot hold one lock.
      if (isLeaderMessage(message)) this.#leader?.receive(message);
      return;
    }
    if (message.type === 'leader') {
      if (this.#follower.follow(message.tab)) {
        this.#handovers = message.handovers;
        this.#emitTabs();
        this.#waiters.recheck();
      }
    } else if (message.type === 'group') {
      this.#tabs = message.tabs;
      this.#handovers = message.handovers;
      this.#emitTabs();
    } else if (isFollowerMessage(message)) this.#follower.receive(message);
  }

  #lead(): void {
    if (this.#left) return;
    this.#leading = true;
    const handover = this.#follower.unfollow();
    if (handover) this.#handovers += 1;
    this.#internals.setRemote(undefined);
    this.#follower.handOver(
      (call) => callTool(this.#link.owner, call),
      'this tab holds the connection now',
    );
    this.#leader = new Leader(this.#link, {
      handovers: this.#handovers,
      handover,
      onGroup: (tabs) => {
        this.#tabs = tabs;
        this.#emitTabs();
      },
    });
    // Until the group is counted again, this tab says at once that it leads.
    if (handover) this.#emitTabs();
    this.#waiters.recheck();
  }

  #onCacheEvent(event: QueryCacheNotifyEvent): void {
    const { type, query } = event;
    if (!isGroupKey(this.#internals, query.queryKey)) return;
    if (this.#leading) this.#leader?.onCacheEvent(event);
    else if (
      (type === 'observerAdded' || type === 'observerRemoved') &&
      this.#internals.keys.listOf(query.queryKey) !== undefined
    ) {
      this.interest();
    }
  }

  #emitTabs(): void {
    this.#internals.bus.emit(this.fact());
  }
}

function isLeaderMessage(message: TabMessage): message is LeaderMessage {
  return ['hello', 'interest', 'bye', 'read', 'call', 'cancel', 'answer'].includes(message.type);
}

function isFollowerMessage(message: TabMessage): message is FollowerMessage {
  return ['events', 'data', 'progress', 'reply', 'elicitations'].includes(message.type);
}
