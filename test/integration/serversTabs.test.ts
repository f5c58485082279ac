/**
 * The server manager across tabs (issue 19): the list is shared through the storage and an
 * announcement on a BroadcastChannel (Node's, which reaches every other instance in the
 * process), and with `shareAcrossTabs` each server has one connection per browser, elected with
 * the in-memory Web Locks of test/support/tabs.ts. The browser run is test/e2e/servers.e2e.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/auth';
import { shareAcrossTabs } from '../../src/tabs';
import {
  atEnd,
  authServer,
  closeAll,
  idle,
  observe,
  openManager,
  serverOf,
  statusOf,
  type Tab,
  wire,
} from '../support/manager';
import { entry, serverIn, signedInInTabB, signInOf } from '../support/serverSignIn';
import { BrowserLocks, tabChannels } from '../support/tabs';
import { eventually } from '../support/wait';

afterEach(closeAll);

/** One browser profile: tabs share its localStorage and its locks. */
function browser() {
  const storage = memoryStorage();
  const locks = new BrowserLocks();
  const counted = wire();
  const open = (share = true): Tab => {
    const tab = locks.tab();
    const channels = tabChannels();
    atEnd(() => channels.closeAll());
    return openManager({
      storage,
      channel: channels.open,
      fetch: counted.fetch,
      ...(share && {
        shareAcrossTabs: shareAcrossTabs({
          locks: tab.locks,
          channel: channels.open,
          livenessMs: 100,
        }),
      }),
    });
  };
  return { open, storage, counted };
}

const ids = (tab: Tab) => tab.manager.getServers().map((server) => server.id);

