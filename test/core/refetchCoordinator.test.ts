import { hashKey, QueryClient, QueryObserver } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { RefetchCoordinator } from '../../src/core/refetchCoordinator';

/** A fake source whose reads the test finishes by hand, one at a time. */
function controlledSource() {
  let version = 0;
  const pending: Array<() => void> = [];
  let reads = 0;
  return {
    change() {
      version += 1;
    },
    get reads() {
      return reads;
    },
    get inFlight() {
      return pending.length;
    },
    /** Let the oldest read answer with the content as of now. */
    finishOne() {
      pending.shift()?.();
    },
    queryFn: () => {
      reads += 1;
      const seen = version;
      return new Promise<string>((resolve) => pending.push(() => resolve(`v${seen}`)));
    },
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('RefetchCoordinator', () => {
  let client: QueryClient;
  let coordinator: RefetchCoordinator;
  const key = ['resource', 'a://1'];
  /** Whether the server covers the key now (what the bridge would say). */
  let covering = true;

  function setup({ covered = true } = {}) {
    covering = covered;
    client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    coordinator = new RefetchCoordinator(client, () => covering);
    client.getQueryCache().subscribe((event) => coordinator.onCacheEvent(event));
    const source = controlledSource();
    const observer = new QueryObserver(client, {
      queryKey: key,
      queryFn: source.queryFn,
      staleTime: Number.POSITIVE_INFINITY,
    });
    const unsubscribe = observer.subscribe(() => {});
    return { source, observer, unsubscribe };
  }

  afterEach(() => {
    coordinator.stop();
    client.clear();
  });

  it('a burst of 100 signals during a read costs one trailing read, ending on the latest', async () => {
    const { source } = setup();
    expect(source.reads).toBe(1);
    source.finishOne();
    await tick();
    expect(source.reads).toBe(1);

    for (let i = 0; i < 100; i++) {
      source.change();
      coordinator.signal(key);
    }
    expect(source.reads).toBe(2); // the first signal starts a read; the rest mark it dirty
    source.finishOne();
    await tick();
    expect(source.reads).toBe(3); // exactly one trailing read
    source.finishOne();
    await tick();
    expect(source.reads).toBe(3);
    expect(client.getQueryData(key)).toBe('v100');
  });

  it('a change during the very first read is not lost (TanStack issue 8530)', async () => {
    const { source } = setup();
    source.change();
    expect(coordinator.signal(key)).toBe('deferred');
    source.finishOne(); // answers v0: read before the change
    await tick();
    expect(client.getQueryData(key)).toBe('v0');
    expect(source.reads).toBe(2);
    source.finishOne();
    await tick();
    expect(client.getQueryData(key)).toBe('v1');
  });

  it('an inactive query is only marked stale, never read', async () => {
    const { source, unsubscribe } = setup();
    source.finishOne();
    await tick();
    unsubscribe();
    expect(coordinator.signal(key)).toBe('marked-stale');
    await tick();
    expect(source.reads).toBe(1);
    expect(client.getQueryCache().find({ queryKey: key })?.state.isInvalidated).toBe(true);
  });

  it('marking an inactive query stale looks it up by hash: a flood never scans the cache', async () => {
    const { source, unsubscribe } = setup();
    source.finishOne();
    await tick();
    unsubscribe();
    for (let i = 0; i < 1000; i++) client.setQueryData(['resource', `other://${i}`], i);
    const cache = client.getQueryCache();
    let scans = 0;
    const getAll = cache.getAll.bind(cache);
    cache.getAll = () => {
      scans += 1;
      return getAll();
    };
    for (let i = 0; i < 100; i++) expect(coordinator.signal(key)).toBe('marked-stale');
    await tick();
    expect(scans).toBe(0);
    expect(source.reads).toBe(1);
    expect(cache.get(hashKey(key))?.state.isInvalidated).toBe(true);
  });

  it('a stopped coordinator reads nothing, and says so apart from a key that is not cached', async () => {
    const { source } = setup();
    source.finishOne();
    await tick();
    coordinator.stop();
    expect(coordinator.signal(key)).toBe('stopped');
    expect(coordinator.signal(['resource', 'never://seen'])).toBe('stopped');
    coordinator.covered([{ key, awaited: false }]);
    await tick();
    expect(source.reads).toBe(1);
  });

  it('a key nobody cached is ignored', () => {
    setup();
    expect(coordinator.signal(['resource', 'never://seen'])).toBe('absent');
  });

  it('coverage re-reads only data read before the coverage began', async () => {
    const { source } = setup(); // read under coverage
    source.finishOne();
    await tick();
    coordinator.covered([{ key, awaited: false }]);
    expect(source.reads).toBe(1);

    coordinator.uncovered([key]);
    coordinator.covered([{ key, awaited: false }]);
    expect(source.reads).toBe(2);
    source.finishOne();
    await tick();
  });

  it('a read learns it started from the QueryCache: a signal before it costs nothing more, one during it one trailing read', async () => {
    const { source } = setup();
    source.finishOne();
    await tick();
    coordinator.signal(key); // starts read 2 (the fetch action resets the dirty mark)
    expect(source.reads).toBe(2);
    source.finishOne();
    await tick();
    expect(source.reads).toBe(2);
  });

  it('a read waiting for coverage when it comes is the one read: no second read (rule 4)', async () => {
    const { source } = setup({ covered: false }); // the first load starts uncovered, and waits
    covering = true;
    coordinator.covered([{ key, awaited: true }]);
    source.finishOne();
    await tick();
    expect(source.reads).toBe(1);
    // It counts as read under coverage: losing and regaining it re-reads once.
    coordinator.uncovered([key]);
    coordinator.covered([{ key, awaited: false }]);
    expect(source.reads).toBe(2);
    source.finishOne();
    await tick();
  });

  it('coverage gained during a read that was not waiting for it re-reads once the read settles', async () => {
    const { source } = setup({ covered: false });
    covering = true;
    coordinator.covered([{ key, awaited: false }]); // the read may have gone out before
    source.finishOne();
    await tick();
    expect(source.reads).toBe(2);
    source.finishOne();
    await tick();
    expect(source.reads).toBe(2);
  });
});
