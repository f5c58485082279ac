import { QueryClient } from '@tanstack/query-core';
import type { McpEvent, McpEventOf } from '../../src/core/events';
import { McpCacheSync, type McpCacheSyncOptions } from '../../src/core/mcpCacheSync';
import {
  type ChannelLike,
  type LocksLike,
  type ShareAcrossTabsOptions,
  shareAcrossTabs,
} from '../../src/tabs';

interface Waiter {
  name: string;
  tab: number;
  callback: () => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * The Web Locks API of one browser profile, in memory: exclusive locks, granted in request order,
 * released when the callback's promise settles, an AbortSignal withdraws a queued request. A tab
 * that crashes loses its locks at once (what a browser does when a renderer dies). Node has no
 * `navigator.locks`; the browser tests use Chromium's own.
 */
export class BrowserLocks {
  readonly #held = new Map<string, Waiter>();
  readonly #queues = new Map<string, Waiter[]>();
  #tabs = 0;

  /** The `navigator.locks` of a new tab, and its crash. */
  tab(): { locks: LocksLike; crash(): void } {
    this.#tabs += 1;
    const tab = this.#tabs;
    const locks: LocksLike = {
      request: (name, { signal }, callback) =>
        new Promise((resolve, reject) => {
          if (signal?.aborted) {
            reject(signal.reason);
            return;
          }
          const waiter: Waiter = { name, tab, callback, resolve, reject };
          signal?.addEventListener('abort', () => {
            const queue = this.#queues.get(name) ?? [];
            const index = queue.indexOf(waiter);
            if (index < 0) return;
            queue.splice(index, 1);
            reject(signal.reason);
          });
          this.#queues.set(name, [...(this.#queues.get(name) ?? []), waiter]);
          this.#grant(name);
        }),
      query: async () => ({ held: [...this.#held.keys()].map((name) => ({ name })) }),
    };
    const crash = () => {
      for (const [name, queue] of this.#queues) {
        this.#queues.set(
          name,
          queue.filter((waiter) => waiter.tab !== tab),
        );
      }
      for (const [name, waiter] of [...this.#held]) {
        if (waiter.tab === tab) this.#release(name, waiter);
      }
    };
    return { locks, crash };
  }

  held(): string[] {
    return [...this.#held.keys()];
  }

  #grant(name: string): void {
    if (this.#held.has(name)) return;
    const next = this.#queues.get(name)?.shift();
    if (!next) return;
    this.#held.set(name, next);
    Promise.resolve()
      .then(next.callback)
      .then(next.resolve, next.reject)
      .finally(() => this.#release(name, next));
  }

  #release(name: string, waiter: Waiter): void {
    if (this.#held.get(name) !== waiter) return;
    this.#held.delete(name);
    this.#grant(name);
  }
}

/**
 * BroadcastChannels of one tab (Node's, which reach every other instance in the process).
 * `freeze()`: the page stops running (frozen, or its code stuck) while it keeps its locks: it
 * hears and says nothing from then on; `deafen()`: it hears nothing but still speaks.
 * `heard(type)`: the messages of `type` it heard.
 */
export function tabChannels() {
  const opened: BroadcastChannel[] = [];
  const log: unknown[] = [];
  let deaf = false;
  let mute = false;
  return {
    open(name: string): ChannelLike {
      const channel = new BroadcastChannel(name);
      opened.push(channel);
      return {
        postMessage: (message) => {
          if (!mute) channel.postMessage(message);
        },
        addEventListener: (type, listener) =>
          channel.addEventListener(type, (event) => {
            if (deaf) return;
            const { data } = event as MessageEvent;
            log.push(data);
            listener({ data });
          }),
        close: () => channel.close(),
      };
    },
    closeAll() {
      for (const channel of opened.splice(0)) channel.close();
    },
    freeze() {
      deaf = true;
      mute = true;
    },
    deafen() {
      deaf = true;
    },
    heard: (type: string) => log.filter((data) => (data as { type?: unknown }).type === type),
  };
}

/**
 * A tab of the browser of `locks`, as a page has one: its own McpCacheSync (of `options`) and
 * QueryClient, sharing through `shareAcrossTabs` over Node's BroadcastChannel, mounted. `tabs()`
 * is the latest `tabs` event it emitted; `close()` ends it.
 */
export function openTab(
  locks: BrowserLocks,
  options: Omit<McpCacheSyncOptions, 'queryClient' | 'shareAcrossTabs'>,
  sharing: ShareAcrossTabsOptions = {},
) {
  const channels = tabChannels();
  const queryClient = new QueryClient();
  const sync = new McpCacheSync({
    queryClient,
    ...options,
    shareAcrossTabs: shareAcrossTabs({
      locks: locks.tab().locks,
      channel: channels.open,
      ...sharing,
    }),
  });
  const events: McpEvent[] = [];
  sync.subscribeEvents((event) => events.push(event));
  const release = sync.mount();
  return {
    sync,
    queryClient,
    channels,
    tabs: () => events.findLast((event) => event.type === 'tabs') as McpEventOf<'tabs'> | undefined,
    async close() {
      release();
      await sync.dispose();
      channels.closeAll();
      queryClient.clear();
    },
  };
}
