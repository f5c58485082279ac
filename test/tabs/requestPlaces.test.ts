import { describe, expect, it, vi } from 'vitest';
import { MAX_REQUESTS_PER_TAB } from '../../src/tabs/leader';
import {
  browser,
  contents,
  GROUP,
  group,
  LEADER_LOCK,
  REQUEST_TIMEOUT_MS,
  readIn,
  resourceKey,
  silentLeader,
  type Tab,
  withFakeTabs,
} from '../support/tabsHarness';

withFakeTabs();

const LAST = MAX_REQUESTS_PER_TAB;

/** `count` reads of doc://0, doc://1, … in `tab`. */
const reads = (tab: Tab, count: number) =>
  Array.from({ length: count }, (_, i) => readIn(tab, `doc://${i}`));

/** The id the follower sent its read of `uri` under, the `nth` time (0: the first). */
function readId(
  hub: { sent(owner: string, type?: string): unknown[] },
  tab: Tab,
  uri: string,
  nth = 0,
) {
  const sent = hub.sent(tab.label, 'read') as Array<{ id: number; key: unknown[] }>;
  const ids = sent.filter((message) => message.key.at(-1) === uri).map((message) => message.id);
  return ids[nth] as number;
}

describe('a follower’s places (rule 14)', () => {
  it.each(['read', 'call'] as const)(
    'a %s the follower cancels frees its place at once, though its leader never answers',
    async (kind) => {
      const { hub, settle, follower: b } = await silentLeader();
      const controller = new AbortController();
      // The first request holds a place: a read, or a call the follower can cancel.
      if (kind === 'call') b.call({ name: 'slow', signal: controller.signal });
      else readIn(b, 'doc://first');
      reads(b, LAST);
      await settle();
      expect(hub.sent(b.label, 'read')).toHaveLength(kind === 'read' ? LAST : LAST - 1);
      if (kind === 'call') controller.abort();
      else await b.queryClient.cancelQueries({ queryKey: resourceKey('doc://first') });
      await settle();
      // The leader is told; the request waiting for a place is sent at once.
      expect(hub.sent(b.label, 'cancel')).toEqual([{ type: 'cancel', tab: b.id, id: 1 }]);
      expect(hub.sent(b.label, 'read')).toHaveLength(kind === 'read' ? LAST + 1 : LAST);
      expect((hub.sent(b.label).at(-1) as { key?: unknown[] }).key?.at(-1)).toBe(
        `doc://${LAST - 1}`,
      );
    },
  );

  it('the leader frees the place of a request its tab cancelled: the next one runs there, not refused, and the late reply to the cancelled one is taken for nothing', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const all = reads(b, LAST + 2);
    await settle();
    expect(a.local.reads).toHaveLength(LAST);
    await b.queryClient.cancelQueries({ queryKey: resourceKey('doc://0') });
    await settle();
    expect(all[0]?.state).toBe('rejected');
    // The next read took the place, on the leader too: it runs there.
    expect(a.local.reads).toHaveLength(LAST + 1);
    expect(hub.sent(b.label, 'read')).toHaveLength(LAST + 1);
    // The leader's read of doc://0 (one flight for every tab) ends: its reply to the cancelled
    // request comes late, and frees no place: the last read still waits for one.
    a.local.answerKey(resourceKey('doc://0'), contents('doc://0', 'v0'));
    await settle();
    expect(hub.sent(a.label, 'reply')).toEqual([
      expect.objectContaining({ to: b.id, id: readId(hub, b, 'doc://0') }),
    ]);
    expect(hub.sent(b.label, 'read')).toHaveLength(LAST + 1);
    expect(all[LAST]?.state).toBe('pending');
    // The read that took the place is answered, and its place goes to the last read.
    a.local.answerKey(resourceKey(`doc://${LAST}`), contents(`doc://${LAST}`, 'v'));
    await settle();
    expect(all[LAST]?.value).toEqual(contents(`doc://${LAST}`, 'v'));
    const next = `doc://${LAST + 1}`;
    a.local.answerKey(resourceKey(next), contents(next, 'next'));
    await settle();
    expect(all[LAST + 1]?.value).toEqual(contents(next, 'next'));
  });

  it('a late reply from the previous leader frees no place the new one holds, and answers nothing', async () => {
    const { tabs, hub, settle } = await group(3);
    const [a, c, b] = tabs as [Tab, Tab, Tab];
    const all = reads(b, LAST + 1);
    await settle();
    expect(a.local.reads).toHaveLength(LAST);
    const firstId = readId(hub, b, 'doc://0');
    a.crash();
    await settle();
    expect(c.tabs()?.leader).toBe(true);
    // The reads go to the new leader; the last still waits for a place.
    expect(c.local.reads).toHaveLength(LAST);
    expect(hub.sent(b.label, 'read')).toHaveLength(2 * LAST);
    // A reply the previous leader posted before it went arrives now.
    hub.inject(
      GROUP,
      { type: 'reply', to: b.id, id: firstId, value: contents('doc://0', 'old') },
      a.label,
    );
    await settle();
    expect(all[0]?.state).toBe('pending');
    expect(hub.sent(b.label, 'read')).toHaveLength(2 * LAST);
    // The new leader's answer is the one taken, and frees the place for the last read, which it
    // runs (it was not sent into a place the new leader still held).
    c.local.answerKey(resourceKey('doc://0'), contents('doc://0', 'new'));
    await settle();
    expect(all[0]?.value).toEqual(contents('doc://0', 'new'));
    const last = `doc://${LAST}`;
    c.local.answerKey(resourceKey(last), contents(last, 'last'));
    await settle();
    expect(all[LAST]?.value).toEqual(contents(last, 'last'));
  });

  it('a request waiting for a place when the leader changes waits for the new leader afresh, not counting the previous one’s silence', async () => {
    const { locks, hub, open, settle } = browser();
    // A script holds the leader lock and says nothing; the first tab opened is next in line.
    let ghostGoes = () => {};
    void locks.tab().locks.request(
      LEADER_LOCK,
      {},
      () =>
        new Promise<void>((resolve) => {
          ghostGoes = resolve;
        }),
    );
    const c = open();
    const b = open();
    hub.inject(GROUP, { type: 'leader', tab: 'ghost', handovers: 0 });
    await settle();
    const all = reads(b, LAST + 1);
    await settle();
    expect(hub.sent(b.label, 'read')).toHaveLength(LAST);
    // Two thirds of a follower's patience pass in silence (it asked twice, heard nothing).
    await vi.advanceTimersByTimeAsync((2 * REQUEST_TIMEOUT_MS * 2) / 3 + 100);
    await settle();
    expect(hub.sent(b.label, 'waiting').length).toBeGreaterThan(0);
    expect(all[LAST]?.state).toBe('pending');
    ghostGoes();
    await settle();
    expect(c.tabs()?.leader).toBe(true);
    expect(c.local.reads).toHaveLength(LAST);
    // The new leader runs the reads holding the places, and says so when asked: the last read
    // waits on with them.
    await vi.advanceTimersByTimeAsync(2 * REQUEST_TIMEOUT_MS + 1000);
    await settle();
    expect(hub.sent(c.label, 'working').length).toBeGreaterThan(0);
    expect(all[LAST]?.state).toBe('pending');
    c.local.answerKey(resourceKey('doc://0'), contents('doc://0', 'v0'));
    await settle();
    const last = `doc://${LAST}`;
    c.local.answerKey(resourceKey(last), contents(last, 'last'));
    await settle();
    expect(all[LAST]?.value).toEqual(contents(last, 'last'));
  });
});
