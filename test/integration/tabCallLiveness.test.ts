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
import { callTool } from '../../src/core';
import { track } from '../support/deferred';
import { start } from '../support/eras';
import { BrowserLocks, openTab } from '../support/tabs';
import { eventually } from '../support/wait';

/** The follower's requestTimeoutMs: it gives up on a silent leader after twice this. */
const FOLLOWER_TIMEOUT_MS = 1000;
/** How many progress notifications the ticking tool sends, and how far apart. */
const TICKS = 15;
const TICK_MS = 200;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});

async function group() {
  const server = await start('modern');
  server.store.setTools([
    { name: 'held', hold: true },
    { name: 'ticking', progress: TICKS, stepMs: TICK_MS },
  ]);
  cleanups.push(() => {
    server.store.extras.release();
    return server.close();
  });
  const locks = new BrowserLocks();
  const open = (requestTimeoutMs?: number) => {
    const tab = openTab(
      locks,
      {
        url: server.url,
        lingerMs: 10,
        reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
        ...(requestTimeoutMs !== undefined && { requestTimeoutMs }),
      },
      { livenessMs: 100 },
    );
    cleanups.push(tab.close);
    return tab;
  };
  const leader = open();
  await eventually(() => expect(leader.tabs()?.leader).toBe(true));
  const follower = open(FOLLOWER_TIMEOUT_MS);
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
});
