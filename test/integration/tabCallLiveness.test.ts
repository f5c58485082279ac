/**
 * A follower's tool call through a leader that stops talking (rule 14): the leader holds the
 * lock (alive) but its page is frozen, or its code stuck. The follower gives up on the call once
 * the leader has shown no sign of working on it for twice the follower's `requestTimeoutMs`, as
 * on a read, not after the call's own bound (about an hour by default); a call the leader says it
 * still runs, or sends progress for, waits on. On a real server, tabs as in tabRequests.test.ts,
 * on real timers: every wait here is for a condition, and the follower's requestTimeoutMs is
 * short.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, type McpCacheSyncOptions } from '../../src/core';
import { MAX_REQUESTS_PER_TAB } from '../../src/tabs/leader';
import { deferred, track } from '../support/deferred';
import { start, text } from '../support/eras';
import { BrowserLocks, openTab } from '../support/tabs';
import { eventually } from '../support/wait';

/** The follower's requestTimeoutMs: it gives up on a silent leader after twice this. */
const FOLLOWER_TIMEOUT_MS = 1000;
/** How many progress notifications the ticking tool sends, and how far apart. */
const TICKS = 15;
const TICK_MS = 200;
const URI = 'doc://held';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function group(followerOptions: Partial<McpCacheSyncOptions> = {}) {
  const server = await start('modern');
  server.store.setTools([
    { name: 'held', hold: true },
    { name: 'ticking', progress: TICKS, stepMs: TICK_MS },
    { name: 'quick' },
  ]);
  cleanups.push(() => {
    server.store.extras.release();
    return server.close();
  });
  const locks = new BrowserLocks();
  const open = (requestTimeoutMs?: number, extra: Partial<McpCacheSyncOptions> = {}) => {
    const tab = openTab(
      locks,
      {
        url: server.url,
        lingerMs: 10,
        reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
        ...(requestTimeoutMs !== undefined && { requestTimeoutMs }),
        ...extra,
      },
      { livenessMs: 100 },
    );
    cleanups.push(tab.close);
    return tab;
  };
  const leader = open();
  await eventually(() => expect(leader.tabs()?.leader).toBe(true));
  const follower = open(FOLLOWER_TIMEOUT_MS, followerOptions);
  await eventually(() => expect(follower.tabs()?.tabs).toBe(2));
  await eventually(() => expect(follower.sync.getState().status).toBe('ready'));
  return { server, leader, follower };
}

