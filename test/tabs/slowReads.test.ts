/**
 * A follower's read waits as long as the leader may take with it (rule 14). The leader's read
 * can join a flight of its own that TanStack retries, each try bounded by `requestTimeoutMs`: a
 * read that ends well on the leader only after more than twice that ends well on the follower
 * too (a leader that says nothing is still given up on: unanswered.test.ts). Real tabs on a
 * real server (the leader's retries and timeouts are the subject), as in
 * test/integration/tabRequests.test.ts: each an McpCacheSync with its own QueryClient, elected
 * with in-memory Web Locks, talking over Node's BroadcastChannel.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ResourceStore, type TestServer } from '../servers';
import { atEnd, closeAll } from '../support/atEnd';
import { deferred, track } from '../support/deferred';
import { start, text } from '../support/eras';
import { observeResource } from '../support/observe';
import { BrowserLocks, openTab } from '../support/tabs';
import { eventually } from '../support/wait';

const TIMEOUT_MS = 1000;
const RETRY_DELAY_MS = 2500;
const URI = 'slow://doc';

afterEach(closeAll);

/** A tab of `server` in the browser of `locks`, closed after the test. */
function openTabOf(server: TestServer, locks: BrowserLocks) {
  const tab = openTab(locks, { url: server.url, requestTimeoutMs: TIMEOUT_MS });
  atEnd(tab.close);
  return tab;
}

describe('a follower’s slow read (rule 14)', () => {
  it('a read the leader ends well after a try timed out and a retry, past twice requestTimeoutMs, ends well on the follower', async () => {
    const store = new ResourceStore([text(URI, 'v1')]);
    const server = await start('modern', { store });
    atEnd(() => server.close());
    // A slow server: its first answer comes after the client gave up on it (requestTimeoutMs),
    // the next one within requestTimeoutMs.
    const answers = [deferred(), deferred()];
    atEnd(() => {
      for (const answer of answers) answer.resolve();
    });
    let reads = 0;
    store.onRead(async (uri) => {
      if (uri !== URI) return;
      reads += 1;
      await answers[reads - 1]?.promise;
    });
    const locks = new BrowserLocks();
    const leader = openTabOf(server, locks);
    await eventually(() => expect(leader.tabs()?.leader).toBe(true));
    const follower = openTabOf(server, locks);
    await eventually(() => expect(follower.tabs()?.tabs).toBe(2));
    await eventually(() => expect(follower.sync.getState().status).toBe('ready'));

    // The leader's own view reads the resource (one flight, retried); a loader in the follower
    // asks for it meanwhile, without retries of its own: the leader's flight is its answer.
    // TanStack's retry waits RETRY_DELAY_MS: the second try starts well after the follower's old
    // bound (twice requestTimeoutMs), and its answer below has most of a requestTimeoutMs to spare.
    leader.queryClient.setDefaultOptions({ queries: { retryDelay: RETRY_DELAY_MS } });
    const view = observeResource(leader.sync, URI);
    await eventually(() => expect(reads).toBe(1));
    const asked = performance.now();
    const read = track(
      follower.queryClient.fetchQuery({ ...follower.sync.resourceQueryOptions(URI), retry: false }),
    );
    // Its first try times out, and TanStack tries again RETRY_DELAY_MS later. That try is
    // answered at once (time is the subject here, and the SDK's timeouts are real): by then the
    // follower has waited more than twice requestTimeoutMs.
    await eventually(() => expect(reads).toBe(2), { timeout: 4 * TIMEOUT_MS + RETRY_DELAY_MS });
    expect(performance.now() - asked).toBeGreaterThan(2.2 * TIMEOUT_MS);
    answers[1]?.resolve();
    await eventually(() => expect(view.text()).toBe('v1'));
    await eventually(() => expect(read.state).not.toBe('pending'));
    expect(read.error).toBeUndefined();
    expect(read.value).toMatchObject({ contents: [{ uri: URI, text: 'v1' }] });
    expect(reads).toBe(2);
  });
});
