/**
 * What a follower takes from the channel (rule 8 for tab messages, SECURITY.md "Tabs"): any
 * script of the origin can post a reply or content, so a follower takes only what a read of
 * that key could have returned, dated no later than now. Fake tabs as in roles.test.ts.
 */
import { QueryObserver } from '@tanstack/query-core';
import { describe, expect, it, vi } from 'vitest';
import { createServerRequests } from '../../src/core';
import { toolListQueryOptions } from '../../src/core/queryOptions';
import { track } from '../support/deferred';
import {
  browser,
  contents,
  GROUP,
  group,
  readIn,
  resourceKey,
  type Tab,
  withFakeTabs,
} from '../support/tabsHarness';

withFakeTabs();

describe('what a follower takes from the channel (rule 8, rule 14)', () => {
  it('a reply to a read with another resource’s content is refused (WRONG_URI), and its date in the far future does not shut out later content', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const read = track(
      b.queryClient.fetchQuery({ ...b.sync.resourceQueryOptions('doc://1'), retry: false }),
    );
    const view = b.observe('doc://1');
    await settle();
    const { id } = hub.sent(b.label, 'read')[0] as { id: number };
    hub.inject(GROUP, {
      type: 'reply',
      to: b.id,
      id,
      value: contents('evil://elsewhere', 'planted'),
      updatedAt: 8.64e15,
    });
    await settle();
    expect(read.error).toMatchObject({ code: 'WRONG_URI' });
    expect(view.data()).toBeUndefined();

    a.local.answer(0, contents('doc://1', 'v1'));
    await settle();
    expect(view.data()).toEqual(contents('doc://1', 'v1'));
    // Content dated far ahead is not taken either: it would shut out every later read.
    hub.inject(GROUP, {
      type: 'data',
      key: resourceKey('doc://1'),
      data: contents('doc://1', 'planted'),
      updatedAt: 8.64e15,
    });
    await settle();
    expect(view.data()).toEqual(contents('doc://1', 'v1'));

    await vi.advanceTimersByTimeAsync(1000);
    void a.queryClient.invalidateQueries({ queryKey: resourceKey('doc://1') });
    await settle();
    a.local.answerKey(resourceKey('doc://1'), contents('doc://1', 'v2'));
    await settle();
    expect(view.data()).toEqual(contents('doc://1', 'v2'));
  });

  it('a reply to a read dated in the future is refused, its content with it', async () => {
    const { tabs, hub, settle } = await group(2);
    const [, b] = tabs as [Tab, Tab];
    const read = track(
      b.queryClient.fetchQuery({ ...b.sync.resourceQueryOptions('doc://1'), retry: false }),
    );
    await settle();
    const { id } = hub.sent(b.label, 'read')[0] as { id: number };
    hub.inject(GROUP, {
      type: 'reply',
      to: b.id,
      id,
      value: contents('doc://1', 'planted'),
      updatedAt: 8.64e15,
    });
    await settle();
    expect(read.error).toMatchObject({
      message: expect.stringMatching(/ahead of this tab's clock/),
    });
    expect(b.queryClient.getQueryData(resourceKey('doc://1'))).toBeUndefined();
  });

  it('a list whose items are not of the list’s kind is not taken: a tool list of [null, 7, "x"] stays the tools read', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const tools = new QueryObserver(b.queryClient, toolListQueryOptions() as never);
    const stop = tools.subscribe(() => {});
    await settle();
    const read = [{ name: 'echo', inputSchema: { type: 'object' } }];
    a.local.answerKey(['tools'], read);
    await settle();
    expect(tools.getCurrentResult().data).toEqual(read);
    const later = Date.now() + 500;
    for (const data of [[null, 7, 'x'], [{ name: 7 }], [{}]]) {
      hub.inject(GROUP, { type: 'data', key: ['tools'], data, updatedAt: later });
    }
    await settle();
    expect(tools.getCurrentResult().data).toEqual(read);
    stop();
  });

  it('a reply to a tool call that is not a tool result (null, text, content not a list) fails the call, saying it may have run; the app never gets it as the result', async () => {
    const { tabs, hub, settle } = await group(2);
    const [, b] = tabs as [Tab, Tab];
    const bad = [
      null,
      'done',
      7,
      { content: 'hi' },
      { content: [null] },
      { content: [], isError: 'yes' },
    ];
    for (const value of bad) {
      const call = b.call({ name: 'echo' });
      await settle();
      const { id } = hub.sent(b.label, 'call').at(-1) as { id: number };
      hub.inject(GROUP, { type: 'reply', to: b.id, id, value });
      await settle();
      expect(call.state).toBe('rejected');
      expect(String(call.error)).toMatch(/may or may not have run/);
      // Nobody waits for it any more: if it still runs on the leader, it stops there.
      expect(hub.sent(b.label, 'cancel').at(-1)).toMatchObject({ id });
    }
  });

  it('progress of a call that is not a progress notification (its count not a number, its message not text) does not reach onProgress', async () => {
    const { tabs, hub, settle } = await group(2);
    const [, b] = tabs as [Tab, Tab];
    const onProgress = vi.fn();
    b.call({ name: 'slow', onProgress });
    await settle();
    const { id } = hub.sent(b.label, 'call')[0] as { id: number };
    for (const progress of [
      {},
      { progress: '1' },
      { progress: 1, message: { html: 'x' } },
      { progress: 1, total: 'all' },
    ]) {
      hub.inject(GROUP, { type: 'progress', to: b.id, id, progress });
    }
    await settle();
    expect(onProgress).not.toHaveBeenCalled();
    hub.inject(GROUP, {
      type: 'progress',
      to: b.id,
      id,
      progress: { progress: 1, total: 2, message: 'half' },
    });
    await settle();
    expect(onProgress).toHaveBeenCalledWith({ progress: 1, total: 2, message: 'half' });
  });

  it('a question from the channel that the tab’s own connection would never show (a javascript: link, no message, a form without a schema) is not shown', async () => {
    const b = browser();
    b.open();
    await b.settle();
    const requests = createServerRequests({ elicitation: { form: true, url: true } });
    const follower = b.open({ serverRequests: requests });
    await b.settle();
    const stop = requests.subscribeElicitations(() => {});
    const fair = { message: 'Who are you?', requestedSchema: { type: 'object', properties: {} } };
    b.hub.inject(GROUP, {
      type: 'elicitations',
      items: [
        {
          id: 1,
          params: {
            mode: 'url',
            message: 'Sign in',
            url: 'javascript:alert(1)',
            elicitationId: 'e1',
          },
        },
        {
          id: 2,
          params: {
            message: { html: '<b>x</b>' },
            requestedSchema: { type: 'object', properties: {} },
          },
        },
        { id: 3, params: { message: 'Who?' } },
        {
          id: 4,
          params: { message: 'Who?', requestedSchema: { type: 'object', properties: 'name' } },
        },
        { id: 5, params: fair },
      ],
    });
    await b.settle();
    expect(requests.getElicitations().map((entry) => entry.id)).toEqual([5]);
    expect(follower.tabs()?.leader).toBe(false);
    stop();
  });

  it('connection state from the channel that is not one (an unknown status, an error whose message is not text, a count that is not a number) is not what useMcp shows', async () => {
    const { tabs, hub, settle } = await group(2);
    const [, b] = tabs as [Tab, Tab];
    const ready = {
      phase: 'ready',
      era: 'legacy',
      protocolVersion: '2025-06-18',
      capabilities: {},
      error: undefined,
      attempt: 0,
      nextRetryAt: undefined,
      reconnects: 0,
      lastLoss: undefined,
    };
    const at = Date.now();
    hub.inject(GROUP, { type: 'events', events: [{ type: 'connection', at, state: ready }] });
    await settle();
    expect(b.sync.getState()).toMatchObject({ status: 'ready', attempt: 0 });
    const misshapen = [
      { ...ready, phase: 'hacked' },
      { ...ready, phase: 'error', error: { message: { html: '<b>x</b>' } } },
      { ...ready, phase: 'error', error: 'down' },
      { ...ready, attempt: 'many' },
      { ...ready, nextRetryAt: 'soon' },
      { ...ready, era: { name: 'x' } },
      { ...ready, protocolVersion: 7 },
      { ...ready, capabilities: 'all' },
      { ...ready, reconnects: -1 },
      { ...ready, lastLoss: { reason: 'x' } },
    ];
    for (const state of misshapen) {
      hub.inject(GROUP, { type: 'events', events: [{ type: 'connection', at, state }] });
      await settle();
      const shown = b.sync.getState();
      expect(shown).toMatchObject({ status: 'ready', attempt: 0, error: undefined });
      expect([shown.era, shown.protocolVersion, shown.capabilities]).toEqual([
        'legacy',
        '2025-06-18',
        {},
      ]);
      expect(shown.nextRetryAt).toBeUndefined();
    }
    // What diagnostics show of the connection (its losses) was not taken either.
    const last = b.events.findLast((event) => event.type === 'connection');
    expect(last).toMatchObject({ state: { lastLoss: undefined, reconnects: 0 } });
  });

  it('a stream status from the channel that is not one (an unknown state, a count or date that is not a number, an error that is not text) is not what useMcp and diagnostics show', async () => {
    const { tabs, hub, settle } = await group(2);
    const [, b] = tabs as [Tab, Tab];
    const at = Date.now();
    const state = { phase: 'ready', attempt: 0, reconnects: 0, capabilities: {} };
    const reopening = {
      kind: 'listen',
      state: 'reopening',
      since: at,
      reopenCount: 1,
      lastCloseReason: 'error',
      attempt: 2,
      nextRetryAt: at + 1000,
      lastError: 'the stream broke',
      note: undefined,
    };
    const events = (...list: unknown[]) => hub.inject(GROUP, { type: 'events', events: list });
    events({ type: 'connection', at, state }, { type: 'stream', at, status: reopening });
    await settle();
    expect(b.sync.getState()).toMatchObject({ status: 'reconnecting', attempt: 2 });
    const misshapen = [
      { ...reopening, state: 'hacked' },
      { ...reopening, kind: 'websocket' },
      { ...reopening, attempt: 'many' },
      { ...reopening, nextRetryAt: 'soon' },
      { ...reopening, lastError: { html: '<b>x</b>' } },
      { ...reopening, note: { html: '<b>x</b>' } },
      { ...reopening, reopenCount: -1 },
      { ...reopening, since: 'then' },
      { ...reopening, lastCloseReason: { why: 'x' } },
    ];
    for (const status of misshapen) {
      events({ type: 'stream', at, status });
      await settle();
      expect(b.sync.getState()).toMatchObject({ status: 'reconnecting', attempt: 2 });
      expect(b.events.findLast((event) => event.type === 'stream')).toMatchObject({
        status: reopening,
      });
    }
  });

  it('a read or list event from the channel whose error, digest or count is not of its type is not taken (diagnostics and devtools show them)', async () => {
    const { tabs, hub, settle } = await group(2);
    const [, b] = tabs as [Tab, Tab];
    const at = Date.now();
    const sent = [
      { type: 'read', at, phase: 'error', uri: 'doc://fair', error: 'gone' },
      { type: 'read', at, phase: 'error', uri: 'doc://1', error: { html: '<b>x</b>' } },
      { type: 'read', at, phase: 'success', uri: 'doc://2', digest: 42 },
      { type: 'list', at, list: 'tools', phase: 'success', count: 'all' },
      { type: 'list', at, list: 'tools', phase: 'error', error: ['x'] },
      { type: 'list', at, list: 'prompts', phase: 'success', count: 3 },
    ];
    for (const event of sent) hub.inject(GROUP, { type: 'events', events: [event] });
    await settle();
    const taken = b.events.filter((event) => event.type === 'read' || event.type === 'list');
    expect(taken).toEqual([sent[0], sent[5]]);
  });

  it('a failed reply whose error code is neither text nor a number is not taken: the request waits for the leader’s own reply', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const read = readIn(b, 'doc://1');
    await settle();
    const { id } = hub.sent(b.label, 'read')[0] as { id: number };
    const error = { name: 'McpQueryError', message: 'no', code: { html: '<b>x</b>' } };
    hub.inject(GROUP, { type: 'reply', to: b.id, id, error });
    await settle();
    expect(read.state).toBe('pending');
    a.local.answer(0, contents('doc://1', 'v1'));
    await settle();
    expect(read.value).toEqual(contents('doc://1', 'v1'));
  });
});
