/**
 * Another user signs in (rule 12, rule 14): the tab leaves the group of the previous identity for
 * the group of the new one. What the previous user asked for and the tab had not sent yet — a
 * tool call, a task request — is not run as the new user: it fails, saying why. Fake tabs as in
 * roles.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { internalsOf } from '../../src/core/internals';
import { track } from '../support/deferred';
import { browser, withFakeTabs } from '../support/tabsHarness';

withFakeTabs();

const IDENTITY_CHANGED = { name: 'McpQueryError', code: 'NOT_CONNECTED' };

describe('another user signs in (rule 12, rule 14)', () => {
  it('a call and a task request made as one user, not yet sent to the leader when another signs in, fail and never run as the new user', async () => {
    const { open, hub, settle } = browser();
    const a = open({ signedIn: 'alice' });
    await settle();
    const b = open({ signedIn: 'alice' });
    // B has not heard who leads yet: its call and task request wait in it, unsent.
    const call = b.call({ name: 'transfer', arguments: { to: 'carol' } });
    const request = track(internalsOf(b.sync).upstream.request('tasks/cancel', { taskId: 't1' }));
    await Promise.resolve();
    await Promise.resolve();
    b.signIn('bob');
    await settle();
    // B is alone in bob's group: it leads it, on its own connection, now bob's.
    expect(b.tabs()?.leader).toBe(true);
    expect(b.local.calls).toHaveLength(0);
    expect(b.local.requests).toHaveLength(0);
    expect(a.local.calls).toHaveLength(0);
    expect(hub.sent(b.label, 'call')).toHaveLength(0);
    for (const made of [call, request]) {
      expect(made.error).toMatchObject(IDENTITY_CHANGED);
      expect(String(made.error)).toMatch(/signed-in identity changed/);
    }
  });

  it('a call made as one user just before another signs in, in the same task, does not run as the new user', async () => {
    const { open, settle } = browser();
    const a = open({ signedIn: 'alice' });
    await settle();
    expect(a.tabs()?.leader).toBe(true);
    // "Save, then sign out": the call is made, and the identity changes before it goes out.
    const call = a.call({ name: 'save' });
    a.signIn(undefined);
    await settle();
    expect(a.tabs()?.leader).toBe(true);
    expect(a.local.calls).toHaveLength(0);
    expect(call.error).toMatchObject(IDENTITY_CHANGED);
  });
});

describe('a tab that goes away', () => {
  it('a call it had not sent yet fails saying it was not run, not that it may have', async () => {
    const { open, hub, settle } = browser();
    open({});
    await settle();
    const b = open({});
    // B has not heard who leads yet: its call waits in it, unsent, when the page closes.
    const call = b.call({ name: 'transfer' });
    await Promise.resolve();
    await b.leave();
    await settle();
    expect(hub.sent(b.label, 'call')).toHaveLength(0);
    expect(call.error).toMatchObject({ name: 'McpQueryError', code: 'NOT_CONNECTED' });
    expect(String(call.error)).toMatch(/not sent: it was not run/);
  });
});