describe('a follower’s call through a leader that stops talking (rule 14)', () => {
  it('a call the leader went silent about fails after twice requestTimeoutMs, not its hour-long bound, saying it may or may not have run, and is not run again', async () => {
    const { server, leader, follower } = await group();
    // Its bound: twice toolMaxTotalTimeoutMs (30 min by default) and more.
    const call = track(callTool(follower.sync, { name: 'held' }));
    await eventually(() => expect(server.store.extras.held()).toBe(1));
    leader.channels.freeze();
    await eventually(() => expect(call.state).toBe('rejected'), {
      timeout: 12 * FOLLOWER_TIMEOUT_MS,
    });
    expect(call.error).toMatchObject({ code: 'NOT_CONNECTED' });
    expect(String(call.error)).toMatch(/may or may not have run/);
    expect(server.counters().toolCalls).toBe(1);
  });

  it('a call the leader says it still runs waits on past twice requestTimeoutMs, and gets its result', async () => {
    const { server, follower } = await group();
    const call = track(callTool(follower.sync, { name: 'held' }));
    await eventually(() => expect(server.store.extras.held()).toBe(1));
    // The follower asks only after two thirds of its requestTimeoutMs without a word from the
    // leader: four answers mean it has waited longer than a silent leader is waited for.
    await eventually(
      () => expect(follower.channels.heard('working').length).toBeGreaterThanOrEqual(4),
      { timeout: 12 * FOLLOWER_TIMEOUT_MS },
    );
    expect(call.state).toBe('pending');
    server.store.extras.release();
    await eventually(() => expect(call.state).toBe('resolved'));
    expect(call.value?.isError).not.toBe(true);
    expect(server.counters().toolCalls).toBe(1);
  });

  it('progress the leader forwards keeps a call waiting, from a leader that hears no question', async () => {
    const { server, leader, follower } = await group();
    const progress: number[] = [];
    const call = track(
      callTool(follower.sync, {
        name: 'ticking',
        onProgress: (step) => progress.push(step.progress),
      }),
    );
    await eventually(() => expect(progress.length).toBeGreaterThan(0));
    // From here the leader hears nothing the follower asks (as a leader of a version that does
    // not answer), but its progress still comes: the call outlasts twice requestTimeoutMs.
    leader.channels.deafen();
    await eventually(() => expect(call.state).not.toBe('pending'), {
      timeout: TICKS * TICK_MS + 10 * FOLLOWER_TIMEOUT_MS,
    });
    expect(call.error).toBeUndefined();
    expect(progress).toHaveLength(TICKS);
    expect(server.counters().toolCalls).toBe(1);
  });

  // Options durations.ts takes (at most 2^31 - 1 ms each) make the follower's own bounds longer
  // than a timer holds (twice toolMaxTotalTimeoutMs, about sixty requestTimeoutMs for a read): a
  // timer given one fires at once, and gave up on what the leader still ran.
  it('a call of a follower whose toolMaxTotalTimeoutMs is 2^31 - 1 waits for the leader', async () => {
    const { server, follower } = await group({ toolMaxTotalTimeoutMs: 2 ** 31 - 1 });
    const call = track(callTool(follower.sync, { name: 'held' }));
    await eventually(() => expect(server.store.extras.held()).toBe(1));
    await eventually(() => expect(follower.channels.heard('working').length).toBeGreaterThan(0), {
      timeout: 6 * FOLLOWER_TIMEOUT_MS,
    });
    expect(call.state).toBe('pending');
    server.store.extras.release();
    await eventually(() => expect(call.state).toBe('resolved'));
    expect(call.value?.isError).not.toBe(true);
    expect(server.counters().toolCalls).toBe(1);
  });

  it('a read of a follower whose requestTimeoutMs is 2^31 - 1 waits for the leader', async () => {
    const { server, follower } = await group({ requestTimeoutMs: 2 ** 31 - 1 });
    server.store.upsert(text(URI, 'v1'));
    const answer = deferred();
    cleanups.push(() => answer.resolve());
    let reads = 0;
    server.store.onRead(async (uri) => {
      if (uri !== URI) return;
      reads += 1;
      await answer.promise;
    });
    const read = track(
      follower.queryClient.fetchQuery({ ...follower.sync.resourceQueryOptions(URI), retry: false }),
    );
    await eventually(() => expect(reads).toBe(1));
    answer.resolve();
    await eventually(() => expect(read.state).not.toBe('pending'));
    expect(read.error).toBeUndefined();
    expect(read.value).toMatchObject({ contents: [{ uri: URI, text: 'v1' }] });
  });

  // A read TanStack cancelled (its row scrolled away) gives its place up at once, here and on
  // the leader, which still runs it (one flight for every tab). It kept its place until the
  // leader replied: a call made behind 256 of them waited for the leader's reads to end.
  it('a call made after reads this tab cancelled, which the leader still runs, is sent and run at once', async () => {
    const { server, follower } = await group();
    const uris = Array.from({ length: MAX_REQUESTS_PER_TAB }, (_, index) => `doc://row/${index}`);
    for (const uri of uris) server.store.upsert(text(uri, uri));
    const gate = deferred();
    cleanups.push(() => gate.resolve());
    let reads = 0;
    server.store.onRead(async (uri) => {
      if (!uri.startsWith('doc://row/')) return;
      reads += 1;
      await gate.promise;
    });
    const rows = uris.map((uri) =>
      track(
        follower.queryClient.fetchQuery({
          ...follower.sync.resourceQueryOptions(uri),
          retry: false,
        }),
      ),
    );
    // The leader reads them in turns: the first turns reach the server and wait there.
    await eventually(() => expect(reads).toBeGreaterThan(0));
    await follower.queryClient.cancelQueries();
    await eventually(() => expect(rows.every((row) => row.state === 'rejected')).toBe(true));
    const call = track(callTool(follower.sync, { name: 'quick' }));
    // The leader's reads still wait at the server (the gate is shut): the call ran beside them.
    await eventually(() => expect(call.state).toBe('resolved'));
    expect(call.value?.isError).not.toBe(true);
    expect(server.counters().toolCalls).toBe(1);
    gate.resolve();
  });
});
