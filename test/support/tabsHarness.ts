/**
 * Fake tabs for the tab-sharing tests (test/tabs/*): each "tab" is an McpCacheSync with its own
 * QueryClient, whose own connection is a fake LocalUpstreamControl (fakeLocal.ts), elected with
 * the in-memory Web Locks of tabs.ts and talking over the in-memory BroadcastChannels of
 * fakeChannel.ts, all on fake timers. A test file calls `withFakeTabs()` once.
 */
import type { CallToolResult, OAuthClientProvider } from '@modelcontextprotocol/client';
import { QueryClient, type QueryKey, QueryObserver } from '@tanstack/query-core';
import { afterEach, beforeEach, vi } from 'vitest';
import { callTool, type ServerRequests } from '../../src/core';
import type { McpEvent, McpEventOf } from '../../src/core/events';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import type { AuthControl } from '../../src/core/signIn';
import type { CallToolVariables } from '../../src/core/upstream';
import { type PageLike, shareAcrossTabs } from '../../src/tabs';
import { groupName } from '../../src/tabs/link';
import { track } from './deferred';
import { deliverAll, FakeBroadcast } from './fakeChannel';
import { FakeLocal } from './fakeLocal';
import { BrowserLocks } from './tabs';

export const SERVER_URL = 'http://mcp.test/mcp';
/** The group of SERVER_URL, unscoped, signed out (link.ts). */
export const GROUP = groupName({ connection: `url:${SERVER_URL}`, auth: undefined }, undefined);
export const LEADER_LOCK = `${GROUP}|leader`;
export const tabLock = (tab: string) => `${GROUP}|tab|${tab}`;
export const REQUEST_TIMEOUT_MS = 5000;
export const TOOL_TIMEOUT_MS = 20_000;
export const LINGER_MS = 1000;
/** How long a new leader lets the others say hello before it counts them (leader.ts). */
export const GROUP_SETTLE_MS = 100;
/** A tab's lock found free this soon after it joined is asked for again (leader.ts). */
export const JOIN_GRACE_MS = 1000;
/** The liveness fallback, far off: these tests see a closed tab through its lock. */
export const LIVENESS_MS = 3_600_000;

export const contents = (uri: string, text: string) => ({ contents: [{ uri, text }] });
export const resourceKey = (uri: string): QueryKey => ['resource', uri];

/** A loader's read of `uri` in `tab`, without retries: what its promise does is the subject. */
export const readIn = (tab: { queryClient: QueryClient; sync: McpCacheSync }, uri: string) =>
  track(tab.queryClient.fetchQuery({ ...tab.sync.resourceQueryOptions(uri), retry: false }));

export interface Tab {
  label: string;
  /** Its id in the group (from its `hello`). */
  id: string;
  sync: McpCacheSync;
  queryClient: QueryClient;
  local: FakeLocal;
  events: McpEvent[];
  /** The latest `tabs` event it emitted. */
  tabs(): McpEventOf<'tabs'> | undefined;
  /** A mounted observer of `uri` (what useResource does); its current data. */
  observe(uri: string): { data(): unknown; unmount(): void };
  /** A read as a loader makes it (fetchQuery through the routed query function). */
  read(uri: string): ReturnType<typeof track<unknown>>;
  call(variables: CallToolVariables): ReturnType<typeof track<CallToolResult>>;
  /** The page closes: goodbye, then the McpCacheSync is disposed. */
  leave(): Promise<void>;
  /** The page dies: its channels close and its locks go, no goodbye. */
  crash(): void;
  /** Someone else (or, `undefined`, nobody) signs in here: a tab opened with `signedIn` only. */
  signIn(identity: string | undefined): void;
}

/** What a tab is opened with: its page, and its McpCacheSync's server, scope and identity. */
export interface TabOptions {
  page?: PageLike;
  url?: string;
  scope?: string;
  authContext?: string;
  /** Who is signed in when the tab opens, through a sign-in the test changes (`signIn`). */
  signedIn?: string;
  /** What the server may ask of this tab (elicitations). */
  serverRequests?: ServerRequests;
}

const everyTab: Tab[] = [];

/** Where a tab hears `pagehide`. */
export function fakePage(): PageLike & { hide(event: { persisted: boolean }): void } {
  const listeners = new Set<(event: Event) => void>();
  return {
    addEventListener: (_type, listener) => listeners.add(listener),
    removeEventListener: (_type, listener) => listeners.delete(listener),
    hide: (event) => {
      for (const listener of listeners) listener(event as unknown as Event);
    },
  };
}

