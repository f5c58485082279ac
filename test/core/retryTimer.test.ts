/** @vitest-environment jsdom */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RetryTimer } from '../../src/core/retryTimer';

describe('RetryTimer', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it('runs after the delay while online', async () => {
    vi.useFakeTimers();
    const timer = new RetryTimer();
    let runs = 0;
    expect(timer.schedule(100, () => runs++)).toBe(false);
    expect(timer.pending).toBe(true);
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(1);
    expect(timer.pending).toBe(false);
  });

  it('while offline, waits for the network instead of burning attempts', async () => {
    vi.useFakeTimers();
    const onLine = vi.spyOn(navigator, 'onLine', 'get').mockReturnValue(false);
    const timer = new RetryTimer();
    let runs = 0;
    expect(timer.schedule(100, () => runs++)).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs).toBe(0);
    onLine.mockReturnValue(true);
    window.dispatchEvent(new Event('online'));
    expect(runs).toBe(1);
    window.dispatchEvent(new Event('online'));
    expect(runs).toBe(1);
  });

  it('cancel stops a pending retry of either kind', async () => {
    vi.useFakeTimers();
    const timer = new RetryTimer();
    let runs = 0;
    timer.schedule(10, () => runs++);
    timer.cancel();
    vi.spyOn(navigator, 'onLine', 'get').mockReturnValue(false);
    timer.schedule(10, () => runs++);
    timer.cancel();
    window.dispatchEvent(new Event('online'));
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(0);
  });
});
