/**
 * Tab sharing (issue 13) against the three real servers: several "tabs" (each its own
 * McpCacheSync and QueryClient, as separate pages have) share one connection through
 * `shareAcrossTabs`, elected with an in-memory Web Locks manager (test/support/tabs.ts) and
 * talking over Node's BroadcastChannel. The browser run with Chromium's own locks and channels
 * is test/e2e/tabs.e2e.test.ts.
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, createServerRequests, type ServerRequests } from '../../src/core';
import type { McpEvent, McpEventOf } from '../../src/core/events';
import { internalsOf } from '../../src/core/internals';
import { McpCacheSync, type McpCacheSyncOptions } from '../../src/core/mcpCacheSync';
import { identityOf } from '../../src/core/partition';
import { type ShareAcrossTabsOptions, shareAcrossTabs } from '../../src/tabs';
import { groupName } from '../../src/tabs/link';
import { MAX_TABS } from '../../src/tabs/members';
import { ResourceStore, type TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start, text } from '../support/eras';
import { observeResource } from '../support/observe';
import { BrowserLocks, tabChannels } from '../support/tabs';
import { eventually, idle } from '../support/wait';

const FAST = { initialDelayMs: 20, maxDelayMs: 100 };
const SHARED = 'shared://doc';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

interface Tab {
  sync: McpCacheSync;
  queryClient: QueryClient;
  /** The latest `tabs` event this tab emitted. */
  tabs(): McpEventOf<'tabs'> | undefined;
  events: McpEvent[];
  close(): Promise<void>;
  /** The page dies: no goodbye, its locks are gone, its connection drops. */
  crash(): Promise<void>;
}

function browser(server: TestServer, share = true) {
  const locks = new BrowserLocks();
  const open = (
    options: Partial<McpCacheSyncOptions> = {},
    sharing: ShareAcrossTabsOptions = {},
  ): Tab => {
    const tab = locks.tab();
    const channels = tabChannels();
    const queryClient = new QueryClient();
    const sync = new McpCacheSync({
      queryClient,
      url: server.url,
      lingerMs: 10,
      reconnect: FAST,
      ...(share && {
        shareAcrossTabs: shareAcrossTabs({
          locks: tab.locks,
          channel: channels.open,
          livenessMs: 100,
          ...sharing,
        }),
      }),
      ...options,
    });
    const events: McpEvent[] = [];
    sync.subscribeEvents((event) => events.push(event));
    const release = sync.mount();
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      release();
      await sync.dispose();
      queryClient.clear();
    };
    cleanups.push(close);
    return {
      sync,
      queryClient,
      events,
      tabs: () =>
        events.findLast((event) => event.type === 'tabs') as McpEventOf<'tabs'> | undefined,
      close,
      async crash() {
        channels.closeAll();
        tab.crash();
        await close();
      },
    };
  };
  return { open, locks };
}

async function serverWith(kind: (typeof ERA_CASES)[number]['kind'], uris: string[]) {
  const store = new ResourceStore(uris.map((uri) => text(uri, `${uri} v1`)));
  const server = await start(kind, { store });
  cleanups.push(() => server.close());
  return server;
}

/** One stream and, on 2025, one session: the server carries one copy of the subscriptions. */
async function expectOneConnection(server: TestServer, era: 'modern' | 'legacy') {
  await eventually(() => {
    expect(server.openStreams()).toBe(1);
    if (era === 'legacy') expect(server.liveSessions()).toBe(1);
  });
}

const leaderOf = (tabs: Tab[]) => tabs.filter((tab) => tab.tabs()?.leader === true);

const requestsOf = (tab: Tab) => internalsOf(tab.sync).serverRequests as ServerRequests;

/**
 * Two tabs that let the server ask (an `ask` tool), the follower's form mounted (`requests`:
 * the follower's), the leader's not.
 */
