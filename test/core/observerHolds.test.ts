import { QueryClient, type QueryKey, QueryObserver } from '@tanstack/query-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { McpEventInput } from '../../src/core/events';
import { type Desire, InterestRegistry } from '../../src/core/interest';
import { createMcpKeys, type McpKeys, mcpKeys } from '../../src/core/keys';
import { ObserverHolds } from '../../src/core/observerHolds';

const LINGER_MS = 1000;

/** A read that never answers: nothing here touches a network. */
const never = () => new Promise<never>(() => {});

function setup(keys: McpKeys = mcpKeys, { listen = true } = {}) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const emit = vi.fn((_event: McpEventInput) => {});
  const onFlush = vi.fn((_desire: Desire) => {});
  const life = new AbortController();
  const interest = new InterestRegistry({
    lingerMs: LINGER_MS,
    emit,
    onFlush,
    signal: life.signal,
  });
  const holds = new ObserverHolds(keys, interest);
  const cache = client.getQueryCache();
  let stop: (() => void) | undefined;
  const attach = () => {
    stop = cache.subscribe((event) => holds.onCacheEvent(event));
  };
  if (listen) attach();
  const observers: Array<() => void> = [];
  return {
    client,
    interest,
    holds,
    cache,
    attach,
    emit,
    /** URIs with a holder now. */
    held: () => [...interest.desire().held].sort(),
    /** The latest holder count the registry reported for `uri`. */
    refs: (uri: string) =>
      emit.mock.calls
        .map(([event]) => event)
        .filter((event) => event.type === 'interest' && event.uri === uri)
        .map((event) => (event as { refs: number }).refs)
        .at(-1),
    /** A mounted observer (what useQuery does), and how to unmount it. */
    mount(queryKey: QueryKey, options: Record<string, unknown> = {}) {
      const observer = new QueryObserver(client, { queryKey, queryFn: never, ...options });
      const unmount = observer.subscribe(() => {});
      observers.push(unmount);
      return { observer, unmount };
    },
    cleanup() {
      for (const unmount of observers) unmount();
      stop?.();
      holds.dispose();
      life.abort();
      client.clear();
    },
  };
}

let t: ReturnType<typeof setup>;

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  t?.cleanup();
  vi.useRealTimers();
});