export function browser() {
  const locks = new BrowserLocks();
  const hub = new FakeBroadcast();
  let count = 0;
  const open = ({
    page,
    url,
    scope,
    authContext,
    signedIn,
    serverRequests,
  }: TabOptions = {}): Tab => {
    count += 1;
    const label = `tab${count}`;
    const browserTab = locks.tab();
    const channels = hub.tab(label);
    const local = new FakeLocal(label);
    const queryClient = new QueryClient();
    const sharing = shareAcrossTabs({
      locks: browserTab.locks,
      channel: channels.open,
      livenessMs: LIVENESS_MS,
      ...(page && { page }),
    });
    // A seeded random source per tab: its id in the group is made from it.
    let seed = count * 7919;
    // Just enough of an `mcp-react-query/auth` provider to say who is signed in, and when it
    // changes (the fake connection asks it for no token).
    let auth: AuthControl | undefined;
    let identity = signedIn;
    const signIn = {
      identity: () => identity,
      bind: (control: AuthControl) => {
        auth = control;
        return () => {
          auth = undefined;
        };
      },
    };
    const sync = new McpCacheSync({
      queryClient,
      url: url ?? SERVER_URL,
      ...(scope !== undefined && { scope }),
      ...(authContext !== undefined && { authContext }),
      ...(signedIn !== undefined && { authProvider: signIn as unknown as OAuthClientProvider }),
      ...(serverRequests && { serverRequests }),
      lingerMs: LINGER_MS,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      toolTimeoutMs: TOOL_TIMEOUT_MS,
      clock: {
        now: () => Date.now(),
        random: () => {
          seed = (seed * 16807) % 2147483647;
          return seed / 2147483647;
        },
      },
      // The real TabContext of an McpCacheSync; the fake stands in for its own connection.
      shareAcrossTabs: { upstream: (_own, context) => sharing.upstream(local, context) },
    });
    const events: McpEvent[] = [];
    sync.subscribeEvents((event) => events.push(event));
    sync.mount();
    const unmounts: Array<() => void> = [];
    const hello = hub.sent(label, 'hello')[0] as { tab: string };
    const tab: Tab = {
      label,
      id: hello.tab,
      sync,
      queryClient,
      local,
      events,
      tabs: () =>
        events.findLast((event) => event.type === 'tabs') as McpEventOf<'tabs'> | undefined,
      observe(uri) {
        const observer = new QueryObserver(queryClient, sync.resourceQueryOptions(uri));
        const unmount = observer.subscribe(() => {});
        unmounts.push(unmount);
        return { data: () => observer.getCurrentResult().data, unmount };
      },
      read: (uri) => track(queryClient.fetchQuery(sync.resourceQueryOptions(uri))),
      call: (variables) => track(callTool(sync, variables)),
      async leave() {
        for (const unmount of unmounts.splice(0)) unmount();
        await sync.dispose();
      },
      crash() {
        channels.closeAll();
        browserTab.crash();
      },
      signIn(next) {
        if (!auth) throw new Error(`${label} was not opened with signedIn`);
        identity = next;
        auth.signedIn(next, false);
      },
    };
    everyTab.push(tab);
    return tab;
  };
  return { open, locks, hub, settle: () => deliverAll(hub) };
}

/** A browser with `n` tabs opened one after the other: the first leads, the rest follow. */
export async function group(n: number) {
  const b = browser();
  const tabs: Tab[] = [];
  for (let i = 0; i < n; i++) {
    tabs.push(b.open());
    await b.settle();
  }
  return { ...b, tabs };
}

/** A tab following a leader that never answers: a script holds the leader lock and says it leads. */
export async function silentLeader() {
  const b = browser();
  void b.locks.tab().locks.request(LEADER_LOCK, {}, () => new Promise(() => {}));
  const follower = b.open();
  b.hub.inject(GROUP, { type: 'leader', tab: 'ghost', handovers: 0 });
  await b.settle();
  return { ...b, follower };
}

/** Fake timers for each test; every tab opened is closed after it. */
export function withFakeTabs(): void {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(async () => {
    for (const tab of everyTab.splice(0)) {
      await tab.leave();
      tab.queryClient.clear();
    }
    vi.useRealTimers();
  });
}
