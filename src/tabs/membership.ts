import type { CallToolResult, Client, LoggingLevel } from '@modelcontextprotocol/client';
import type { QueryCacheNotifyEvent, QueryKey } from '@tanstack/query-core';
import { identityChanged, McpQueryError } from '../core/errors';
import type { McpEventInput } from '../core/events';
import { delay, whileAlive } from '../core/lifetime';
import type { NotifiedList } from '../core/lists';
import type {
  CallToolVariables,
  LocalUpstreamControl,
  McpAction,
  TabContext,
} from '../core/upstream';
import { Waiters } from '../core/waiters';
import { Follower, type FollowerMessage } from './follower';
import { isLiveRequest } from './keyShapes';
import { Leader, type LeaderMessage } from './leader';
import { type GroupLink, groupName, isGroupKey, type Settings } from './link';
import { tabLock } from './members';
import type { ChannelLike, TabMessage } from './protocol';
import { parseTabMessage } from './validate';

/** A tab that knows no leader says hello again after this long, then twice as long, up to the max. */
const HELLO_AGAIN_MS = 1000;
const HELLO_AGAIN_MAX_MS = 60_000;
/** The most hellos a tab says before it waits to hear a leader (or to lead). */
const HELLO_ATTEMPTS = 10;

/**
 * This tab's place in one sharing group: a follower (reading, holding and
 * calling through the leader) until it wins the leader lock, then the
 * leader (its own connection serves this tab and the others) until it
 * leaves. Whether this tab leads is decided here and nowhere else. The
 * group is named by the server, the scope and the identity, so private
 * data never crosses identities (docs/design.md, rule 14).
 */
export class Membership {
  readonly tab: string;
  readonly #local: LocalUpstreamControl;
  readonly #context: TabContext;
  readonly #channel: ChannelLike;
  readonly #link: GroupLink;
  readonly #follower: Follower;
  #leader: Leader | undefined;
  /** Set from the moment this tab won the leader lock. */
  #leading = false;
  /** Aborted on leave: cancels lock requests in the queue and releases the locks held. */
  readonly #leaving = new AbortController();
  readonly #unsubscribeCache: () => void;
  /** `leading()` calls waiting for this tab to lead or hear of a leader. */
  readonly #waiters = new Waiters();
  #handovers = 0;
  #tabs = 1;
  /** The leader this tab follows said it does not serve it (its roster full), until welcomed. */
  #stranger = false;
  /** The hellos being said now: a later round stops an earlier one. */
  #hellos = 0;
  /** This tab left for the group of another identity: calls still made here fail. */
  #superseded = false;

