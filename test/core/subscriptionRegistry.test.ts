import { afterEach, describe, expect, it, vi } from 'vitest';
import { SubscriptionRegistry } from '../../src/core/subscriptionRegistry';

const flush = () => new Promise<void>((resolve) => queueMicrotask(resolve));

describe('SubscriptionRegistry', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('N holders of one URI make one subscription, reported once per tick', async () => {
    const changes: string[][] = [];
    const registry = new SubscriptionRegistry({ lingerMs: 10 }, (uris) => changes.push([...uris]));
    const releases = Array.from({ length: 5 }, () => registry.acquire('a://1'));
    registry.acquire('b://2');
    await flush();
    expect(changes).toEqual([['a://1', 'b://2']]);
    expect(registry.refs('a://1')).toBe(5);
    for (const release of releases) release();
    expect(registry.has('a://1')).toBe(true);
  });

  it('the last release keeps the URI for the linger, then drops it', async () => {
    vi.useFakeTimers();
    const changes: string[][] = [];
    const registry = new SubscriptionRegistry({ lingerMs: 1000 }, (uris) =>
      changes.push([...uris]),
    );
    const release = registry.acquire('a://1');
    await flush();
    release();
    await vi.advanceTimersByTimeAsync(999);
    expect(registry.has('a://1')).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(registry.has('a://1')).toBe(false);
    expect(changes).toEqual([['a://1'], []]);
  });

  it('a remount within the linger changes nothing (StrictMode)', async () => {
    vi.useFakeTimers();
    const changes: string[][] = [];
    const registry = new SubscriptionRegistry({ lingerMs: 1000 }, (uris) =>
      changes.push([...uris]),
    );
    registry.acquire('a://1')();
    registry.acquire('a://1');
    await vi.advanceTimersByTimeAsync(5000);
    expect(changes).toEqual([['a://1']]);
  });

  it('releasing twice is harmless', async () => {
    const registry = new SubscriptionRegistry({ lingerMs: 0 }, () => {});
    const release = registry.acquire('a://1');
    registry.acquire('a://1');
    release();
    release();
    expect(registry.refs('a://1')).toBe(1);
  });
});