async function askingGroup(kind: (typeof ERA_CASES)[number]['kind']) {
  const server = await serverWith(kind, [SHARED]);
  server.store.setTools([
    {
      name: 'ask',
      elicit: {
        message: 'Who are you?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
      },
    },
  ]);
  const { open } = browser(server);
  const elicitation = () => ({ serverRequests: createServerRequests({ elicitation: true }) });
  const leader = open(elicitation());
  await eventually(() => expect(leader.tabs()?.leader).toBe(true));
  const follower = open(elicitation());
  const requests = requestsOf(follower);
  cleanups.push(requests.subscribeElicitations(() => {}));
  await eventually(() => expect(follower.tabs()?.tabs).toBe(2));
  return { server, leader, follower, requests };
}

describe.each(ERA_CASES)('tab sharing on $kind', ({ kind, era }) => {
  it('four tabs open one stream, and each resource is read once for all of them', async () => {
    const own = ['own://0', 'own://1', 'own://2', 'own://3'];
    const server = await serverWith(kind, [SHARED, ...own]);
    const { open } = browser(server);
    const tabs = [open(), open(), open(), open()];
    const views = tabs.flatMap((tab, i) => [
      observeResource(tab.sync, SHARED),
      observeResource(tab.sync, own[i] as string),
    ]);
    await eventually(() => {
      for (const view of views) expect(view.text()).toMatch(/ v1$/);
    });
    await expectOneConnection(server, era);
    await eventually(() => expect(server.subscribedUris()).toEqual([...own, SHARED].sort()));
    expect(server.counters().reads).toBe(5);
    expect(leaderOf(tabs)).toHaveLength(1);
    await eventually(() => {
      for (const tab of tabs) expect(tab.tabs()?.tabs).toBe(4);
    });
    // Every tab shows the leader's connection as its own.
    for (const tab of tabs) expect(tab.sync.getState().status).toBe('ready');
  });

  it('an update shows in every tab that shows it, with one read', async () => {
    const server = await serverWith(kind, [SHARED]);
    const { open } = browser(server);
    const tabs = [open(), open(), open()];
    const views = tabs.map((tab) => observeResource(tab.sync, SHARED));
    await eventually(() => {
      for (const view of views) expect(view.text()).toBe(`${SHARED} v1`);
    });
    await expectOneConnection(server, era);
    // A follower's query is fetching while it waits for the leader's read.
    const allIdle = () => Promise.all(tabs.map((tab) => idle(tab.queryClient)));
    await allIdle();
    const before = server.counters().reads;
    server.setText(SHARED, 'v2');
    await eventually(() => {
      for (const view of views) expect(view.text()).toBe('v2');
    });
    await allIdle();
    expect(server.counters().reads - before).toBe(1);
  });

  it("a tab's interest joins the leader's subscriptions and leaves with it", async () => {
    const server = await serverWith(kind, [SHARED, 'own://follower']);
    const { open } = browser(server);
    const leader = open();
    observeResource(leader.sync, SHARED);
    await eventually(() => expect(leader.tabs()?.leader).toBe(true));
    const follower = open();
    const view = observeResource(follower.sync, 'own://follower');
    await eventually(() => expect(view.text()).toBe('own://follower v1'));
    await eventually(() =>
      expect(server.subscribedUris()).toEqual(['own://follower', SHARED].sort()),
    );
    const held = () =>
      leader.queryClient
        .getQueryCache()
        .find({ queryKey: ['resource', 'own://follower'], exact: true })
        ?.getObserversCount() ?? 0;
    expect(held()).toBe(1);
    // The follower lets go: the leader lets go for it (the server keeps what retention keeps).
    view.unmount();
    await eventually(() => expect(held()).toBe(0));
    // A crashed tab's holds go too, once the leader sees its lock released.
    const crashing = open();
    observeResource(crashing.sync, 'own://follower');
    await eventually(() => expect(held()).toBe(1));
    await crashing.crash();
    await eventually(() => expect(held()).toBe(0));
    await eventually(() => expect(leader.tabs()?.tabs).toBe(2));
  });

  it('the leader closing hands over: the update made meanwhile shows everywhere, one stream remains', async () => {
    const server = await serverWith(kind, [SHARED]);
    const { open } = browser(server);
    const first = open();
    const firstView = observeResource(first.sync, SHARED);
    await eventually(() => expect(firstView.text()).toBe(`${SHARED} v1`));
    const others = [open(), open(), open()];
    const views = others.map((tab) => observeResource(tab.sync, SHARED));
    await eventually(() => {
      for (const view of views) expect(view.text()).toBe(`${SHARED} v1`);
    });
    expect(leaderOf([first, ...others])).toEqual([first]);
    // The closing leader's own shutdown is not the followers' state.
    const statuses = new Set<string>();
    // Nor does the group seem to shrink to one tab and grow back while they find each other.
    const counts = new Set<number>();
    for (const tab of others) {
      tab.sync.subscribeState(() => statuses.add(tab.sync.getState().status));
      tab.sync.subscribeEvents((event) => {
        if (event.type === 'tabs') counts.add(event.tabs);
      });
    }

    const closing = first.close();
    server.setText(SHARED, 'during the handover'); // nobody may be subscribed right now
    await closing;
    await eventually(() => {
      for (const view of views) expect(view.text()).toBe('during the handover');
    });
    expect(leaderOf(others)).toHaveLength(1);
    await expectOneConnection(server, era);
    await eventually(() => {
      for (const tab of others) expect(tab.tabs()).toMatchObject({ tabs: 3, handovers: 1 });
    });
    // And it is live: the next update arrives through the new leader's stream.
    server.setText(SHARED, 'after');
    await eventually(() => {
      for (const view of views) expect(view.text()).toBe('after');
    });
    expect(statuses.has('closed')).toBe(false);
    expect(Math.min(...counts)).toBe(3);
  });

  it('a crashed leader is replaced, and nothing is left stale', async () => {
    const server = await serverWith(kind, [SHARED]);
    const { open } = browser(server);
    const first = open();
    observeResource(first.sync, SHARED);
    await eventually(() => expect(first.tabs()?.leader).toBe(true));
    const second = open();
    const view = observeResource(second.sync, SHARED);
    await eventually(() => expect(view.text()).toBe(`${SHARED} v1`));
    await first.crash();
    server.setText(SHARED, 'v2');
    await eventually(() => expect(view.text()).toBe('v2'));
    expect(second.tabs()?.leader).toBe(true);
    await expectOneConnection(server, era);
  });

  it("after a handover a tab's diagnostics show what the new leader covers, not what the old one did", async () => {
    const ONLY = 'only://first';
    const server = await serverWith(kind, [SHARED, ONLY]);
    const { open } = browser(server);
    const first = open();
    observeResource(first.sync, ONLY);
    await eventually(() => expect(first.tabs()?.leader).toBe(true));
    const second = open();
    observeResource(second.sync, SHARED);
    await eventually(() =>
      expect(diagnosticsOf(second.sync).resources[0]).toMatchObject({ acknowledged: true }),
    );
    await first.crash(); // no goodbye: nothing of its connection's end reaches the others
    await eventually(() => expect(second.tabs()?.leader).toBe(true));
    await expectOneConnection(server, era);
    await eventually(() =>
      expect(diagnosticsOf(second.sync).resources[0]).toMatchObject({ acknowledged: true }),
    );
    // Nothing holds ONLY on this connection: it is neither covered nor retained here.
    expect(diagnosticsOf(second.sync).retained).toBe(0);
  });

  it('a tool call from a follower runs once, through the leader', async () => {
    const server = await serverWith(kind, [SHARED]);
    server.store.setTools([{ name: 'plain' }]);
    const { open } = browser(server);
    const leader = open();
    await eventually(() => expect(leader.tabs()?.leader).toBe(true));
    const follower = open();
    await eventually(() => expect(follower.tabs()?.tabs).toBe(2));
    const result = await callTool(follower.sync, { name: 'plain', arguments: { n: 1 } });
    expect(result.isError).not.toBe(true);
    expect(server.counters().toolCalls).toBe(1);
    await expectOneConnection(server, era);
  });

  // A follower's tool call asks the user through the leader's connection. The question shows in
  // every tab that answers elicitations (the follower here: the leader shows none), and the
  // first answer, from any tab, is the one the server gets. Before, the leader declined it at
  // once, since no component of its own was there to answer.
  it("an elicitation reaches the tabs that answer them, and a follower's answer is the server's", async () => {
    const { server, leader, follower, requests } = await askingGroup(kind);

    const call = callTool(follower.sync, { name: 'ask' });
    await eventually(() => expect(requests.getElicitations()).toHaveLength(1));
    const [pending] = requests.getElicitations();
    expect(pending?.params.message).toBe('Who are you?');
    pending?.accept({ name: 'Grace' });
    const result = await call;
    const first = result.content[0];
    expect(first?.type === 'text' ? first.text : undefined).toBe(
      'answered accept {"name":"Grace"}',
    );
    await eventually(() => expect(requests.getElicitations()).toEqual([]));
    const leaderRequests = requestsOf(leader);
    expect(leaderRequests.getElicitations()).toEqual([]);
    // One call from the app; on 2026-07-28 the answer goes back in a second tools/call (the
    // input_required round trip).
    expect(server.counters().toolCalls).toBe(era === 'modern' ? 2 : 1);

    // Both tabs show the next question; the leader's answer takes it off the follower too.
    cleanups.push(leaderRequests.subscribeElicitations(() => {}));
    const again = callTool(follower.sync, { name: 'ask' });
    await eventually(() => {
      expect(leaderRequests.getElicitations()).toHaveLength(1);
      expect(requests.getElicitations()).toHaveLength(1);
    });
    leaderRequests.getElicitations()[0]?.decline();
    const second = (await again).content[0];
    expect(second?.type === 'text' ? second.text : undefined).toBe('answered decline');
    await eventually(() => expect(requests.getElicitations()).toEqual([]));
  });

  it('a question whose only answering tab closes is declined, not left waiting', async () => {
    const { leader, follower, requests } = await askingGroup(kind);

    const call = callTool(leader.sync, { name: 'ask' });
    await eventually(() => expect(requests.getElicitations()).toHaveLength(1));
    await follower.close();
    const first = (await call).content[0];
    expect(first?.type === 'text' ? first.text : undefined).toBe('answered decline');
  });

  // A tab's own connection ends its calls when the tab closes; a follower's calls run on the
  // leader's connection, so the leader ends them, whether the follower said goodbye or the
  // leader finds it dead. Before, they kept running for nobody: here, the server's question
  // stayed open in the leader tab.
  it.each(['closes', 'crashes'] as const)(
    'a follower that %s cancels the tool calls it made through the leader',
    async (end) => {
      const { server, leader, follower, requests } = await askingGroup(kind);
      const leaderRequests = requestsOf(leader);
      cleanups.push(leaderRequests.subscribeElicitations(() => {}));

      const call = callTool(follower.sync, { name: 'ask' }).catch((error: unknown) => error);
      await eventually(() => {
        expect(requests.getElicitations()).toHaveLength(1);
        expect(leaderRequests.getElicitations()).toHaveLength(1);
      });
      await (end === 'closes' ? follower.close() : follower.crash());
      expect(await call).toBeInstanceOf(Error);
      await eventually(() => expect(leaderRequests.getElicitations()).toEqual([]));
      if (era === 'legacy') {
        await eventually(() => {
          expect(server.store.pendingAsks()).toBe(0);
          expect(server.store.asks().at(-1)?.outcome).toEqual({ kind: 'cancelled' });
        });
      }
      expect(leader.tabs()?.tabs).toBe(1);
    },
  );

  it('tabs under different identities are separate groups, each with its own connection', async () => {
    const server = await serverWith(kind, [SHARED]);
    const { open } = browser(server);
    const alice = [open({ authContext: 'alice' }), open({ authContext: 'alice' })];
    const bob = open({ authContext: 'bob' });
    const views = [...alice, bob].map((tab) => observeResource(tab.sync, SHARED));
    await eventually(() => {
      for (const view of views) expect(view.text()).toBe(`${SHARED} v1`);
    });
    expect(leaderOf(alice)).toHaveLength(1);
    expect(bob.tabs()).toMatchObject({ leader: true, tabs: 1 });
    await eventually(() => expect(server.openStreams()).toBe(2));
  });

  it('without sharing, every tab opens its own stream (the baseline)', async () => {
    const server = await serverWith(kind, [SHARED]);
    const { open } = browser(server, false);
    const tabs = [open(), open(), open()];
    const views = tabs.map((tab) => observeResource(tab.sync, SHARED));
    await eventually(() => {
      for (const view of views) expect(view.text()).toBe(`${SHARED} v1`);
    });
    await eventually(() => expect(server.openStreams()).toBe(3));
    expect(server.counters().reads).toBe(3);
  });
});

