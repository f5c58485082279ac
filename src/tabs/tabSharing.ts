import type { TabSharingOption } from '../core/internals';
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
      // A page that goes away says goodbye at once: the leader's liveness check runs on a
      // timer, which browsers throttle in background tabs. A page the back/forward cache keeps
      // (`persisted`) may come back, so it stays.
      const page =
        options.page ??
        (typeof document === 'undefined' ? undefined : (globalThis as unknown as PageLike));
      const onPageHide = (event: Event) => {
        if (!(event as { persisted?: boolean }).persisted && !disposed) membership.pageHidden();
      };
      page?.addEventListener('pagehide', onPageHide);
      internals.onDispose(() => {
        disposed = true;
        page?.removeEventListener('pagehide', onPageHide);
        membership.leave(undefined);
      });
    },
  };
}