describe('ObserverHolds', () => {
  it('an observer of a resource key holds its URI while it is subscribed', async () => {
    t = setup();
    const observer = new QueryObserver(t.client, {
      queryKey: mcpKeys.resource('a://1'),
      queryFn: never,
    });
    expect(t.held()).toEqual([]); // built, not mounted
    const unmount = observer.subscribe(() => {});
    expect(t.held()).toEqual(['a://1']);
    expect(t.refs('a://1')).toBe(1);

    unmount();
    expect(t.held()).toEqual([]);
    expect(t.interest.wants('a://1')).toBe(true); // lingering
    await vi.advanceTimersByTimeAsync(LINGER_MS);
    expect(t.interest.wants('a://1')).toBe(false);
  });

  it('each observer of one URI is one holder', () => {
    t = setup();
    const first = t.mount(mcpKeys.resource('a://1'));
    t.mount(mcpKeys.resource('a://1'));
    expect(t.refs('a://1')).toBe(2);
    first.unmount();
    expect(t.refs('a://1')).toBe(1);
    expect(t.held()).toEqual(['a://1']);
  });

  it.each<[string, Record<string, unknown>]>([
    ['enabled: false', { enabled: false }],
    ['enabled: () => false', { enabled: () => false }],
    ['meta: { mcpSubscribe: false }', { meta: { mcpSubscribe: false } }],
  ])('an observer with %s holds nothing', (_, options) => {
    t = setup();
    t.mount(mcpKeys.resource('a://1'), options);
    expect(t.held()).toEqual([]);
    expect(t.emit).not.toHaveBeenCalled();
  });

  it('setOptions to enabled takes the hold, and back to disabled lets it go', () => {
    t = setup();
    const key = mcpKeys.resource('a://1');
    const { observer } = t.mount(key, { enabled: false });
    expect(t.held()).toEqual([]);
    observer.setOptions({ queryKey: key, queryFn: never, enabled: true });
    expect(t.held()).toEqual(['a://1']);
    observer.setOptions({ queryKey: key, queryFn: never, enabled: false });
    expect(t.held()).toEqual([]);
    observer.setOptions({ queryKey: key, queryFn: never, meta: { mcpSubscribe: false } });
    expect(t.held()).toEqual([]);
    observer.setOptions({ queryKey: key, queryFn: never });
    expect(t.held()).toEqual(['a://1']);
    expect(t.refs('a://1')).toBe(1);
  });

  it('setOptions to a new key moves the hold to the new URI', () => {
    t = setup();
    const { observer } = t.mount(mcpKeys.resource('a://1'));
    observer.setOptions({ queryKey: mcpKeys.resource('b://2'), queryFn: never });
    expect(t.held()).toEqual(['b://2']);
    expect(t.refs('a://1')).toBe(0);
    expect(t.refs('b://2')).toBe(1);
    // Options changing without a new key keep the one hold: not released and taken again.
    const events = t.emit.mock.calls.length;
    observer.setOptions({ queryKey: mcpKeys.resource('b://2'), queryFn: never, staleTime: 5 });
    expect(t.refs('b://2')).toBe(1);
    expect(t.emit.mock.calls.length).toBe(events);
  });

  it.each<[QueryKey, 'resources' | 'tools' | 'prompts']>([
    [mcpKeys.tools(), 'tools'],
    [mcpKeys.prompts(), 'prompts'],
  ])('an observer of the list key %j holds that list', async (key, list) => {
    t = setup();
    const { unmount } = t.mount(key);
    expect(t.interest.wantsList(list)).toBe(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(t.interest.desire().lists.has(list)).toBe(true);
    unmount();
    await vi.advanceTimersByTimeAsync(LINGER_MS);
    expect(t.interest.wantsList(list)).toBe(false);
    expect(t.interest.desire().lists.has(list)).toBe(false);
  });

  it('observers of the resource and template lists hold the resources list, and no URI', () => {
    t = setup();
    t.mount(mcpKeys.resources());
    t.mount(mcpKeys.resourceTemplates());
    expect(t.interest.desire().lists).toEqual(new Set(['resources']));
    expect(t.held()).toEqual([]);
    expect(t.interest.wantsList('tools')).toBe(false);
  });

  it('keys that are not MCP keys, or name an empty URI, hold nothing', () => {
    t = setup();
    t.mount(['todos', 1]);
    t.mount(['resource', '']);
    t.mount(['resource', 42]);
    t.mount(['resource', 'a://1', 'extra']);
    expect(t.held()).toEqual([]);
    expect(t.emit).not.toHaveBeenCalled();
  });

  it("a scoped provider holds only its own scope's keys", () => {
    const scoped = createMcpKeys('server-a');
    t = setup(scoped);
    t.mount(mcpKeys.resource('a://1'));
    t.mount(createMcpKeys('server-b').resource('b://2'));
    t.mount(scoped.resource('c://3'));
    expect(t.held()).toEqual(['c://3']);
  });

  it('scan picks up observers mounted before it listened, once', () => {
    t = setup(mcpKeys, { listen: false });
    const early = t.mount(mcpKeys.resource('a://1'));
    t.mount(mcpKeys.resource('b://2'), { enabled: false });
    t.mount(mcpKeys.tools());
    expect(t.held()).toEqual([]);

    t.holds.scan(t.cache);
    t.attach();
    t.holds.scan(t.cache); // again: no second hold
    expect(t.held()).toEqual(['a://1']);
    expect(t.refs('a://1')).toBe(1);
    expect(t.interest.wantsList('tools')).toBe(true);

    // Scanned holds are let go like any other.
    early.unmount();
    expect(t.held()).toEqual([]);
  });

  it('dispose lets every hold go', () => {
    t = setup();
    t.mount(mcpKeys.resource('a://1'));
    t.mount(mcpKeys.resource('b://2'));
    t.holds.dispose();
    expect(t.held()).toEqual([]);
    expect(t.refs('a://1')).toBe(0);
    expect(t.refs('b://2')).toBe(0);
  });
});
