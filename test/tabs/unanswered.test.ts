/**
 * A follower whose leader does not answer (rule 14): a request that times out frees its place,
 * a read the leader says it still runs is waited for, but not for ever, and a leader that does
 * not serve a tab (its roster full) says so instead of staying silent.
 * Fake tabs as in roles.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { MAX_REQUESTS_PER_TAB } from '../../src/tabs/leader';
import { MAX_TABS } from '../../src/tabs/members';
import { readBoundMs } from '../../src/tabs/serving';
import { track } from '../support/deferred';
import {
  contents,
  GROUP,
  group,
  REQUEST_TIMEOUT_MS,
  readIn,
  resourceKey,
  silentLeader,
  type Tab,
  tabLock,
  withFakeTabs,
} from '../support/tabsHarness';

withFakeTabs();

/**
 * Two tabs, the follower's read of doc://1 running on the leader, never ending there (its
 * connection never answers), and the leader says so when asked.
 */
async function readTheLeaderRuns() {
  const { tabs, hub, settle } = await group(2);
  const [a, b] = tabs as [Tab, Tab];
  const read = track(
    b.queryClient.fetchQuery({ ...b.sync.resourceQueryOptions('doc://1'), retry: false }),
  );
  await settle();
  expect(a.local.reads).toHaveLength(1);
  return { a, b, hub, settle, read };
}

