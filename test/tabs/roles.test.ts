/**
 * The tab roles (rule 14) with nothing real but the code under test: each "tab" is an
 * McpCacheSync with its own QueryClient, whose own connection is a fake LocalUpstreamControl
 * (test/support/fakeLocal.ts), elected with the in-memory Web Locks of test/support/tabs.ts and
 * talking over the in-memory BroadcastChannels of test/support/fakeChannel.ts, all on fake
 * timers (test/support/tabsHarness.ts): an election, a handover, a crash and a message storm
 * play out the same way every time. The same roles against real servers are
 * test/integration/tabs.test.ts; in Chromium, test/e2e/tabs.e2e.ts.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import { describe, expect, it, vi } from 'vitest';
import { McpQueryError } from '../../src/core/errors';
import type { McpEvent } from '../../src/core/events';
import { internalsOf } from '../../src/core/internals';
import type { CallToolVariables } from '../../src/core/upstream';
import { MAX_REQUESTS_PER_TAB } from '../../src/tabs/leader';
import { MAX_TABS } from '../../src/tabs/members';
import { parseTabMessage } from '../../src/tabs/validate';
import {
  browser,
  contents,
  fakePage,
  GROUP,
  GROUP_SETTLE_MS,
  group,
  JOIN_GRACE_MS,
  LEADER_LOCK,
  LINGER_MS,
  resourceKey,
  type Tab,
  tabLock,
  withFakeTabs,
} from '../support/tabsHarness';

withFakeTabs();

describe('tab roles (rule 14)', () => {
  it('election: the first tab leads and connects; the others follow, never connect, and know the group', async () => {
    const { tabs, locks } = await group(3);
    const [a, b, c] = tabs as [Tab, Tab, Tab];
    expect(a.tabs()).toMatchObject({ leader: true, tabs: 3, handovers: 0 });
    for (const follower of [b, c]) {
      expect(follower.tabs()).toMatchObject({ leader: false, tabs: 3, handovers: 0 });
      expect(follower.local.started).toBe(0);
    }
    expect(a.local.started).toBe(1);
    // Every tab starts as a follower: its own connection is stopped until it wins.
    for (const tab of tabs) expect(tab.local.stopped).toBe(1);
    expect(locks.held().sort()).toEqual(
      [LEADER_LOCK, ...tabs.map((tab) => tabLock(tab.id))].sort(),
    );

    await expect(a.sync.whenReady()).resolves.toBe(a.local.sdk);
    await expect(b.sync.whenReady()).rejects.toMatchObject({ code: 'OTHER_TAB' });
    expect(b.sync.getState().client).toBeUndefined();
  });

  it('a follower’s read goes through the leader: one read on the leader’s connection, none on its own', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const view = b.observe('doc://1');
    await settle();
    expect(a.local.reads.map((read) => read.key)).toEqual([resourceKey('doc://1')]);
    a.local.answer(0, contents('doc://1', 'v1'));
    await settle();
    expect(view.data()).toEqual(contents('doc://1', 'v1'));
    expect(b.local.reads).toHaveLength(0);
    expect(hub.sent(b.label, 'read')).toHaveLength(1);
    // The leader holds what the follower shows: its subscriptions are the union.
    expect(a.local.desires.at(-1)?.uris).toEqual(['doc://1']);
  });

  it('content the leader reads reaches a follower that shows it, without a read of its own', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const view = b.observe('doc://1');
    await settle();
    a.local.answer(0, contents('doc://1', 'v1'));
    await settle();

    // The leader re-reads (a notification, a catch-up) a while later: the content is broadcast.
    await vi.advanceTimersByTimeAsync(1000);
    void a.queryClient.invalidateQueries({ queryKey: resourceKey('doc://1') });
    await settle();
    expect(a.local.reads).toHaveLength(2);
    a.local.answer(1, contents('doc://1', 'v2'));
    await settle();
    expect(view.data()).toEqual(contents('doc://1', 'v2'));
    expect(hub.sent(b.label, 'read')).toHaveLength(1);
    expect(b.local.reads).toHaveLength(0);
  });

  it('content the leader reads twice within one millisecond reaches the follower: the later content wins', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const view = b.observe('doc://1');
    await settle();
    a.local.answer(0, contents('doc://1', 'v1'));
    await settle();
    // The clock does not move: both reads end in the same millisecond (a fast server, or a
    // browser that coarsens Date.now()).
    void a.queryClient.invalidateQueries({ queryKey: resourceKey('doc://1') });
    await settle();
    a.local.answer(1, contents('doc://1', 'v2'));
    await settle();
    expect(a.queryClient.getQueryData(resourceKey('doc://1'))).toEqual(contents('doc://1', 'v2'));
    expect(view.data()).toEqual(contents('doc://1', 'v2'));
  });

  it('content older than what the follower last took from the leader is not taken', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const view = b.observe('doc://1');
    await settle();
    a.local.answer(0, contents('doc://1', 'v1'));
    await settle();
    const { dataUpdatedAt } = b.queryClient.getQueryState(resourceKey('doc://1')) ?? {};
    hub.inject(GROUP, {
      type: 'data',
      key: resourceKey('doc://1'),
      data: contents('doc://1', 'v0, late'),
      updatedAt: (dataUpdatedAt as number) - 1,
    });
    await settle();
    expect(view.data()).toEqual(contents('doc://1', 'v1'));
  });

  it('the leader’s connection events reach every follower, and what it covers is fresh there too (rule 7)', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const key = resourceKey('doc://1');
    b.queryClient.setQueryData(key, contents('doc://1', 'v1'));
    const staleTime = () => {
      const query = b.queryClient.getQueryCache().find({ queryKey: key, exact: true });
      const { staleTime: fn } = b.queryClient.getQueryDefaults(key);
      return typeof fn === 'function' ? fn(query as never) : fn;
    };
    expect(staleTime()).toBe(0);
    const leaderBus = internalsOf(a.sync).events.bus;
    leaderBus.emit({ type: 'coverage', acknowledged: ['doc://1'], lost: [], lists: ['resources'] });
    leaderBus.emit({ type: 'updated', uri: 'doc://1', matched: true });
    // What the server says of URIs nobody here wants reaches them too (bounded: unmatchedSample.ts).
    leaderBus.emit({ type: 'updated', uri: 'nobody://wants', matched: false });
    await settle();
    expect(b.events.filter((event) => event.type === 'coverage').at(-1)).toMatchObject({
      acknowledged: ['doc://1'],
      lists: ['resources'],
    });
    expect(b.events.filter((event) => event.type === 'updated').map((event) => event.uri)).toEqual([
      'doc://1',
      'nobody://wants',
    ]);
    expect(staleTime()).toBe(Number.POSITIVE_INFINITY);

    leaderBus.emit({ type: 'coverage', acknowledged: [], lost: ['doc://1'], lists: [] });
    await settle();
    expect(staleTime()).toBe(0);
  });

  it('a leader’s error reaches the follower with its code', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const read = b.read('doc://missing');
    await settle();
    a.local.reads[0]?.answer.reject(new McpQueryError('WRONG_URI', 'another resource’s content'));
    await settle();
    expect(read.error).toBeInstanceOf(McpQueryError);
    expect(read.error).toMatchObject({ code: 'WRONG_URI', message: 'another resource’s content' });
  });

  it('a follower’s tool call runs on the leader’s connection, with its progress and result', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const onProgress = vi.fn();
    const call = b.call({ name: 'echo', arguments: { text: 'hi' }, onProgress });
    await settle();
    expect(a.local.calls).toHaveLength(1);
    const ran = a.local.calls[0]?.variables as CallToolVariables;
    expect(ran).toMatchObject({ name: 'echo', arguments: { text: 'hi' } });
    ran.onProgress?.({ progress: 1, total: 2 });
    await settle();
    expect(onProgress).toHaveBeenCalledWith({ progress: 1, total: 2 });
    const result = { content: [{ type: 'text', text: 'hi' }] } as CallToolResult;
    a.local.calls[0]?.answer.resolve(result);
    await settle();
    expect(call.value).toEqual(result);
    expect(b.local.calls).toHaveLength(0);
  });

  it('a follower that cancels its call cancels it on the leader', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const controller = new AbortController();
    const call = b.call({ name: 'slow', signal: controller.signal });
    await settle();
    const ran = a.local.calls[0]?.variables.signal as AbortSignal;
    expect(ran.aborted).toBe(false);
    controller.abort(new Error('the user went elsewhere'));
    await settle();
    // A call aborted through its own signal is cancelled, not failed (issue 21).
    expect(call.error).toMatchObject({ code: 'CANCELLED' });
    expect(ran.aborted).toBe(true);
  });

  it('a follower that leaves says goodbye: the leader cancels its calls, lets its holds go and counts one tab less', async () => {
    const { tabs, hub, settle } = await group(3);
    const [a, b, c] = tabs as [Tab, Tab, Tab];
    b.observe('doc://b');
    c.observe('doc://c');
    await settle();
    a.local.answerKey(resourceKey('doc://b'), contents('doc://b', 'v1'));
    a.local.answerKey(resourceKey('doc://c'), contents('doc://c', 'v1'));
    b.call({ name: 'slow' });
    await settle();
    expect(a.local.desires.at(-1)?.uris).toEqual(['doc://b', 'doc://c']);
    const ran = a.local.calls[0]?.variables.signal as AbortSignal;

    await b.leave();
    await settle();
    expect(hub.sent(b.label, 'bye')).toHaveLength(1);
    expect(ran.aborted).toBe(true);
    expect(a.tabs()).toMatchObject({ leader: true, tabs: 2 });
    expect(c.tabs()).toMatchObject({ leader: false, tabs: 2 });
    await vi.advanceTimersByTimeAsync(LINGER_MS);
    expect(a.local.desires.at(-1)?.uris).toEqual(['doc://c']);
    // The leader keeps its place: no handover.
    expect(c.local.started).toBe(0);
  });

  it('a newcomer’s catch-up (the leader’s state as events) goes to it alone', async () => {
    const { tabs, open, settle } = await group(2);
    const [, b] = tabs as [Tab, Tab];
    const before = b.events.length;
    const c = open();
    await settle();
    expect(c.events.some((event) => event.type === 'connection')).toBe(true);
    expect(b.events.slice(before).map((event) => event.type)).toEqual(['tabs']);
    expect(b.tabs()?.tabs).toBe(3);
  });

  it('a follower whose page goes away says goodbye; one the back/forward cache keeps, and the leader, stay', async () => {
    const b = browser();
    const pages = [fakePage(), fakePage(), fakePage()];
    const [a, kept, gone] = pages.map((page) => b.open({ page })) as [Tab, Tab, Tab];
    await b.settle();
    expect(a.tabs()).toMatchObject({ leader: true, tabs: 3 });

    pages[1]?.hide({ persisted: true });
    pages[2]?.hide({ persisted: false });
    await b.settle();
    expect(b.hub.sent(kept.label, 'bye')).toHaveLength(0);
    expect(b.hub.sent(gone.label, 'bye')).toHaveLength(1);
    expect(a.tabs()).toMatchObject({ leader: true, tabs: 2 });

    // The leader keeps its place until its page is really gone (its locks go with it).
    pages[0]?.hide({ persisted: false });
    await b.settle();
    expect(b.hub.sent(a.label, 'bye')).toHaveLength(0);
    expect(a.tabs()?.leader).toBe(true);
    expect(kept.tabs()?.leader).toBe(false);
  });

  it('handover: the leader leaves with a goodbye; the next tab leads, re-runs the reads in flight, and fails the calls already sent (CONNECTION_LOST)', async () => {
    const { tabs, hub, settle } = await group(3);
    const [a, b, c] = tabs as [Tab, Tab, Tab];
    const bRead = b.read('doc://b');
    const cRead = c.read('doc://c');
    const bCall = b.call({ name: 'slow' });
    const cCall = c.call({ name: 'slower' });
    await settle();
    expect(a.local.reads).toHaveLength(2);
    expect(a.local.calls).toHaveLength(2);
    const ranOnA = a.local.calls.map((call) => call.variables.signal as AbortSignal);

    await a.leave();
    await settle();
    expect(hub.sent(a.label, 'bye')).toHaveLength(1);
    // Calls the old leader ran for the others end with it; they may have run, so not again.
    expect(ranOnA.map((signal) => signal.aborted)).toEqual([true, true]);
    expect(bCall.error).toMatchObject({ code: 'CONNECTION_LOST' });
    expect(cCall.error).toMatchObject({ code: 'CONNECTION_LOST' });
    expect(b.local.calls).toHaveLength(0);

    expect(b.tabs()).toMatchObject({ leader: true, handovers: 1 });
    expect(b.local.started).toBe(1);
    expect(c.local.started).toBe(0);
    // Reads in flight run again on the new leader: B's own, and C's, which C sent to B.
    expect(b.local.reads.map((read) => read.key).sort()).toEqual([
      resourceKey('doc://b'),
      resourceKey('doc://c'),
    ]);
    b.local.answerKey(resourceKey('doc://b'), contents('doc://b', 'v1'));
    b.local.answerKey(resourceKey('doc://c'), contents('doc://c', 'v1'));
    await settle();
    expect(bRead.value).toEqual(contents('doc://b', 'v1'));
    expect(cRead.value).toEqual(contents('doc://c', 'v1'));
    expect(c.local.reads).toHaveLength(0);

    // The new leader counts the group once the others said hello again.
    await vi.advanceTimersByTimeAsync(GROUP_SETTLE_MS);
    await settle();
    expect(b.tabs()).toMatchObject({ leader: true, tabs: 2, handovers: 1 });
    expect(c.tabs()).toMatchObject({ leader: false, tabs: 2, handovers: 1 });
    await expect(b.sync.whenReady()).resolves.toBe(b.local.sdk);
  });

  it('handover: the new leader holds what the followers show', async () => {
    const { tabs, settle } = await group(3);
    const [a, b, c] = tabs as [Tab, Tab, Tab];
    c.observe('doc://c');
    await settle();
    a.local.answer(0, contents('doc://c', 'v1'));
    await settle();
    await a.leave();
    await settle();
    expect(b.tabs()?.leader).toBe(true);
    expect(b.local.desires.at(-1)?.uris).toEqual(['doc://c']);
  });

  it('handover: the new leader subscribes to what it shows itself', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    b.observe('doc://b');
    await settle();
    a.local.answer(0, contents('doc://b', 'v1'));
    await settle();
    expect(b.local.desires).toEqual([]);
    await a.leave();
    await settle();
    expect(b.tabs()?.leader).toBe(true);
    expect(b.local.desires.at(-1)?.uris).toEqual(['doc://b']);
  });

  it('crash: the leader dies without a goodbye; its locks go, the next tab leads and re-runs the read in flight, the call fails', async () => {
    const { tabs, hub, locks, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const read = b.read('doc://1');
    const call = b.call({ name: 'slow' });
    await settle();
    expect(a.local.reads).toHaveLength(1);

    a.crash();
    await settle();
    expect(hub.sent(a.label, 'bye')).toHaveLength(0);
    expect(locks.held()).not.toContain(tabLock(a.id));
    expect(b.tabs()).toMatchObject({ leader: true, handovers: 1 });
    expect(locks.held()).toContain(LEADER_LOCK);
    expect(call.error).toMatchObject({ code: 'CONNECTION_LOST' });
    expect(b.local.reads.map((r) => r.key)).toEqual([resourceKey('doc://1')]);
    b.local.answer(0, contents('doc://1', 'v1'));
    await settle();
    expect(read.value).toEqual(contents('doc://1', 'v1'));
  });

  it('crash: a follower dies; the leader learns it from the tab’s lock at once, cancels its calls and lets its holds go', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    b.observe('doc://b');
    await settle();
    a.local.answer(0, contents('doc://b', 'v1'));
    const call = b.call({ name: 'slow' });
    await settle();
    expect(a.local.desires.at(-1)?.uris).toEqual(['doc://b']);
    const ran = a.local.calls[0]?.variables.signal as AbortSignal;
    // Long enough after joining that a free lock means a closed tab.
    await vi.advanceTimersByTimeAsync(JOIN_GRACE_MS);

    b.crash();
    await settle();
    expect(a.tabs()).toMatchObject({ leader: true, tabs: 1 });
    expect(ran.aborted).toBe(true);
    expect(ran.reason).toMatchObject({ code: 'SUPERSEDED' });
    expect(call.state).toBe('pending'); // nobody is left to hear about it
    await vi.advanceTimersByTimeAsync(LINGER_MS);
    expect(a.local.desires.at(-1)?.uris).toEqual([]);
  });

  it('crash: a follower that dies right after joining is asked for again after the grace period, then dropped', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    b.crash();
    await settle();
    // Its lock may only not be taken yet: still counted.
    expect(a.tabs()?.tabs).toBe(2);
    await vi.advanceTimersByTimeAsync(JOIN_GRACE_MS);
    await settle();
    expect(a.tabs()?.tabs).toBe(1);
  });
});

describe('a message storm (rule 14, and rule 8 for tab messages)', () => {
  const huge = 'x'.repeat(10_000);
  /** Messages of no shape the group knows: each one is refused before anything acts on it. */
  const malformed = (follower: string): unknown[] => [
    null,
    undefined,
    0,
    Number.NaN,
    '',
    'hello',
    true,
    [],
    [{ type: 'hello', tab: 'x' }],
    {},
    { type: 1 },
    { type: null, tab: 'x' },
    { type: 'HELLO', tab: 'x' },
    { type: 'constructor', tab: 'x' },
    { type: '__proto__', tab: 'x' },
    { type: 'toString', tab: 'x' },
    { type: 'hasOwnProperty', tab: 'x' },
    { type: 'hello' },
    { type: 'hello', tab: '' },
    { type: 'hello', tab: 42 },
    { type: 'hello', tab: huge },
    { type: 'bye', tab: {} },
    { type: 'leader', tab: 'x' },
    { type: 'leader', tab: 'x', handovers: -1 },
    { type: 'leader', tab: 'x', handovers: 1.5 },
    { type: 'group', tabs: 'many', handovers: 0 },
    { type: 'group', tabs: Number.POSITIVE_INFINITY, handovers: 0 },
    { type: 'interest', tab: 'x', keys: 'everything' },
    { type: 'interest', tab: 'x', keys: [[1]] },
    { type: 'interest', tab: 'x', keys: [[]] },
    {
      type: 'interest',
      tab: 'x',
      keys: [['mcp', 's', 'resource', 'a://1', 'more', 'and', 'more']],
    },
    { type: 'interest', tab: 'x', keys: [], answering: 'yes' },
    { type: 'read', tab: 'x', id: -1, key: resourceKey('a://1'), fresh: false },
    { type: 'read', tab: 'x', id: 1.5, key: resourceKey('a://1'), fresh: false },
    { type: 'read', tab: 'x', id: '1', key: resourceKey('a://1'), fresh: false },
    { type: 'read', tab: 'x', id: 2 ** 60, key: resourceKey('a://1'), fresh: false },
    { type: 'read', tab: 'x', id: 1, key: 'resource', fresh: false },
    { type: 'read', tab: 'x', id: 1, key: ['resource', huge], fresh: false },
    { type: 'read', tab: 'x', id: 1, key: resourceKey('a://1'), fresh: 'no' },
    { type: 'call', tab: 'x', id: 1, variables: null },
    { type: 'call', tab: 'x', id: 1, variables: { name: '', progress: false } },
    { type: 'call', tab: 'x', id: 1, variables: { name: 't', arguments: [1], progress: false } },
    { type: 'call', tab: 'x', id: 1, variables: { name: 't' } },
    { type: 'cancel', tab: 'x', id: 'all' },
    { type: 'answer', tab: 'x', id: 1, result: { action: 'steal' } },
    { type: 'answer', tab: 'x', id: 1, result: { action: 'accept', content: 'x' } },
    { type: 'elicitations', items: 'x' },
    { type: 'elicitations', items: [{ id: -1, params: {} }] },
    { type: 'progress', to: follower, id: 1, progress: 5 },
    { type: 'reply', to: follower, id: -1, value: 'x' },
    { type: 'reply', to: follower, id: 1, error: 'boom' },
    { type: 'reply', to: follower, id: 1, error: { name: 1, message: 'x' } },
    { type: 'reply', to: follower, id: 1, updatedAt: 'now' },
    { type: 'data', key: resourceKey('doc://1'), data: {}, updatedAt: 'later' },
    { type: 'data', key: resourceKey('doc://1'), data: {}, updatedAt: Number.NaN },
    { type: 'data', key: 'doc://1', data: {}, updatedAt: 1 },
    { type: 'events', events: 'x' },
    { type: 'events', events: [{ type: 'connection', at: 1 }] },
    { type: 'events', events: [{ type: 'tabs', at: 1, leader: true, tabs: 1, handovers: 0 }] },
    { type: 'events', events: [{ type: 'updated', at: Number.NaN, uri: 'a://1', matched: true }] },
    {
      type: 'events',
      events: [{ type: 'coverage', at: 1, acknowledged: 'all', lost: [], lists: [] }],
    },
    { type: 'events', events: [{ type: 'read', at: 1, uri: '', phase: 'start' }] },
    { type: 'events', events: [{ type: 'list_changed', at: 1, list: 'everything' }] },
  ];
  /** Malformed by size: more than a tab may ask for or a message may carry. */
  const oversized = (follower: string): unknown[] => [
    {
      type: 'interest',
      tab: 'x',
      keys: Array.from({ length: 10_001 }, (_, i) => resourceKey(`a://${i}`)),
    },
    { type: 'elicitations', to: follower, items: Array(1001).fill({ id: 1, params: {} }) },
    {
      type: 'events',
      events: Array(1001).fill({ type: 'list_changed', at: 1, list: 'tools' }),
    },
  ];

  it('thousands of malformed messages: nothing throws, nothing is acted on, no entry is emptied or planted', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const view = b.observe('doc://1');
    await settle();
    a.local.answer(0, contents('doc://1', 'v1'));
    await settle();
    b.queryClient.setQueryData(resourceKey('idle://1'), contents('idle://1', 'kept'));
    const postedBefore = hub.posted.length;
    const eventsBefore = { a: a.events.length, b: b.events.length };

    const messages = malformed(b.id);
    for (const message of [...messages, ...oversized(b.id)]) {
      expect(parseTabMessage(message), JSON.stringify(message)?.slice(0, 120)).toBeUndefined();
    }
    for (let i = 0; i < 5000; i++) hub.inject(GROUP, messages[i % messages.length]);
    for (const message of oversized(b.id)) hub.inject(GROUP, message);
    // Well-formed, but content that would empty an entry, or plant one nobody asked for.
    const later = Date.now() + 1000;
    for (const data of [
      { contents: [] },
      { contents: 'v2' },
      'v2',
      null,
      [contents('doc://1', 'v2')],
    ]) {
      hub.inject(GROUP, { type: 'data', key: resourceKey('doc://1'), data, updatedAt: later });
    }
    hub.inject(GROUP, {
      type: 'data',
      key: resourceKey('idle://1'),
      data: contents('idle://1', 'planted'),
      updatedAt: later,
    });
    hub.inject(GROUP, {
      type: 'data',
      key: resourceKey('never://1'),
      data: contents('never://1', 'planted'),
      updatedAt: later,
    });
    await settle();

    expect(hub.errors).toEqual([]);
    // Nobody answered anything: the only messages are the storm's.
    expect(hub.posted.length - postedBefore).toBe(5000 + 3 + 7);
    expect(a.events.length).toBe(eventsBefore.a);
    expect(b.events.length).toBe(eventsBefore.b);
    expect(view.data()).toEqual(contents('doc://1', 'v1'));
    expect(b.queryClient.getQueryData(resourceKey('idle://1'))).toEqual(
      contents('idle://1', 'kept'),
    );
    expect(b.queryClient.getQueryData(resourceKey('never://1'))).toBeUndefined();
    expect(a.local.reads).toHaveLength(1);
    expect(a.local.calls).toHaveLength(0);
    expect(a.tabs()).toMatchObject({ leader: true, tabs: 2 });
    expect(b.tabs()).toMatchObject({ leader: false, tabs: 2 });

    // And the group still works.
    const read = b.read('doc://2');
    await settle();
    a.local.answerKey(resourceKey('doc://2'), contents('doc://2', 'v1'));
    await settle();
    expect(read.value).toEqual(contents('doc://2', 'v1'));
  });

  it('content of another resource is not taken from the channel, as a read answering it would be refused (WRONG_URI)', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const view = b.observe('doc://1');
    await settle();
    a.local.answer(0, contents('doc://1', 'v1'));
    await settle();
    hub.inject(GROUP, {
      type: 'data',
      key: resourceKey('doc://1'),
      data: contents('evil://elsewhere', 'planted'),
      updatedAt: Date.now() + 1000,
    });
    await settle();
    expect(view.data()).toEqual(contents('doc://1', 'v1'));
  });

  it('hundreds of made-up tabs: the leader serves at most MAX_TABS, and drops them once their locks show nobody is there', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    for (let i = 0; i < 400; i++) hub.inject(GROUP, { type: 'hello', tab: `ghost-${i}` });
    await settle();
    expect(hub.errors).toEqual([]);
    expect(a.tabs()).toMatchObject({ leader: true, tabs: MAX_TABS + 1 });
    expect(b.tabs()).toMatchObject({ leader: false, tabs: MAX_TABS + 1 });

    // A tab past the cap is not served at all: no read, only a refusal (so it does not wait).
    hub.inject(GROUP, {
      type: 'read',
      tab: 'ghost-399',
      id: 1,
      key: resourceKey('ghost://399'),
      fresh: false,
    });
    hub.inject(GROUP, { type: 'interest', tab: 'ghost-398', keys: [resourceKey('ghost://398')] });
    await settle();
    expect(a.local.reads).toHaveLength(0);
    const toGhosts = hub
      .sent(a.label, 'reply')
      .filter((reply) => /^ghost-39[89]$/.test((reply as { to: string }).to));
    expect(toGhosts).toEqual([
      expect.objectContaining({
        to: 'ghost-399',
        id: 1,
        stranger: true,
        error: expect.objectContaining({ message: expect.stringMatching(/serves at most/) }),
      }),
    ]);
    expect(toGhosts[0]).not.toHaveProperty('value');
    expect(a.local.desires.flatMap((desire) => desire.uris)).not.toContain('ghost://398');

    // No made-up tab holds a lock: once the grace after joining has passed, they are gone.
    await vi.advanceTimersByTimeAsync(JOIN_GRACE_MS);
    await settle();
    expect(a.tabs()).toMatchObject({ leader: true, tabs: 2 });
    expect(b.tabs()).toMatchObject({ leader: false, tabs: 2 });
    expect(hub.errors).toEqual([]);
  });

  it('a tab whose first words to the leader are reads (its hello came before anyone led) is counted in the group and told the group state at once', async () => {
    const { tabs, hub, settle } = await group(1);
    const [a] = tabs as [Tab];
    expect(a.tabs()).toMatchObject({ leader: true, tabs: 1 });
    // What a tab that said hello while no tab led yet sends once it hears the leader: its
    // pending reads, then its interest.
    hub.inject(GROUP, {
      type: 'read',
      tab: 'late',
      id: 1,
      key: resourceKey('doc://1'),
      fresh: false,
    });
    hub.inject(GROUP, { type: 'interest', tab: 'late', keys: [resourceKey('doc://1')] });
    await settle();
    expect(a.tabs()).toMatchObject({ leader: true, tabs: 2 });
    expect(hub.sent(a.label, 'group').at(-1)).toMatchObject({ tabs: 2 });
    // Nobody answered its hello: what the leader's connection is now goes to it at once, as
    // an answer to a hello would (else it shows "connecting" until the connection changes).
    const welcome = hub
      .sent(a.label, 'events')
      .filter((message) => (message as { to?: string }).to === 'late') as Array<{
      events: McpEvent[];
    }>;
    expect(welcome).toHaveLength(1);
    expect(welcome[0]?.events.map((event) => event.type)).toContain('connection');
  });

  it('a message in the leader’s own name is another script’s: the leader never counts itself as a member', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a] = tabs as [Tab, Tab];
    const own = (hub.sent(a.label, 'leader')[0] as { tab: string }).tab;
    hub.inject(GROUP, { type: 'hello', tab: own });
    hub.inject(GROUP, { type: 'interest', tab: own, keys: [resourceKey('own://x')] });
    await settle();
    await vi.advanceTimersByTimeAsync(JOIN_GRACE_MS);
    await settle();
    expect(a.tabs()).toMatchObject({ leader: true, tabs: 2 });
    expect(a.local.desires.flatMap((desire) => desire.uris)).not.toContain('own://x');
  });

  it('one tab’s reads and calls running on the leader are capped at MAX_REQUESTS_PER_TAB; the rest are refused at once', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const extra = 44;
    for (let id = 1; id <= MAX_REQUESTS_PER_TAB + extra; id++) {
      hub.inject(GROUP, {
        type: 'read',
        tab: 'reader',
        id,
        key: resourceKey(`flood://${id}`),
        fresh: false,
      });
      hub.inject(GROUP, {
        type: 'call',
        tab: 'caller',
        id,
        variables: { name: 'spam', progress: false },
      });
    }
    await settle();
    expect(hub.errors).toEqual([]);
    expect(a.local.reads).toHaveLength(MAX_REQUESTS_PER_TAB);
    expect(a.local.calls).toHaveLength(MAX_REQUESTS_PER_TAB);
    const refused = (to: string) =>
      hub
        .sent(a.label, 'reply')
        .filter((reply) => (reply as { to: string }).to === to)
        .map((reply) => (reply as { error?: { message: string } }).error?.message);
    expect(refused('reader')).toEqual(Array(extra).fill('too many requests from one tab at once'));
    expect(refused('caller')).toEqual(Array(extra).fill('too many requests from one tab at once'));

    // Another tab is served as before.
    const read = b.read('doc://1');
    await settle();
    a.local.answerKey(resourceKey('doc://1'), contents('doc://1', 'v1'));
    await settle();
    expect(read.value).toEqual(contents('doc://1', 'v1'));

    // As requests finish, the tab may run more.
    a.local.answer(0, contents('flood://1', 'v1'));
    await settle();
    hub.inject(GROUP, {
      type: 'read',
      tab: 'reader',
      id: 1000,
      key: resourceKey('flood://1000'),
      fresh: false,
    });
    await settle();
    expect(a.local.reads.at(-1)?.key).toEqual(resourceKey('flood://1000'));
  });
});
