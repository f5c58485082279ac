import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Waiters } from '../../src/core/waiters';
import { track } from '../support/deferred';

const flush = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('Waiters', () => {
  it('a waiter settles on the first recheck that finds its condition true, not before', async () => {
    const waiters = new Waiters();
    let ready = false;
    const wait = track(waiters.wait(() => ready, { timeoutMs: 10_000 }));
    ready = true; // not noticed until the owner says something changed
    await flush();
    expect(wait.state).toBe('pending');
    waiters.recheck();
    await flush();
    expect(wait.state).toBe('resolved');
  });

  it('a recheck settles only the waiters whose condition holds', async () => {
    const waiters = new Waiters();
    const flags = { a: false, b: false };
    const a = track(waiters.wait(() => flags.a, { timeoutMs: 10_000 }));
    const b = track(waiters.wait(() => flags.b, { timeoutMs: 10_000 }));
    flags.a = true;
    waiters.recheck();
    await flush();
    expect([a.state, b.state]).toEqual(['resolved', 'pending']);
  });

  it('the timeout settles it (never rejects)', async () => {
    const waiters = new Waiters();
    const wait = track(waiters.wait(() => false, { timeoutMs: 500 }));
    await vi.advanceTimersByTimeAsync(499);
    expect(wait.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(wait.state).toBe('resolved');
  });

  it('an abort settles it, and an already aborted signal settles it at once', async () => {
    const waiters = new Waiters();
    const controller = new AbortController();
    const wait = track(waiters.wait(() => false, { timeoutMs: 10_000, signal: controller.signal }));
    await flush();
    expect(wait.state).toBe('pending');
    controller.abort();
    await flush();
    expect(wait.state).toBe('resolved');

    const early = track(
      waiters.wait(() => false, { timeoutMs: 10_000, signal: controller.signal }),
    );
    await flush();
    expect(early.state).toBe('resolved');
  });

  it('releaseAll settles every waiter; a settled waiter is checked no more', async () => {
    const waiters = new Waiters();
    const condition = vi.fn(() => false);
    const waits = [1, 2, 3].map(() => track(waiters.wait(condition, { timeoutMs: 10_000 })));
    waiters.releaseAll();
    await flush();
    expect(waits.map((w) => w.state)).toEqual(['resolved', 'resolved', 'resolved']);
    condition.mockClear();
    waiters.recheck();
    expect(condition).not.toHaveBeenCalled();
    // Its timer is gone too.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('with a cap, progress restarts the timeout (as long as some arrives), but never past the cap', async () => {
    const waiters = new Waiters({ now: () => Date.now() });
    const wait = track(waiters.wait(() => false, { timeoutMs: 1000, maxMs: 3500 }));
    await vi.advanceTimersByTimeAsync(900);
    waiters.progress();
    await vi.advanceTimersByTimeAsync(999);
    expect(wait.state).toBe('pending'); // 1899: quiet for 999 ms only
    await vi.advanceTimersByTimeAsync(1);
    expect(wait.state).toBe('resolved'); // 1900: quiet for the timeout

    const t0 = Date.now();
    const capped = track(waiters.wait(() => false, { timeoutMs: 1000, maxMs: 3500 }));
    for (let i = 0; i < 50 && capped.state === 'pending'; i++) {
      await vi.advanceTimersByTimeAsync(100);
      if ((Date.now() - t0) % 800 === 0) waiters.progress();
    }
    // Progress every 800 ms, yet it settles at the cap.
    expect(Date.now() - t0).toBe(3500);
    const late = track(waiters.wait(() => false, { timeoutMs: 1000, maxMs: 3500 }));
    await vi.advanceTimersByTimeAsync(999);
    expect(late.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(late.state).toBe('resolved'); // progress before a waiter began is not its progress
    expect(vi.getTimerCount()).toBe(0);
  });

  it('with a cap, the cap does not run while held; progress still bounds the wait', async () => {
    const waiters = new Waiters({ now: () => Date.now() });
    const t0 = Date.now();
    let asking = true; // the owner's own request for it: in line, then in flight
    const wait = track(
      waiters.wait(() => false, { timeoutMs: 1000, maxMs: 3500, held: () => asking }),
    );
    for (let i = 0; i < 50; i++) {
      await vi.advanceTimersByTimeAsync(100);
      if ((Date.now() - t0) % 800 === 0) waiters.progress();
    }
    expect(wait.state).toBe('pending'); // 5000 ms held, past the cap, with progress
    asking = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(wait.state).toBe('resolved'); // no longer held: the cap, long passed

    // Held with no progress at all: the timeout ends it.
    const stuck = track(
      waiters.wait(() => false, { timeoutMs: 1000, maxMs: 3500, held: () => true }),
    );
    await vi.advanceTimersByTimeAsync(999);
    expect(stuck.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(stuck.state).toBe('resolved');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('without a cap, progress changes nothing: the timeout is fixed', async () => {
    const waiters = new Waiters({ now: () => Date.now() });
    const wait = track(waiters.wait(() => false, { timeoutMs: 1000 }));
    await vi.advanceTimersByTimeAsync(900);
    waiters.progress();
    await vi.advanceTimersByTimeAsync(100);
    expect(wait.state).toBe('resolved');
  });

  it('without a clock given it counts on the system clock: a capped wait still ends', async () => {
    const waiters = new Waiters();
    const wait = track(waiters.wait(() => false, { timeoutMs: 1000, maxMs: 1500 }));
    await vi.advanceTimersByTimeAsync(500);
    waiters.progress();
    await vi.advanceTimersByTimeAsync(999);
    expect(wait.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(wait.state).toBe('resolved');
  });
});