/**
 * A leader and a follower on a 2026-07-28 server, whose liveness timer (a minute, as a throttled
 * background tab's) cannot be what notices a tab leaving. `sharing` is the follower's.
 */
async function groupOfTwo(sharing: ShareAcrossTabsOptions = {}) {
  const server = await serverWith('modern', [SHARED]);
  const { open } = browser(server);
  const slow = { livenessMs: 60_000 };
  const leader = open({}, slow);
  await eventually(() => expect(leader.tabs()?.leader).toBe(true));
  const follower = open({}, { ...slow, ...sharing });
  await eventually(() => expect(leader.tabs()?.tabs).toBe(2));
  return { server, leader, follower };
}

describe('tab sharing, whatever the server', () => {
  // A tab that crashes says no goodbye. The leader waits for its lock, which the tab holds
  // while it lives: the grant says it is gone, with no timer. Before, only the liveness check
  // noticed (every livenessMs, here a minute: throttled background tabs run timers that late).
  it('a follower that crashes leaves the group as soon as its lock is free, without the liveness timer', async () => {
    const { server, leader, follower } = await groupOfTwo();
    observeResource(follower.sync, SHARED);
    await eventually(() => expect(server.subscribedUris()).toEqual([SHARED]));

    await follower.crash();
    await eventually(() => expect(leader.tabs()?.tabs).toBe(1));
    // What only the crashed tab showed is let go on the server too: after the leader's own hold
    // for the read it made for that tab (reader.ts, a 5 s grace) and the linger, so longer than
    // eventually's 5 s by default.
    await eventually(() => expect(server.subscribedUris()).toEqual([]), { timeout: 15_000 });
  });

  // The leader notices a tab that closed without a goodbye by a timer, which browsers throttle
  // in background tabs (to once a minute). A page that goes away says goodbye instead, unless
  // the back/forward cache keeps it (it may come back). Before, closing a follower tab left
  // it in the group until the leader's next liveness check.
  // A tab that said hello and died before its lock was seen: the first grant comes too early to
  // tell (the tab may not hold its lock yet), so the leader asks again a moment later.
  it('a tab that joined and died at once leaves the group after a moment, without the liveness timer', async () => {
    const { server, leader } = await groupOfTwo();
    const ghost = new BroadcastChannel(groupName(identityOf({ url: server.url }), undefined));
    cleanups.push(() => ghost.close());
    ghost.postMessage({ type: 'hello', tab: 'ghost' });
    await eventually(() => expect(leader.tabs()?.tabs).toBe(3));
    await eventually(() => expect(leader.tabs()?.tabs).toBe(2));
  });

  // Issue 17, item 8: the channel is open to every script of the origin. Before, a follower
  // applied `data` to any entry it had (an empty one emptied it), the leader took any shape (a
  // message without `keys` threw in its handler) and joined every tab id it heard.
  it('hostile tab messages neither crash a tab, nor change its data, nor grow what the leader keeps', async () => {
    const { server, leader, follower } = await groupOfTwo();
    const shown = observeResource(follower.sync, SHARED);
    await eventually(() => expect(shown.text()).toBe(`${SHARED} v1`));
    const ghost = new BroadcastChannel(groupName(identityOf({ url: server.url }), undefined));
    cleanups.push(() => ghost.close());
    const key = follower.sync.resourceQueryOptions(SHARED).queryKey;
    const stranger = follower.sync.resourceQueryOptions('planted://x').queryKey;
    follower.queryClient.setQueryData(stranger, {
      contents: [{ uri: 'planted://x', text: 'old' }],
    });
    const later = Date.now() + 60_000;
    const hostile: unknown[] = [
      null,
      'hello',
      [1, 2, 3],
      { type: 'nonsense' },
      { type: 'interest', tab: 'ghost' },
      { type: 'interest', tab: 'ghost', keys: 'all' },
      {
        type: 'interest',
        tab: 'ghost',
        keys: Array.from({ length: 20_000 }, (_, i) => ['resource', `x://${i}`]),
      },
      { type: 'read', tab: 'ghost', id: -1, key: key, fresh: true },
      { type: 'call', tab: 'ghost', id: 1, variables: { name: 42 } },
      { type: 'answer', tab: 'ghost', id: 1, result: { action: 'steal' } },
      { type: 'events', events: [{ type: 'connection', at: 1 }] },
      { type: 'data', key, data: { contents: [] }, updatedAt: later },
      { type: 'data', key, data: 'gone', updatedAt: later },
      {
        type: 'data',
        key: stranger,
        data: { contents: [{ uri: 'planted://x', text: 'planted' }] },
        updatedAt: later,
      },
      ...Array.from({ length: 400 }, (_, i) => ({ type: 'hello', tab: `ghost-${i}` })),
    ];
    for (const message of hostile) ghost.postMessage(message);
    // The last one is a marker that can only arrive after all the others.
    ghost.postMessage({ type: 'hello', tab: 'marker' });
    await eventually(() => expect(leader.tabs()?.tabs).toBeGreaterThan(2));
    expect(shown.text()).toBe(`${SHARED} v1`);
    expect(follower.queryClient.getQueryData(stranger)).toMatchObject({
      contents: [{ text: 'old' }],
    });
    expect(leader.tabs()?.tabs).toBeLessThanOrEqual(MAX_TABS + 1);
    // Both tabs still work: a change reaches the follower, read once.
    const reads = server.store.reads(SHARED);
    server.setText(SHARED, `${SHARED} v2`);
    await eventually(() => expect(shown.text()).toBe(`${SHARED} v2`));
    expect(server.store.reads(SHARED) - reads).toBe(1);
  });

  it('a follower page that goes away leaves the group at once; one kept for back/forward stays', async () => {
    const page = new EventTarget();
    const { server, leader, follower } = await groupOfTwo({ page });

    const cached = Object.assign(new Event('pagehide'), { persisted: true });
    page.dispatchEvent(cached);
    // The follower's next message to the leader comes after any goodbye it sent: once the
    // leader subscribes what the follower shows, it has heard everything before it.
    observeResource(follower.sync, SHARED);
    await eventually(() => expect(server.subscribedUris()).toEqual([SHARED]));
    expect(leader.tabs()?.tabs).toBe(2);

    page.dispatchEvent(new Event('pagehide'));
    await eventually(() => expect(leader.tabs()?.tabs).toBe(1));
    expect(follower.tabs()?.leader).toBe(false);
  });

  // The SDK client lives in the leading tab only. Before, a follower's whenReady() waited its
  // whole timeout and then blamed a connection that was "never started".
  it("a follower's whenReady() says at once that the client is in another tab, and resolves once this tab leads", async () => {
    const server = await serverWith('modern', [SHARED]);
    const { open } = browser(server);
    const leader = open();
    // Asked before the election: it waits for it, and this tab wins.
    expect((await leader.sync.whenReady()).getProtocolEra()).toBe('modern');
    expect(leader.tabs()?.leader).toBe(true);
    const follower = open({ requestTimeoutMs: 5000 });
    const asked = Date.now();
    const error = await follower.sync.whenReady().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'McpQueryError', code: 'OTHER_TAB' });
    expect((error as Error).message).toMatch(/another tab holds the connection/);
    expect(Date.now() - asked).toBeLessThan(4000);

    await leader.close();
    await eventually(() => expect(follower.tabs()?.leader).toBe(true));
    const client = await follower.sync.whenReady();
    expect(client.getProtocolEra()).toBe('modern');
  });

  it("a follower's invalidation reads again rather than taking the leader's copy", async () => {
    const server = await serverWith('modern', [SHARED]);
    const { open } = browser(server);
    const leader = open();
    observeResource(leader.sync, SHARED);
    await eventually(() => expect(leader.tabs()?.leader).toBe(true));
    const follower = open();
    const view = observeResource(follower.sync, SHARED);
    await eventually(() => expect(view.text()).toBe(`${SHARED} v1`));
    await idle(leader.queryClient);
    await idle(follower.queryClient);
    const before = server.counters().reads;
    server.store.setText(SHARED, 'changed without a notification');
    await follower.queryClient.invalidateQueries({ queryKey: ['resource', SHARED] });
    await eventually(() => expect(view.text()).toBe('changed without a notification'));
    expect(server.counters().reads - before).toBe(1);
  });

  it('the diagnostics say which tab leads, how many share, and the handovers, also when they start late', async () => {
    const server = await serverWith('modern', [SHARED]);
    const { open } = browser(server);
    const first = open();
    await eventually(() => expect(first.tabs()?.leader).toBe(true));
    const second = open();
    const view = observeResource(second.sync, SHARED);
    await eventually(() => expect(view.text()).toBe(`${SHARED} v1`));
    await eventually(() => expect(second.tabs()?.tabs).toBe(2));
    expect(diagnosticsOf(second.sync).tabs).toEqual({ leader: false, tabs: 2, handovers: 0 });
    expect(diagnosticsOf(first.sync).tabs).toEqual({ leader: true, tabs: 2, handovers: 0 });
    // The follower shows the leader's connection and coverage as its own.
    await eventually(() =>
      expect(diagnosticsOf(second.sync).resources[0]).toMatchObject({
        uri: SHARED,
        acknowledged: true,
      }),
    );
    await first.close();
    await eventually(() =>
      expect(diagnosticsOf(second.sync).tabs).toEqual({ leader: true, tabs: 1, handovers: 1 }),
    );
  });

  it('without Web Locks each tab connects by itself', async () => {
    const server = await serverWith('modern', [SHARED]);
    const queryClient = new QueryClient();
    const sync = new McpCacheSync({
      queryClient,
      url: server.url,
      shareAcrossTabs: shareAcrossTabs({ channel: tabChannels().open }),
    });
    cleanups.push(() => sync.dispose());
    const hasLocks = 'locks' in (globalThis.navigator ?? {});
    expect(hasLocks).toBe(false);
    sync.mount();
    const view = observeResource(sync, SHARED);
    await eventually(() => expect(view.text()).toBe(`${SHARED} v1`));
    expect(sync.getState().status).toBe('ready');
  });

  it('leaving the group closes the channel and releases every lock', async () => {
    const server = await serverWith('modern', [SHARED]);
    const { open, locks } = browser(server);
    const tabs = [open(), open()];
    await eventually(() => expect(locks.held()).toHaveLength(3)); // leader + one per tab
    for (const tab of tabs) await tab.close();
    await eventually(() => expect(locks.held()).toEqual([]));
    await eventually(() => expect(server.openStreams()).toBe(0));
  });
});