  /** `logLevel`: what this tab's `useServerLog` asks for now. */
  constructor(
    local: LocalUpstreamControl,
    context: TabContext,
    settings: Settings,
    logLevel: () => LoggingLevel | undefined,
  ) {
    this.#local = local;
    this.#context = context;
    const { clock } = context;
    this.tab = clock.random().toString(36).slice(2) + clock.now().toString(36);
    const name = groupName(context.identity(), context.keys.scope);
    this.#channel = settings.open(name);
    this.#link = {
      tab: this.tab,
      name,
      local,
      context,
      settings,
      send: (message) => this.#send(message),
      logLevel,
    };
    this.#follower = new Follower(this.#link);
    this.#channel.addEventListener(
      'message',
      whileAlive(this.#leaving.signal, (event: { data: unknown }) => {
        const message = parseTabMessage(event.data);
        if (message) this.#receive(message);
      }),
    );
    const unsubscribeCache = context.queryClient
      .getQueryCache()
      .subscribe((event) => this.#onCacheEvent(event));
    // A component here starting or stopping to answer elicitations tells the leader.
    const stopAnswering = context.serverRequests?.onAnswering(() => this.interest());
    this.#unsubscribeCache = () => {
      unsubscribeCache();
      stopAnswering?.();
    };
    // Every tab starts as a follower: only the elected one connects.
    void local.stop();

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
    this.#hello(0);
    this.#emitTabs();
  }

  /**
   * Say hello, and again while this tab neither leads nor knows who does, or the leader it
   * follows does not serve it (a leader whose roster was full refused it, and has room once
   * made-up tabs are dropped): HELLO_AGAIN_MS apart, doubling, at most HELLO_ATTEMPTS hellos in
   * a round. A round ends once a leader is known and serves this tab.
   */
  #hello(attempt: number, round = this.#hellos): void {
    if (round !== this.#hellos || this.#leading) return;
    if (this.#follower.following && !this.#stranger) return;
    if (attempt > 0 || !this.#stranger) this.#send({ type: 'hello', tab: this.tab });
    if (attempt + 1 >= HELLO_ATTEMPTS) return;
    const wait = Math.min(HELLO_AGAIN_MS * 2 ** attempt, HELLO_AGAIN_MAX_MS);
    delay(this.#leaving.signal, wait, () => this.#hello(attempt + 1, round));
  }

  /**
   * The leader answered one of this tab's requests that it does not serve it: say hello again
   * (a new round, the first after HELLO_AGAIN_MS: the request itself just asked to join).
   */
  #refused(): void {
    if (this.#stranger) return;
    this.#stranger = true;
    this.#hellos += 1;
    this.#hello(0);
  }

  /** The leader welcomed this tab: it is served, and learns what this tab holds. */
  #welcomed(): void {
    if (!this.#stranger) return;
    this.#stranger = false;
    this.#follower.interest();
  }

  /**
   * Leave the group (the McpCacheSync was disposed, or the identity changed
   * and `successor` is the membership of the new group).
   */
  leave(successor: Membership | undefined): void {
    if (this.#leaving.signal.aborted) return;
    this.#send({ type: 'bye', tab: this.tab });
    this.#leader?.stop();
    if (!this.#leading) this.#follower.unfollow();
    this.#unsubscribeCache();
    // Reads go to the successor (the next group, of another identity: reads of this one were
    // cancelled with its attachment, and are read again under the new one). A call, made as
    // this identity, never runs as the next: one not sent yet fails; one already sent may have
    // run, so it is not repeated either.
    this.#superseded = successor !== undefined;
    const unsent = successor && identityChanged;
    this.#follower.handOver(successor, 'this tab left its sharing group', unsent);
    this.#leaving.abort();
    this.#channel.close();
    this.#waiters.releaseAll();
  }

  /**
   * The page is going away for good. A follower leaves now; the leader keeps its place until
   * the page is gone (its locks go with it, and the next tab takes over then).
   */
  pageHidden(): void {
    if (!this.#leading) this.leave(undefined);
  }

  // ── the upstream of this tab: its own connection while it leads, else the leader ──

  query(key: QueryKey, signal: AbortSignal): Promise<unknown> {
    return this.#leading ? this.#local.query(key, signal) : this.#follower.read(key, signal);
  }

  /** A call made as this identity, after it changed (in the same task): it does not run. */
  callTool(variables: CallToolVariables): Promise<CallToolResult> {
    if (this.#superseded) return Promise.reject(identityChanged());
    return this.#leading ? this.#local.callTool(variables) : this.#follower.callTool(variables);
  }

  request(method: McpAction, params: Record<string, unknown>, signal?: AbortSignal) {
    if (this.#superseded) return Promise.reject(identityChanged());
    return this.#leading
      ? this.#local.request(method, params, signal)
      : this.#follower.request(method, params, signal);
  }

  interest(): void {
    if (this.#leading) this.#local.interest(this.#context.desire());
    else this.#follower.interest();
  }

  /** This tab's log level changed: the leader asks for it (with the others'), a follower tells it. */
  logLevelChanged(): void {
    if (this.#leading) this.#leader?.reconcile();
    else this.#follower.interest();
  }

  isCovered(uri: string): boolean {
    return this.#leading ? this.#local.isCovered(uri) : this.#follower.isCovered(uri);
  }

  isListCovered(list: NotifiedList): boolean {
    return this.#leading ? this.#local.isListCovered(list) : this.#follower.isListCovered(list);
  }

  readyClient(): Client | undefined {
    return this.#leading ? this.#local.readyClient() : undefined;
  }

  /**
   * The SDK client is in the leading tab only: this settles once this tab
   * leads (its own connection serves then), and fails, clearly, while
   * another tab does, or when none does in time.
   */
  async client(signal: AbortSignal | undefined): Promise<Client> {
    // At start every tab waits for the election; a leader is known within a message or two.
    const settled = () => this.#leading || this.#follower.following;
    const timeoutMs = this.#context.requestTimeoutMs;
    if (!settled()) await this.#waiters.wait(settled, { timeoutMs, signal });
    signal?.throwIfAborted();
    if (this.#leading) return this.#local.client(signal);
    throw this.#follower.following
      ? new McpQueryError(
          'OTHER_TAB',
          'another tab holds the connection (shareAcrossTabs), and its SDK client; callTool, useCallTool and the hooks go through that tab',
        )
      : new McpQueryError(
          'NOT_CONNECTED',
          `no tab of the sharing group holds the connection (waited up to ${timeoutMs} ms)`,
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
    try {
      this.#channel.postMessage(message);
    } catch {
      // A closed channel (this tab left, or the page is going away): nothing to tell anyone.
    }
  }

  #receive(message: TabMessage): void {
    if (this.#leading) {
      // A 'leader' message here is a stale one of a previous leader: two cannot hold one lock.
      if (isLeaderMessage(message)) this.#leader?.receive(message);
      return;
    }
    if (message.type === 'reply' && message.to === this.tab && message.stranger) this.#refused();
    if (message.type === 'events' && message.to === this.tab) this.#welcomed();
    if (message.type === 'leader') {
      if (this.#follower.follow(message.tab)) {
        // Another leader: whether it serves this tab is not known yet.
        this.#stranger = false;
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
    this.#leading = true;
    const handover = this.#follower.unfollow();
    if (handover) this.#handovers += 1;
    this.#local.start();
    this.#local.interest(this.#context.desire());
    this.#follower.handOver(this.#local, 'this tab holds the connection now');
    this.#leader = new Leader(this.#link, {
      handovers: this.#handovers,
      handover,
      onGroup: (tabs) => {
        this.#tabs = tabs;
        this.#emitTabs();
      },
    });
    this.#leader.reconcile();
    // Until the group is counted again, this tab says at once that it leads.
    if (handover) this.#emitTabs();
    this.#waiters.recheck();
  }

  #onCacheEvent(event: QueryCacheNotifyEvent): void {
    const { type, query } = event;
    const { keys } = this.#context;
    if (!isGroupKey(keys, query.queryKey)) return;
    if (this.#leading) this.#leader?.onCacheEvent(event);
    else if (
      (type === 'observerAdded' || type === 'observerRemoved') &&
      (keys.listOf(query.queryKey) !== undefined || isLiveRequest(keys, query.queryKey))
    ) {
      this.interest();
    }
  }

  #emitTabs(): void {
    this.#context.bus.emit(this.fact());
  }
}

function isLeaderMessage(message: TabMessage): message is LeaderMessage {
  const types = ['hello', 'interest', 'bye', 'read', 'call', 'cancel', 'waiting', 'answer'];
  return types.includes(message.type);
}

function isFollowerMessage(message: TabMessage): message is FollowerMessage {
  return ['events', 'data', 'progress', 'working', 'reply', 'elicitations'].includes(message.type);
}
