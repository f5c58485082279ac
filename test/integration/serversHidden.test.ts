/**
 * A manager let go of (its provider hidden in an `<Activity>`, or unmounted) is stopped, not
 * disposed: a handler the hidden tree kept can still add, edit or remove servers. The other tabs
 * must hear of those changes as of any other: a server removed there ends in every mounted tab
 * (its connection, and with it what it showed), and one added there shows in them.
 */
import { QueryClient } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/auth';
import { McpServerManager } from '../../src/servers';
import {
  atEnd,
  closeAll,
  FAST,
  idle,
  observe,
  openManager,
  serverOf,
  statusOf,
  type Tab,
} from '../support/manager';
import { tabChannels } from '../support/tabs';
import { eventually } from '../support/wait';

afterEach(closeAll);

const ids = (tab: Tab) => tab.manager.getServers().map((server) => server.id);

/** A tab of one browser profile (the shared storage, Node's BroadcastChannel between them). */
function channelsOfTab() {
  const channels = tabChannels();
  atEnd(() => channels.closeAll());
  return channels.open;
}

/** A tab whose manager was mounted, then let go (hidden): what its kept handlers call. */
async function hiddenTab(storage: ReturnType<typeof memoryStorage>) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  const manager = new McpServerManager({
    queryClient,
    storage,
    channel: channelsOfTab(),
    reconnect: FAST,
    lingerMs: 10,
    requestTimeoutMs: 3000,
  });
  atEnd(async () => {
    await manager.dispose();
    queryClient.clear();
  });
  const release = manager.mount();
  release();
  // The last release stops the manager on the next macrotask: every server's connection ends.
  await eventually(() => {
    for (const sync of manager.getSyncs().values()) expect(sync.getState().status).toBe('closed');
  });
  return manager;
}

describe('a hidden manager’s changes reach the other tabs', () => {
  it('a server it removes ends in a mounted tab; one it adds shows there', async () => {
    const [gone, added] = await Promise.all([
      serverOf('legacy-v2', 'gone'),
      serverOf('modern', 'added'),
    ]);
    const storage = memoryStorage();
    const shown = openManager({ storage, channel: channelsOfTab() });
    shown.manager.add({ id: 'gone', name: 'Gone', url: gone.url });
    const view = observe(shown, 'gone');
    await eventually(() => expect(view.text()).toBe('gone doc'));

    const hidden = await hiddenTab(storage);
    expect(hidden.getServers().map((server) => server.id)).toEqual(['gone']);

    // A handler of the hidden tree removes it: the mounted tab ends its connection too.
    expect(await hidden.remove('gone')).toBe(true);
    await eventually(() => expect(ids(shown)).toEqual([]));
    await eventually(() => expect(idle(gone)).toBe(true));

    // And adds one: the mounted tab shows it, and connects it.
    expect(hidden.add({ id: 'added', name: 'Added', url: added.url }).ok).toBe(true);
    await eventually(() => expect(ids(shown)).toEqual(['added']));
    await eventually(() => expect(statusOf(shown, 'added')).toBe('ready'));
    const addedView = observe(shown, 'added');
    await eventually(() => expect(addedView.text()).toBe('added doc'));
    // The hidden tab connected nothing: the one stream is the mounted tab's.
    await eventually(() => expect(added.openStreams()).toBe(1));
    expect(statusOf(shown, 'added')).toBe('ready');
  });
});
