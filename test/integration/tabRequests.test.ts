/**
 * Issue 21 through tab sharing, on the three real servers: a follower tab's prompts,
 * completions, log messages and cancellations go through the leading tab's one connection.
 * Tabs as in tabs.test.ts: each its own McpCacheSync and QueryClient, elected with in-memory
 * Web Locks, talking over Node's BroadcastChannel.
 */
import type { GetPromptResult } from '@modelcontextprotocol/client';
import { QueryObserver } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool } from '../../src/core';
import { completionQueryOptions } from '../../src/core/completions';
import { promptQueryOptions } from '../../src/core/prompts';
import { serverLog } from '../../src/core/serverLog';
import type { TestServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { ERA_CASES, start } from '../support/eras';
import { BrowserLocks, openTab } from '../support/tabs';
import { eventually, idle } from '../support/wait';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

function browser(server: TestServer) {
  const locks = new BrowserLocks();
  return () => {
    const tab = openTab(
      locks,
      { url: server.url, lingerMs: 10, reconnect: { initialDelayMs: 20, maxDelayMs: 100 } },
      { livenessMs: 100 },
    );
    cleanups.push(tab.close);
    return tab;
  };
}

async function group(kind: (typeof ERA_CASES)[number]['kind']) {
  const server = await start(kind);
  server.store.setPrompts([
    { name: 'greet', arguments: [{ name: 'who' }], completions: { who: ['Ann', 'Bob'] } },
  ]);
  server.store.setTools([
    { name: 'chatty', log: [{ level: 'error', data: 'bad' }] },
    { name: 'slow', progress: 1, hold: true },
  ]);
  cleanups.push(() => server.close());
  const open = browser(server);
  const leader = open();
  await eventually(() => expect(leader.tabs()?.leader).toBe(true));
  const follower = open();
  await eventually(() => expect(follower.tabs()?.tabs).toBe(2));
  await eventually(() => expect(follower.sync.getState().status).toBe('ready'));
  return { server, leader, follower };
}

const textOf = (result: GetPromptResult | undefined) => {
  const content = result?.messages[0]?.content;
  return content?.type === 'text' ? content.text : undefined;
};

describe.each(ERA_CASES)(
  'prompts, completions, logs and cancel across tabs ($kind)',
  ({ kind, era }) => {
    it("a follower's prompt is read by the leader and kept fresh by prompts/list_changed", async () => {
      const { server, leader, follower } = await group(kind);
      const observer = new QueryObserver(
        follower.queryClient,
        promptQueryOptions('greet', { who: 'Ann' }),
      );
      cleanups.push(observer.subscribe(() => {}));
      const text = () => textOf(observer.getCurrentResult().data);
      await eventually(() => expect(text()).toBe('prompt greet rev 1 with {"who":"Ann"}'));
      // The leader's connection delivers the prompts list's notifications (gaining them may
      // re-read), and neither tab fetches (a follower's query waits for the leader's read).
      await eventually(() => expect(diagnosticsOf(leader.sync).lists.prompts).toBe(true));
      const allIdle = () => Promise.all([idle(leader.queryClient), idle(follower.queryClient)]);
      await allIdle();
      const before = server.counters().promptGets;
      const notified = diagnosticsOf(leader.sync).counters.promptsListChanged;
      server.store.extras.promptRevision = 2;
      server.promptsChanged();
      await eventually(() => expect(text()).toBe('prompt greet rev 2 with {"who":"Ann"}'));
      await eventually(() =>
        expect(diagnosticsOf(leader.sync).counters.promptsListChanged).toBe(notified + 1),
      );
      await allIdle();
      expect(server.counters().promptGets - before).toBe(1);
    });

    it("a follower's completion goes through the leader", async () => {
      const { server, follower } = await group(kind);
      const answer = await follower.queryClient.fetchQuery(
        completionQueryOptions({
          ref: { type: 'ref/prompt', name: 'greet' },
          argument: 'who',
          value: 'a',
        }),
      );
      expect(answer.completion.values).toEqual(['Ann']);
      expect(server.store.extras.completeRequests).toBe(1);
    });

    it("a follower's log level reaches the server through the leader, and its messages come back", async () => {
      const { server, follower } = await group(kind);
      const log = serverLog(follower.sync);
      const release = log.ask('error');
      cleanups.push(release);
      if (era === 'legacy')
        await eventually(() => expect(server.counters().setLevelRequests).toBe(1));
      else {
        // The level goes to the leader with this tab's next interest message, a microtask after
        // ask(). Once a round trip through the leader has ended, that message has been sent, so
        // the call below follows it on the same channel, and the leader handles them in order.
        await follower.queryClient.fetchQuery(promptQueryOptions('greet', { who: 'Bob' }));
      }
      await callTool(follower.sync, { name: 'chatty' });
      await eventually(() =>
        expect(log.store.get().entries.map((entry) => entry.data)).toEqual(['bad']),
      );
    });

    it("a follower's cancel reaches the server, and its call settles as CANCELLED", async () => {
      const { server, follower } = await group(kind);
      const controller = new AbortController();
      const progress: number[] = [];
      const running = callTool(follower.sync, {
        name: 'slow',
        signal: controller.signal,
        onProgress: (p) => progress.push(p.progress),
      });
      running.catch(() => {});
      await eventually(() => expect(progress).toEqual([1]));
      controller.abort();
      await expect(running).rejects.toMatchObject({ code: 'CANCELLED' });
      await eventually(() => expect(server.store.extras.cancelledCalls).toEqual(['slow']));
    });
  },
);
