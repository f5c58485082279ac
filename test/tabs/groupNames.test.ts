/**
 * Which tabs share (rule 14): a group is one server, one scope and one signed-in identity, and
 * nothing else. Its name (the channel, and the prefix of its locks) is made of those three, each
 * of which may contain any character: an Auth0 subject is `auth0|…`, a URL may have a '|' in
 * its query, a scope is the app's choice. Fake tabs as in roles.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  browser,
  contents,
  resourceKey,
  type Tab,
  type TabOptions,
  withFakeTabs,
} from '../support/tabsHarness';

withFakeTabs();

/** Pairs of tabs whose server, scope and identity, joined with '|', read the same. */
const LOOKALIKES: Array<[string, TabOptions, TabOptions]> = [
  [
    'two servers and two users, one scope',
    { url: 'http://mcp.test/mcp?t=a', scope: 's', authContext: 'b|s|u' },
    { url: 'http://mcp.test/mcp?t=a|s|b', scope: 's', authContext: 'u' },
  ],
  [
    'an Auth0 subject beside a scope ending where it begins',
    { scope: 'crm', authContext: 'auth0|alice' },
    { scope: 'crm|auth0', authContext: 'alice' },
  ],
  // Unscoped keys are ['resource', uri]; the scope '' prefixes them with ['mcp', ''].
  ['no scope and the empty scope', {}, { scope: '' }],
];

describe('sharing groups (rule 14)', () => {
  it.each(LOOKALIKES)(
    'tabs whose server, scope and identity differ do not share a leader, nor its data, however their names read: %s',
    async (_case, first, second) => {
      const { open, locks, settle } = browser();
      const a: Tab = open(first);
      await settle();
      const b: Tab = open(second);
      await settle();
      // Each is alone in its group, so each leads it and holds its own connection.
      expect(a.tabs()).toMatchObject({ leader: true, tabs: 1 });
      expect(b.tabs()).toMatchObject({ leader: true, tabs: 1 });
      expect(b.local.started).toBe(1);
      // Two leader locks, and each tab's own lock apart: four locks, none shared.
      expect(new Set(locks.held()).size).toBe(4);
      expect(locks.held().filter((name) => name.endsWith('|leader'))).toHaveLength(2);

      const uri = 'doc://1';
      const read = b.read(uri);
      await settle();
      expect(a.local.reads).toHaveLength(0);
      const key = b.sync.resourceQueryOptions(uri).queryKey;
      expect(b.local.reads.map((one) => one.key)).toEqual([key]);
      b.local.answerKey(key, contents(uri, 'b’s'));
      await settle();
      expect(read.value).toEqual(contents(uri, 'b’s'));
      expect(a.queryClient.getQueryData(resourceKey(uri))).toBeUndefined();
    },
  );

  it('tabs of the empty scope share: a follower’s read and what it shows go through the leader', async () => {
    const { open, settle } = browser();
    const a = open({ scope: '' });
    await settle();
    const b = open({ scope: '' });
    await settle();
    expect(b.tabs()).toMatchObject({ leader: false, tabs: 2 });
    const view = b.observe('doc://1');
    const read = b.read('doc://2');
    await settle();
    expect(a.local.desires.at(-1)?.uris).toEqual(['doc://1']);
    const key = b.sync.resourceQueryOptions('doc://2').queryKey;
    a.local.answerKey(key, contents('doc://2', 'v1'));
    await settle();
    expect(read.value).toEqual(contents('doc://2', 'v1'));
    view.unmount();
  });
});
