import type { CallToolResult, Client, LoggingLevel } from '@modelcontextprotocol/client';
import type { QueryKey } from '@tanstack/query-core';
import { defineCompletions } from '../core/completions';
import { McpQueryError } from '../core/errors';
import type { NotifiedList } from '../core/lists';
import { definePrompts } from '../core/prompts';
import { defineServerLog } from '../core/serverLog';
import { defineTasks } from '../core/tasks';
import { invalidDuration } from '../core/timerMs';
import { defineToolCalls } from '../core/tools';
import type {
  CallToolVariables,
  LocalUpstreamControl,
  McpAction,
  TabContext,
  TabSharingOption,
  Upstream,
} from '../core/upstream';
import { Waiters } from '../core/waiters';
import type { Settings } from './link';
import { Membership } from './membership';
import type { ChannelLike, LocksLike } from './protocol';

export interface ShareAcrossTabsOptions {
  /** The lock manager that elects the leader. Default: `navigator.locks`. */
  locks?: LocksLike;
  /** Opens the channel the tabs talk over. Default: `new BroadcastChannel(name)`. */
  channel?: (name: string) => ChannelLike;
  /**
   * How often the leader also looks for tabs that closed without saying goodbye (it learns of
   * them at once from their locks; this is the fallback). Default 2000 ms.
   */
  livenessMs?: number;
  /** Where `pagehide` is heard, so a page that goes away says goodbye. Default: the window. */
  page?: PageLike;
}

/** The part of `window` used here. */
export interface PageLike {
  addEventListener(type: 'pagehide', listener: (event: Event) => void): void;
  removeEventListener(type: 'pagehide', listener: (event: Event) => void): void;
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
  // A sweep more often than every 100 ms (or NaN: every tick) would only burn the leader's CPU.
  const invalid = invalidDuration('livenessMs', options.livenessMs, 100);
  if (invalid) throw invalid;
  // The leading tab serves every tab's keys, and relays every event, whatever its own page
  // imported: prompts, tool calls, completions, tasks and log messages are all known here.
  definePrompts();
  defineToolCalls();
  defineCompletions();
  defineTasks();
  defineServerLog();
  return {
    upstream(local, context) {
      const locks =
        options.locks ?? (globalThis.navigator as { locks?: LocksLike } | undefined)?.locks;
      const open =
        options.channel ??
        (typeof BroadcastChannel === 'function'
          ? (name: string) => new BroadcastChannel(name) as unknown as ChannelLike
          : undefined);
      if (!locks || !open || !context.identity().connection.startsWith('url:')) return local;
      const page =
        options.page ??
        (typeof document === 'undefined' ? undefined : (globalThis as unknown as PageLike));
      const settings = { locks, open, livenessMs: options.livenessMs ?? 2000 };
      return new SharedUpstream(local, context, settings, page);
    },
  };
}

/**
 * The upstream of a tab that shares: its membership of the group of its
 * current identity, from `start()` (nothing is opened before: the
 * McpCacheSync may be built during a render) until the McpCacheSync ends.
 */
class SharedUpstream implements Upstream {
  readonly #local: LocalUpstreamControl;
  readonly #context: TabContext;
  readonly #settings: Settings;
  readonly #page: PageLike | undefined;
  #membership: Membership | undefined;
  #logLevel: LoggingLevel | undefined;
  readonly #waiters = new Waiters();

  constructor(
    local: LocalUpstreamControl,
    context: TabContext,
    settings: Settings,
    page: PageLike | undefined,
  ) {
    this.#local = local;
    this.#context = context;
    this.#settings = settings;
    this.#page = page;
  }

  start(): void {
    if (this.#membership) return;
    const context = this.#context;
    const join = () => new Membership(this.#local, context, this.#settings, () => this.#logLevel);
    this.#membership = join();
    context.addFacts(() => [(this.#membership as Membership).fact()]);
    // Another identity is another group: private data never crosses identities.
    context.onIdentity(() => {
      const previous = this.#membership as Membership;
      this.#membership = join();
      previous.leave(this.#membership);
    });
    // A page that goes away says goodbye at once: the leader's liveness check runs on a
    // timer, which browsers throttle in background tabs. A page the back/forward cache keeps
    // (`persisted`) may come back, so it stays.
    const onPageHide = (event: Event) => {
      if (!(event as { persisted?: boolean }).persisted) this.#membership?.pageHidden();
    };
    this.#page?.addEventListener('pagehide', onPageHide);
    context.signal.addEventListener(
      'abort',
      () => this.#page?.removeEventListener('pagehide', onPageHide),
      { once: true },
    );
    this.#waiters.recheck();
  }

  async query(key: QueryKey, signal: AbortSignal): Promise<unknown> {
    return (await this.#joined(signal)).query(key, signal);
  }

  async callTool(variables: CallToolVariables): Promise<CallToolResult> {
    return (await this.#joined(variables.signal)).callTool(variables);
  }

  async request(method: McpAction, params: Record<string, unknown>, signal?: AbortSignal) {
    return (await this.#joined(signal)).request(method, params, signal);
  }

  interest(): void {
    this.#membership?.interest();
  }

  setLogLevel(level: LoggingLevel | undefined): void {
    this.#logLevel = level;
    this.#membership?.logLevelChanged();
  }

  isCovered(uri: string): boolean {
    return this.#membership?.isCovered(uri) ?? false;
  }

  isListCovered(list: NotifiedList): boolean {
    return this.#membership?.isListCovered(list) ?? false;
  }

  async client(signal?: AbortSignal): Promise<Client> {
    return (await this.#joined(signal)).client(signal);
  }

  readyClient(): Client | undefined {
    return this.#membership?.readyClient();
  }

  dispose(): Promise<void> {
    this.#membership?.leave(undefined);
    this.#waiters.releaseAll();
    return this.#local.dispose();
  }

  /**
   * The membership, once this tab has joined: a query can run before the
   * provider mounts (a child's effect runs first), and waits for it, bounded.
   */
  async #joined(signal: AbortSignal | undefined): Promise<Membership> {
    this.#context.demand();
    if (!this.#membership) {
      const timeoutMs = this.#context.requestTimeoutMs;
      await this.#waiters.wait(() => this.#membership !== undefined, { timeoutMs, signal });
    }
    signal?.throwIfAborted();
    if (this.#membership) return this.#membership;
    throw new McpQueryError(
      'NOT_STARTED',
      'the MCP connection was never started (McpCacheSync not mounted?)',
    );
  }
}