describe('a leader that does not answer (rule 14)', () => {
  it('a read that timed out frees its place: a tab whose leader never answers sends its next reads at once', async () => {
    const { hub, settle, follower: b } = await silentLeader();
    for (let i = 0; i < MAX_REQUESTS_PER_TAB; i++) b.read(`doc://${i}`);
    await settle();
    expect(hub.sent(b.label, 'read')).toHaveLength(MAX_REQUESTS_PER_TAB);
    // A follower's read waits twice the request timeout for its reply; then it gives up, and
    // its query tries again (after a retry delay): sent at once, in the places freed.
    await vi.advanceTimersByTimeAsync(2 * REQUEST_TIMEOUT_MS + 2000);
    await settle();
    expect(hub.sent(b.label, 'read')).toHaveLength(2 * MAX_REQUESTS_PER_TAB);
  });

  it('a read the leader says it still runs waits past twice the request timeout, and fails after the longest the leader may take with it', async () => {
    const { a, b, hub, settle, read } = await readTheLeaderRuns();
    await vi.advanceTimersByTimeAsync(2 * REQUEST_TIMEOUT_MS + 1000);
    await settle();
    expect(read.state).toBe('pending');
    expect(hub.sent(b.label, 'waiting').length).toBeGreaterThan(0);
    expect(hub.sent(a.label, 'working').length).toBeGreaterThan(0);
    const boundMs = readBoundMs(REQUEST_TIMEOUT_MS);
    await vi.advanceTimersByTimeAsync(boundMs - 2 * REQUEST_TIMEOUT_MS - 2000);
    await settle();
    expect(read.state).toBe('pending');
    // Whatever it says, the follower waits no longer than that.
    await vi.advanceTimersByTimeAsync(1000);
    await settle();
    expect(read.error).toMatchObject({ code: 'NOT_CONNECTED' });
    expect(String(read.error)).toMatch(`within ${boundMs} ms`);
  });

  it('a read the leader keeps saying it runs fails after its bound even if the clock is set back', async () => {
    const { settle, read } = await readTheLeaderRuns();
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS);
    await settle();
    // The system clock goes back an hour (a correction): the bound is of time waited.
    vi.setSystemTime(Date.now() - 3_600_000);
    const boundMs = readBoundMs(REQUEST_TIMEOUT_MS);
    await vi.advanceTimersByTimeAsync(boundMs - REQUEST_TIMEOUT_MS + 1000);
    await settle();
    expect(read.error).toMatchObject({ code: 'NOT_CONNECTED' });
    expect(String(read.error)).toMatch(`within ${boundMs} ms`);
  });

  it('a read the leader says it still runs is waited for when the clock jumps forward', async () => {
    const { a, hub, settle, read } = await readTheLeaderRuns();
    // The system clock goes forward an hour (a correction, a machine that slept): the follower
    // reckons the leader's silence in time waited, and the leader has not been silent.
    vi.setSystemTime(Date.now() + 3_600_000);
    await vi.advanceTimersByTimeAsync(4 * REQUEST_TIMEOUT_MS);
    await settle();
    expect(hub.sent(a.label, 'working').length).toBeGreaterThan(0);
    expect(read.state).toBe('pending');
    a.local.answerKey(resourceKey('doc://1'), contents('doc://1', 'v1'));
    await settle();
    expect(read.value).toEqual(contents('doc://1', 'v1'));
  });

  it('a read waiting for a place behind reads the leader says it still runs waits on with them', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const read = (uri: string) => readIn(b, uri);
    const reads = Array.from({ length: MAX_REQUESTS_PER_TAB + 1 }, (_, i) => read(`doc://${i}`));
    await settle();
    // The leader runs as many as one tab may have running; the last waits here for a place.
    expect(a.local.reads).toHaveLength(MAX_REQUESTS_PER_TAB);
    expect(hub.sent(b.label, 'read')).toHaveLength(MAX_REQUESTS_PER_TAB);
    await vi.advanceTimersByTimeAsync(2 * REQUEST_TIMEOUT_MS + 1000);
    await settle();
    expect(hub.sent(a.label, 'working').length).toBeGreaterThan(0);
    expect(reads.map((one) => one.state)).toEqual(reads.map(() => 'pending'));
    // A place frees: the last is sent, and answered.
    a.local.answerKey(resourceKey('doc://0'), contents('doc://0', 'v0'));
    await settle();
    const last = `doc://${MAX_REQUESTS_PER_TAB}`;
    a.local.answerKey(resourceKey(last), contents(last, 'last'));
    await settle();
    expect(reads[0]?.value).toEqual(contents('doc://0', 'v0'));
    expect(reads[MAX_REQUESTS_PER_TAB]?.value).toEqual(contents(last, 'last'));
  });

  it('a tab the leader does not serve (its roster full) is told so at once, says hello again, and is served once there is room', async () => {
    const { tabs, hub, locks, open, settle } = await group(1);
    const [a] = tabs as [Tab];
    // Made-up tabs that hold their locks fill the roster; the last place goes to a newcomer
    // whose hello comes just before this tab's, and this tab hears the leader's answer to it.
    const script = locks.tab().locks;
    const gone: Array<() => void> = [];
    const ghost = (name: string) => {
      void script.request(tabLock(name), {}, () => new Promise<void>((end) => gone.push(end)));
      hub.inject(GROUP, { type: 'hello', tab: name });
    };
    for (let i = 0; i < MAX_TABS - 1; i++) ghost(`ghost-${i}`);
    await settle();
    ghost('ghost-last');
    const c = open();
    await settle();
    expect(a.tabs()).toMatchObject({ leader: true, tabs: MAX_TABS + 1 });

    const read = c.read('doc://1');
    await settle();
    const replies = hub.sent(a.label, 'reply') as Array<{
      to: string;
      error?: { message: string };
    }>;
    expect(replies.filter((reply) => reply.to === c.id)[0]?.error?.message).toMatch(
      /serves at most 256 tabs/,
    );
    // Its query's retries (1, 2 and 4 s apart) are refused as fast: failed before one read's
    // timeout (twice the request timeout) would have passed.
    await vi.advanceTimersByTimeAsync(2 * REQUEST_TIMEOUT_MS - 1000);
    await settle();
    expect(read.state).toBe('rejected');
    expect(String(read.error)).toMatch(/serves at most 256 tabs/);
    const hellos = hub.sent(c.label, 'hello').length;
    expect(hellos).toBeGreaterThan(1);

    // One made-up tab goes: the next hello is answered, and the tab is served.
    gone[0]?.();
    await vi.advanceTimersByTimeAsync(60_000);
    await settle();
    expect(a.tabs()).toMatchObject({ leader: true, tabs: MAX_TABS + 1 });
    const next = c.read('doc://2');
    await settle();
    a.local.answerKey(resourceKey('doc://2'), contents('doc://2', 'v2'));
    await settle();
    expect(next.value).toEqual(contents('doc://2', 'v2'));
  });
});
