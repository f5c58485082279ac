/**
 * A tab joining its group (rule 14): it finds the leader even when its first hello went
 * unanswered (the leader's roster was full of made-up tabs), and stops asking once it knows.
 * Fake tabs as in roles.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { MAX_TABS } from '../../src/tabs/members';
import {
  contents,
  GROUP,
  group,
  JOIN_GRACE_MS,
  resourceKey,
  type Tab,
  tabLock,
  withFakeTabs,
} from '../support/tabsHarness';

withFakeTabs();

describe('joining a group (rule 14)', () => {
  it('a tab whose hello the leader refused (its roster full of made-up tabs) says hello again, and is served once they are gone', async () => {
    const { tabs, hub, open, settle } = await group(1);
    const [a] = tabs as [Tab];
    for (let i = 0; i < MAX_TABS; i++) hub.inject(GROUP, { type: 'hello', tab: `ghost-${i}` });
    await settle();
    const c = open();
    await settle();
    expect(c.tabs()).toMatchObject({ leader: false, tabs: 1 });
    expect(hub.sent(a.label, 'leader')).toHaveLength(1 + MAX_TABS);

    // The made-up tabs hold no lock: gone after the grace; the tab's next hello is answered.
    await vi.advanceTimersByTimeAsync(JOIN_GRACE_MS);
    await settle();
    await vi.advanceTimersByTimeAsync(4 * JOIN_GRACE_MS);
    await settle();
    expect(c.tabs()).toMatchObject({ leader: false, tabs: 2 });
    expect(a.tabs()).toMatchObject({ leader: true, tabs: 2 });
    const read = c.read('doc://1');
    await settle();
    a.local.answerKey(resourceKey('doc://1'), contents('doc://1', 'v1'));
    await settle();
    expect(read.value).toEqual(contents('doc://1', 'v1'));

    // It knows the leader now: no more hellos.
    const hellos = hub.sent(c.label, 'hello').length;
    await vi.advanceTimersByTimeAsync(600_000);
    await settle();
    expect(hub.sent(c.label, 'hello')).toHaveLength(hellos);
  });

  it('a tab nobody answers says hello a bounded number of times, further and further apart', async () => {
    const { tabs, hub, locks, open, settle } = await group(1);
    const [a] = tabs as [Tab];
    // Made-up tabs that hold their locks: the roster stays full.
    const script = locks.tab().locks;
    for (let i = 0; i < MAX_TABS; i++) {
      void script.request(tabLock(`ghost-${i}`), {}, () => new Promise(() => {}));
      hub.inject(GROUP, { type: 'hello', tab: `ghost-${i}` });
    }
    await settle();
    const c = open();
    await settle();
    for (let minute = 0; minute < 60; minute++) {
      await vi.advanceTimersByTimeAsync(60_000);
      await settle();
    }
    const hellos = hub.sent(c.label, 'hello').length;
    expect(hellos).toBeGreaterThan(2);
    expect(hellos).toBeLessThanOrEqual(12);
    expect(c.tabs()).toMatchObject({ leader: false, tabs: 1 });
    expect(a.tabs()).toMatchObject({ leader: true, tabs: MAX_TABS + 1 });
  });
});
