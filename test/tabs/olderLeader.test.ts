/**
 * A follower of this version under a leader of an earlier one (a tab opened before the app was
 * deployed again), rule 14: such a leader counts a request its tab cancelled among the tab's 256
 * places until the work ends, and refuses one too many (`INVALID_OPTIONS`, "too many requests
 * from one tab at once"; it is not run). The follower gives the place up at once all the same,
 * so it may send one request too many: that request is not failed but waits for a place again,
 * counting the cancelled ones the leader still runs until their late replies come. Fake tabs;
 * the leader is a script that answers as the earlier version did.
 */
import type { QueryClient } from '@tanstack/query-core';
import { describe, expect, it } from 'vitest';
import type { McpCacheSync } from '../../src/core/mcpCacheSync';
import { MAX_REQUESTS_PER_TAB } from '../../src/tabs/leader';
import { track } from '../support/deferred';
import { contents, GROUP, resourceKey, silentLeader, withFakeTabs } from '../support/tabsHarness';

withFakeTabs();

const LAST = MAX_REQUESTS_PER_TAB;

const read = (tab: { queryClient: QueryClient; sync: McpCacheSync }, uri: string) =>
  track(tab.queryClient.fetchQuery({ ...tab.sync.resourceQueryOptions(uri), retry: false }));

/** The earlier leader's refusal of one request too many. */
const TOO_MANY = {
  name: 'McpQueryError',
  code: 'INVALID_OPTIONS',
  message: 'too many requests from one tab at once',
};

describe('a follower under a leader of an earlier version (rule 14)', () => {
  it.each(['read', 'call'] as const)(
    'a %s the leader refuses as one too many, after a cancel, waits for a place and runs, not fails',
    async (kind) => {
      const { hub, settle, follower: b } = await silentLeader();
      const sent = (type: string) => hub.sent(b.label, type) as Array<{ id: number }>;
      const all = Array.from({ length: LAST }, (_, i) => read(b, `doc://${i}`));
      await settle();
      expect(sent('read')).toHaveLength(LAST);
      const next = kind === 'read' ? read(b, 'doc://next') : b.call({ name: 'echo' });
      await settle();
      // The follower cancels its first read: it frees the place, tells the leader, and sends the
      // next request into it at once.
      await b.queryClient.cancelQueries({ queryKey: resourceKey('doc://0') });
      await settle();
      expect(all[0]?.state).toBe('rejected');
      const cancelledId = sent('read')[0]?.id as number;
      expect(sent('cancel')).toEqual([expect.objectContaining({ id: cancelledId })]);
      expect(sent(kind)).toHaveLength(kind === 'read' ? LAST + 1 : 1);
      const nextId = sent(kind).at(-1)?.id as number;
      // The earlier leader still runs the cancelled read, and refuses the next request.
      hub.inject(GROUP, { type: 'reply', to: b.id, id: nextId, error: TOO_MANY }, 'ghost');
      await settle();
      expect(next.state).toBe('pending');
      // While the cancelled read runs there, the refused request is not sent again.
      read(b, 'doc://later');
      await settle();
      expect(sent(kind)).toHaveLength(kind === 'read' ? LAST + 1 : 1);
      // The cancelled read ends there: its late reply frees the place, and the refused request
      // goes into it.
      hub.inject(
        GROUP,
        { type: 'reply', to: b.id, id: cancelledId, value: contents('doc://0', 'late') },
        'ghost',
      );
      await settle();
      expect(sent(kind)).toHaveLength(kind === 'read' ? LAST + 2 : 2);
      const resentId = sent(kind).at(-1)?.id as number;
      const value = kind === 'read' ? contents('doc://next', 'v') : { content: [] };
      hub.inject(GROUP, { type: 'reply', to: b.id, id: resentId, value }, 'ghost');
      await settle();
      expect(next.value).toEqual(value);
      expect(all[0]?.state).toBe('rejected');
    },
  );
});
