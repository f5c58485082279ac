/**
 * The leader serving a follower in ordinary use (rule 14): what one unshared tab would get, a
 * follower gets through the leader, whatever the leader's own components do meanwhile and
 * however many resources the follower shows. Fake tabs as in roles.test.ts.
 */
import { QueryObserver } from '@tanstack/query-core';
import { describe, expect, it, vi } from 'vitest';
import { promptQueryOptions } from '../../src/core/prompts';
import { MAX_REQUESTS_PER_TAB } from '../../src/tabs/leader';
import { track } from '../support/deferred';
import { contents, group, type Tab, withFakeTabs } from '../support/tabsHarness';

withFakeTabs();

describe('the leader serving a follower (rule 14)', () => {
  it('a follower’s read that joined the leader’s own fetch is read again when the leader’s component unmounts, not failed', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const view = a.observe('doc://1');
    await settle();
    const read = track(
      b.queryClient.fetchQuery({ ...b.sync.resourceQueryOptions('doc://1'), retry: false }),
    );
    await settle();
    expect(a.local.reads).toHaveLength(1);
    // TanStack cancels the leader's fetch once its last observer goes: the follower still
    // wants the content, so the leader reads again.
    view.unmount();
    await settle();
    expect(a.local.reads[0]?.signal.aborted).toBe(true);
    expect(a.local.reads).toHaveLength(2);
    a.local.answer(1, contents('doc://1', 'v1'));
    await settle();
    expect(read.value).toEqual(contents('doc://1', 'v1'));
    expect(hub.sent(a.label, 'reply')).toMatchObject([{ value: contents('doc://1', 'v1') }]);
  });
});

describe('a follower showing many resources (rule 14)', () => {
  it('a follower showing more resources than MAX_REQUESTS_PER_TAB has none refused: its reads past the cap wait their turn in the follower', async () => {
    const { tabs, hub, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    const count = MAX_REQUESTS_PER_TAB + 44;
    const views = Array.from({ length: count }, (_, i) => b.observe(`doc://${i}`));
    await settle();
    const refused = () =>
      hub
        .sent(a.label, 'reply')
        .filter((reply) => (reply as { error?: { message: string } }).error !== undefined);
    expect(refused()).toEqual([]);
    expect(hub.sent(b.label, 'read')).toHaveLength(MAX_REQUESTS_PER_TAB);

    // As the leader answers, the rest go.
    for (let round = 0; round < 3; round++) {
      for (const { key, answer } of a.local.reads) {
        answer.resolve(contents(String(key.at(-1)), 'v1'));
      }
      await settle();
    }
    expect(hub.sent(b.label, 'read')).toHaveLength(count);
    expect(refused()).toEqual([]);
    views.forEach((view, i) => {
      expect(view.data()).toEqual(contents(`doc://${i}`, 'v1'));
    });
  });

  it('a follower showing a prompt whose argument is longer than a tab message carries still has the rest of what it shows held by the leader, and that prompt fails at once', async () => {
    const { tabs, settle } = await group(2);
    const [a, b] = tabs as [Tab, Tab];
    b.observe('doc://1');
    await settle();
    expect(a.local.desires.at(-1)?.uris).toEqual(['doc://1']);
    // A user pasted a long text as the prompt's argument.
    const pasted = { code: 'x'.repeat(20_000) };
    const prompt = new QueryObserver(b.queryClient, {
      ...promptQueryOptions('review', pasted),
      retry: false,
    });
    const stop = prompt.subscribe(() => {});
    b.observe('doc://2');
    await settle();
    expect(a.local.desires.at(-1)?.uris).toEqual(['doc://1', 'doc://2']);
    // Not left waiting for a reply that cannot come (the leader refuses the message whole).
    await vi.advanceTimersByTimeAsync(0);
    expect(prompt.getCurrentResult().error).toMatchObject({ code: 'INVALID_ARGUMENTS' });
    stop();
  });
});