describe('McpServerManager in two tabs', () => {
  it('an add, an edit and a removal in one tab reach the other; one connection per server', async () => {
    const [modern, legacy, other] = await Promise.all([
      serverOf('modern', 'modern'),
      serverOf('legacy-v2', 'legacy'),
      serverOf('modern', 'other'),
    ]);
    const { open } = browser();
    const first = open();
    const second = open();
    first.manager.add({ id: 'modern', name: 'Modern', url: modern.url });
    first.manager.add({ id: 'legacy', name: 'Legacy', url: legacy.url });
    await eventually(() => expect(ids(second)).toEqual(['modern', 'legacy']));
    const views = [first, second].flatMap((tab) => [
      observe(tab, 'modern'),
      observe(tab, 'legacy'),
    ]);
    await eventually(() => {
      expect(views.map((view) => view.text())).toEqual([
        'modern doc',
        'legacy doc',
        'modern doc',
        'legacy doc',
      ]);
    });
    // Shared: the server carries one stream (and, 2025, one session) for both tabs.
    await eventually(() => {
      expect(modern.openStreams()).toBe(1);
      expect(legacy.openStreams()).toBe(1);
      expect(legacy.liveSessions()).toBe(1);
    });
    legacy.setText('doc://shared', 'legacy doc v2');
    await eventually(() => expect(views[3]?.text()).toBe('legacy doc v2'));

    // An edit in the second tab: the first replaces that server, and only it.
    const modernSync = first.manager.getSyncs().get('modern');
    expect(second.manager.update('legacy', { url: other.url }).ok).toBe(true);
    await eventually(() => expect(first.manager.getServers()[1]?.url).toBe(other.url));
    await eventually(() => expect(views[1]?.text()).toBe('other doc'));
    expect(first.manager.getSyncs().get('modern')).toBe(modernSync);
    await eventually(() => expect(idle(legacy)).toBe(true));

    // A removal in the first tab ends the server in both.
    await first.manager.remove('modern');
    await eventually(() => expect(ids(second)).toEqual(['legacy']));
    await eventually(() => expect(idle(modern)).toBe(true));
    expect(
      second.queryClient
        .getQueryCache()
        .getAll()
        .some((query) => query.queryKey[1] === 'modern'),
    ).toBe(false);
    expect(statusOf(second, 'legacy')).toBe('ready');
  });

  it('a tab opened later finds the list; closing every tab leaves nothing open', async () => {
    const [modern, legacy] = await Promise.all([
      serverOf('modern', 'modern'),
      serverOf('legacy-v2', 'legacy'),
    ]);
    const { open } = browser();
    const first = open(false);
    first.manager.add({ id: 'modern', name: 'Modern', url: modern.url });
    first.manager.add({ id: 'legacy', name: 'Legacy', url: legacy.url });
    const second = open(false);
    expect(ids(second)).toEqual(['modern', 'legacy']);
    const view = observe(second, 'legacy');
    await eventually(() => expect(view.text()).toBe('legacy doc'));
    await first.close();
    await second.close();
    await eventually(() => {
      expect(idle(modern)).toBe(true);
      expect(idle(legacy)).toBe(true);
    });
  });

  it('what another tab sends is checked before use; an older list is ignored', async () => {
    const [modern, valid] = await Promise.all([
      serverOf('modern', 'modern'),
      serverOf('legacy-v2', 'valid'),
    ]);
    const { open, storage, counted } = browser();
    const tab = open(false);
    tab.manager.add({ id: 'modern', name: 'Modern', url: modern.url });
    await eventually(() => expect(statusOf(tab, 'modern')).toBe('ready'));
    const stored = JSON.parse(storage.getItem('mcp-react-query:servers') ?? '{}');
    // A script on the origin (or a broken tab) announces lists of its own.
    const channels = tabChannels();
    atEnd(() => channels.closeAll());
    const channel = channels.open('mcp-react-query:servers-changed|mcp-react-query:servers');
    for (const message of [
      null,
      42,
      'x',
      { type: 1 },
      { type: 'mcp-react-query:servers-changed' },
    ]) {
      channel.postMessage(message);
    }
    const seen: string[][] = [];
    atEnd(tab.manager.subscribe(() => seen.push(ids(tab))));
    const newer = {
      type: 'mcp-react-query:servers-changed',
      rev: stored.rev + 1,
      writer: 'zzz',
      servers: [
        ...stored.servers,
        { id: 'evil', name: 'Evil', url: 'javascript:alert(1)' },
        { id: 'x', name: 'Modern', url: 'http://127.0.0.1:1/mcp' },
        { id: 'h', name: 'H', url: 'http://127.0.0.1:2/mcp', headers: { 'x-k': 'a\r\nb' } },
        { id: 'valid', name: 'Valid', url: valid.url },
      ],
    };
    channel.postMessage(newer);
    await eventually(() => expect(ids(tab)).toEqual(['modern', 'valid']));
    channel.postMessage({
      ...newer,
      rev: stored.rev,
      servers: [{ id: 'old', name: 'Old', url: 'http://127.0.0.1:3/mcp' }],
    });
    channel.postMessage({ ...newer, rev: stored.rev + 2, servers: [...stored.servers] });
    await eventually(() => expect(ids(tab)).toEqual(['modern']));
    expect(seen.some((list) => list.includes('old'))).toBe(false);
    // Only the valid entry of the newer list was taken (a bad URL, a duplicate name and a header
    // with a line break were dropped), and the older list changed nothing.
    for (const port of [1, 2, 3]) {
      expect(counted.handshakes(`http://127.0.0.1:${port}/mcp`)).toBe(0);
    }
    expect(statusOf(tab, 'modern')).toBe('ready');
  });

  it('removed or moved in another tab, a server’s tokens are forgotten in this one too', async () => {
    const auth = await authServer();
    const [gone, moving, elsewhere] = await Promise.all([
      serverOf('modern', 'gone', { authServer: auth }),
      serverOf('legacy-v2', 'moving', { authServer: auth }),
      serverOf('modern', 'elsewhere', { authServer: auth }),
    ]);
    // Tokens in each tab's own sessionStorage (the default), the list in the shared localStorage.
    const { a, b, sessionB } = await signedInInTabB({ gone, moving });
    const inB = [serverIn(b, 'gone'), serverIn(b, 'moving')];
    const tokensInB = () => inB.map((server) => signInOf(sessionB).providerFor(server).tokens());
    expect(tokensInB().every(Boolean)).toBe(true);

    expect(await a.manager.remove('gone')).toBe(true);
    a.manager.update('moving', { url: elsewhere.url });
    await eventually(() => {
      expect(entry(b, 'gone')).toBeUndefined();
      expect(entry(b, 'moving')?.url).toBe(elsewhere.url);
      expect(tokensInB()).toEqual([undefined, undefined]);
    });
    // Added again in tab B, the same id and URL: signed out, the user signs in again.
    b.manager.add({ id: 'gone', name: 'Gone', url: gone.url, auth: 'oauth' });
    await eventually(() =>
      expect(entry(b, 'gone')).toMatchObject({ status: 'unauthorized', signIn: 'signed-out' }),
    );
  });
  it('removed in one tab while another had no manager mounted (another route): added again there, it starts signed out', async () => {
    const auth = await authServer();
    const [gone, learning] = await Promise.all([
      serverOf('modern', 'gone', { authServer: auth }),
      serverOf('modern', 'learning', { authServer: auth }),
    ]);
    const { a, b: first, sessionB, openB } = await signedInInTabB({ gone, learning });
    const before = [serverIn(first, 'gone'), serverIn(first, 'learning')];
    await first.close(); // tab B goes to a page without <McpServersProvider>
    expect(await a.manager.remove('gone')).toBe(true);
    expect(await a.manager.remove('learning')).toBe(true);
    // Back on the servers page in tab B: both added again, one as OAuth, one to learn it from a 401.
    const b = openB();
    b.manager.add({ id: 'gone', name: 'Gone', url: gone.url, auth: 'oauth' });
    b.manager.add({ id: 'learning', name: 'Learning', url: learning.url });
    await eventually(() => {
      for (const id of ['gone', 'learning']) {
        expect(entry(b, id)).toMatchObject({ status: 'unauthorized', signIn: 'signed-out' });
      }
    });
    // What tab B kept for the earlier adds is forgotten, not only out of reach.
    const tokensInB = before.map((server) => signInOf(sessionB).providerFor(server).tokens());
    expect(tokensInB).toEqual([undefined, undefined]);
  });
});
