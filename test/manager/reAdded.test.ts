/**
 * A server removed and added again is a new sign-in in every tab, including one that had no
 * manager mounted while it was removed (it could not forget then) and finds the old tokens in
 * its own storage when it mounts again. Real protected servers behind the demo authorization
 * server; the user's browser is played headlessly (test/support/serverSignIn.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/auth';
import { authServer, closeAll, serverOf } from '../support/manager';
import { entry, signedInInTabB, signInOf, tabOf, userBrowser } from '../support/serverSignIn';
import { eventually } from '../support/wait';

afterEach(closeAll);

const OAUTH = { status: 'unauthorized', signIn: 'signed-out' };

describe('a server removed and added again', () => {
  it('re-added in another tab: a tab that was not mounted during the removal does not find the old tokens', async () => {
    const auth = await authServer();
    const [gone, learning] = await Promise.all([
      serverOf('modern', 'gone', { authServer: auth }),
      serverOf('legacy-v2', 'learning', { authServer: auth }),
    ]);
    const { a, b, openB } = await signedInInTabB({ gone, learning });
    await b.close(); // tab B goes to a page without <McpServersProvider>: it hears nothing now

    expect(await a.manager.remove('gone')).toBe(true);
    expect(await a.manager.remove('learning')).toBe(true);
    // Added again in tab A, the same ids and URLs: one as OAuth, one to learn it from a 401.
    a.manager.add({ id: 'gone', name: 'gone', url: gone.url, auth: 'oauth' });
    a.manager.add({ id: 'learning', name: 'learning', url: learning.url });
    await eventually(() => {
      for (const id of ['gone', 'learning']) {
        expect(entry(a, id)).toMatchObject({ ...OAUTH, auth: 'oauth' });
      }
    });
    const accepted = () => [gone, learning].map((server) => server.protection?.stats().accepted);
    const before = accepted();

    // Back on the servers page in tab B, whose sessionStorage still holds the old sign-ins.
    const again = openB();
    await eventually(() => {
      for (const id of ['gone', 'learning']) expect(entry(again, id)).toMatchObject(OAUTH);
    });
    // The old tokens never went to the servers.
    expect(accepted()).toEqual(before);
  });

  it('a list stored before nonces stays signed in: its tokens are under the key they had', async () => {
    const { server, local, session } = await signedInBefore();
    const tab = tabOf(local, session);
    expect(entry(tab, 'old')).toMatchObject({ nonce: undefined, signIn: 'signed-in' });
    await eventually(() => expect(entry(tab, 'old')?.status).toBe('ready'));
    // No 401 on the way: the stored token went with the first request.
    expect(server.protection?.stats().challenged).toBe(0);
  });

  it('stored before nonces and removed while this tab had none mounted: added again here, the tokens under the old key are forgotten', async () => {
    const { server, local, session } = await signedInBefore();
    const a = tabOf(local, memoryStorage());
    expect(await a.manager.remove('old')).toBe(true);

    const b = tabOf(local, session);
    b.manager.add({ id: 'old', name: 'Old', url: server.url, auth: 'oauth' });
    expect(entry(b, 'old')?.nonce).toMatch(/^[0-9a-f]{32}$/);
    await eventually(() => expect(entry(b, 'old')).toMatchObject(OAUTH));
    expect(signInOf(session).providerFor({ id: 'old', url: server.url }).tokens()).toBeUndefined();
  });
});

/**
 * What the previous version left: a sign-in in a tab's storage under the server's id and URL
 * alone, and a list without nonces.
 */
async function signedInBefore() {
  const auth = await authServer();
  const server = await serverOf('modern', 'old', { authServer: auth });
  const [local, session] = [memoryStorage(), memoryStorage()];
  const browser = userBrowser();
  const provider = signInOf(session, browser.navigate).providerFor({ id: 'old', url: server.url });
  await provider.authorize();
  await signInOf(session).complete(browser.callbacks[0] as URL);
  expect(provider.tokens()).toBeDefined();
  session.removeItem('mcp-react-query:server-oauth:kept'); // which that version did not keep
  const old = { id: 'old', name: 'Old', url: server.url, auth: 'oauth' };
  local.setItem('mcp-react-query:servers', JSON.stringify({ rev: 1, writer: 'w', servers: [old] }));
  server.protection?.resetStats();
  return { server, local, session };
}
