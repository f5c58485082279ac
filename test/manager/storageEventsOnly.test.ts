/**
 * A manager with `channel: null` (no BroadcastChannel: none in the page, or turned off) and its
 * list in a storage the tabs share: the other tabs still hear its changes, through the storage
 * events a browser fires in every other tab once a write landed. Real servers; the storage events
 * of one browser played by `browserStorage()`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { browserStorage } from '../support/browserStorage';
import { closeAll, openManager, serverOf } from '../support/manager';
import { entry } from '../support/serverSignIn';
import { eventually } from '../support/wait';

afterEach(async () => {
  await closeAll();
  vi.unstubAllGlobals();
});

describe('tabs without a channel, one storage', () => {
  it("a server one tab adds, then removes, shows up and ends in the other, by the storage's events alone", async () => {
    const server = await serverOf('modern', 'one');
    const browser = browserStorage();
    const [a, b] = [0, 1].map(() =>
      openManager({ storage: browser.view({ keepsUp: true }).storage, channel: null }),
    ) as [ReturnType<typeof openManager>, ReturnType<typeof openManager>];

    a.manager.add({ id: 'one', name: 'One', url: server.url });
    await eventually(() => expect(entry(b, 'one')?.status).toBe('ready'));
    await a.manager.remove('one');
    await eventually(() => expect(entry(b, 'one')).toBeUndefined());
    await eventually(() => expect(server.openStreams()).toBe(0));
  });
});
