/**
 * Two tabs sharing one list and one token storage (localStorage) add the same server before
 * either sees the other's write. Every tab settles on one of the two adds (the later `writer` of
 * the same `rev`), but the storage keeps whichever write landed last, which may be the other
 * one. A tab opened then must not read the add every open tab dropped: it would take the
 * settled add's sign-in for an orphan and forget it (revoked), or bring the dropped add back with
 * its next change, and every tab would forget the settled one. Real protected server behind the
 * demo authorization server; Node's BroadcastChannel between the tabs; the user's browser played
 * headlessly (test/support/serverSignIn.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/auth';
import { crossing } from '../support/crossing';
import { authServer, closeAll, serverOf } from '../support/manager';
import { entry, serverIn, sharedTokensTab, signInOf, userBrowser } from '../support/serverSignIn';
import { eventually } from '../support/wait';

afterEach(closeAll);

const SIGNED_IN = { status: 'ready', signIn: 'signed-in' };

describe('two tabs add the same server at once', () => {
  it('a tab opened after they settled reads the settled add: the sign-in made on it stays, there and in the tab that made it', async () => {
    const auth = await authServer();
    const server = await serverOf('modern', 'mail', { authServer: auth });
    const local = memoryStorage();
    const browser = userBrowser();
    const [viewA, viewB] = [crossing(local), crossing(local)];
    const a = sharedTokensTab(viewA.storage, local, browser.navigate);
    const b = sharedTokensTab(viewB.storage, local, browser.navigate);

    // Both add it before either sees the other's write; the one that loses lands last.
    a.manager.add({ id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' });
    b.manager.add({ id: 'mail', name: 'Mail', url: server.url, auth: 'oauth' });
    const [first, last] = viewA.writer() > viewB.writer() ? [viewA, viewB] : [viewB, viewA];
    first.flush();
    last.flush();
    const settled = first === viewA ? a : b;
    await eventually(() => expect(serverIn(a, 'mail').nonce).toBe(serverIn(b, 'mail').nonce));
    const nonce = serverIn(settled, 'mail').nonce;

    // Signed in on the add every tab has.
    await eventually(() => expect(entry(settled, 'mail')?.status).toBe('unauthorized'));
    entry(settled, 'mail')?.authorize();
    await eventually(() => expect(browser.callbacks).toHaveLength(1));
    await signInOf(local).complete(browser.callbacks[0] as URL);
    await eventually(() => expect(entry(settled, 'mail')).toMatchObject(SIGNED_IN));

    // A third tab opens, and the user changes the list there.
    const c = sharedTokensTab(local, local);
    c.manager.add({ id: 'news', name: 'News', url: 'http://127.0.0.1:9/mcp' });
    for (const one of [a, b]) await eventually(() => expect(entry(one, 'news')).toBeDefined());
    await eventually(() => expect(entry(c, 'mail')).toMatchObject(SIGNED_IN));
    expect(auth.stats().revocations).toBe(0);
    for (const one of [a, b, c]) expect(entry(one, 'mail')).toMatchObject({ nonce, ...SIGNED_IN });
  });
});
