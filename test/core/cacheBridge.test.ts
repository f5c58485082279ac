import type { Resource } from '@modelcontextprotocol/client';
import {
  hashKey,
  type Query,
  QueryClient,
  type QueryKey,
  QueryObserver,
} from '@tanstack/query-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CacheBridge } from '../../src/core/cacheBridge';
import { McpQueryError } from '../../src/core/errors';
import { InterestRegistry } from '../../src/core/interest';
import { createMcpKeys, type McpKeys } from '../../src/core/keys';
// Prompts register their request kind (kept fresh by the prompts list) when imported.
import '../../src/core/prompts';
import type { NotifiedList } from '../../src/core/lists';
import { attach, routedQueryFn } from '../../src/core/routing';
import type { CoverageChange } from '../../src/core/session';
import { type Deferred, deferred } from '../support/deferred';

const LINGER_MS = 1000;

interface Read {
  key: QueryKey;
  answer: Deferred<unknown>;
  /** Whether the test has answered it. */
  answered: boolean;
}

/** The upstream behind the routed query function: reads the test answers by hand. */
function fakeUpstream() {
  const reads: Read[] = [];
  return {
    reads,
    query: vi.fn((key: QueryKey, signal: AbortSignal) => {
      const answer = deferred<unknown>();
      signal.addEventListener('abort', () => answer.reject(signal.reason), { once: true });
      reads.push({ key, answer, answered: false });
      return answer.promise;
    }),
    /** How many reads of `key` started. */
    count: (key: QueryKey) => reads.filter((read) => hashKey(read.key) === hashKey(key)).length,
    /** The keys read so far, in order. */
    keys: () => reads.map((read) => read.key),
  };
}

const text = (uri: string, value: string, extra: object = {}) => ({
  contents: [{ uri, text: value }],
  ...extra,
});
const listed = (uri: string, extra: Partial<Resource> = {}): Resource => ({
  uri,
  name: uri,
  ...extra,
});

const noCoverageChange: CoverageChange = {
  gained: [],
  lost: [],
  listsGained: [],
  listsLost: [],
  awaited: { uris: new Set(), lists: new Set() },
};

const flush = () => vi.advanceTimersByTimeAsync(0);

const cleanups: Array<() => void> = [];

function setup({ scope, start = true }: { scope?: string; start?: boolean } = {}) {
  const keys: McpKeys = createMcpKeys(scope);
  const client = new QueryClient();
  const life = new AbortController();
  const interest = new InterestRegistry({
    lingerMs: LINGER_MS,
    emit: () => {},
    onFlush: () => {},
    signal: life.signal,
  });
  const covered = new Set<string>();
  const listsCovered = new Set<NotifiedList>();
  const bridge = new CacheBridge({
    queryClient: client,
    keys,
    interest,
    isCovered: (uri) => covered.has(uri),
    isListCovered: (list) => listsCovered.has(list),
  });
  const upstream = fakeUpstream();
  attach(client, scope, upstream);
  bridge.registerDefaults(routedQueryFn(scope));
  if (start) bridge.start();
  const unmounts: Array<() => void> = [];
  cleanups.push(() => {
    for (const unmount of unmounts) unmount();
    bridge.dispose();
    life.abort();
    client.clear();
  });
  const query = (key: QueryKey) => client.getQueryCache().get(hashKey(key)) as Query;
  return {
    keys,
    client,
    interest,
    covered,
    listsCovered,
    bridge,
    upstream,
    query,
    /** A mounted observer, as useResource / useQuery makes (queryFn and freshness from the defaults). */
    mount(key: QueryKey, options: Record<string, unknown> = {}) {
      const observer = new QueryObserver(client, { queryKey: key, ...options });
      const unmount = observer.subscribe(() => {});
      unmounts.push(unmount);
      return { observer, unmount };
    },
    /** Answer the oldest unanswered read of `key`. */
    async answer(key: QueryKey, data: unknown) {
      // A routed read starts a few microtasks after its fetch.
      await flush();
      const read = upstream.reads.find((r) => hashKey(r.key) === hashKey(key) && !r.answered);
      if (!read) throw new Error(`no read of ${JSON.stringify(key)} to answer`);
      read.answered = true;
      read.answer.resolve(data);
      await flush();
    },
    /** An entry with content and an observer, read and answered, so nothing is in flight. */
    async shown(uri: string, data: unknown = text(uri, `${uri} v1`)) {
      const shown = this.mount(keys.resource(uri));
      await flush();
      await this.answer(keys.resource(uri), data);
      return shown;
    },
    /** An observed resource list, answered with `resources`. */
    async listShown(resources: Resource[]) {
      this.mount(keys.resources());
      await flush();
      await this.answer(keys.resources(), resources);
    },
  };
}

/** The staleTime the bridge's defaults give `key` now. */
function staleTimeOf(client: QueryClient, query: Query): unknown {
  const { staleTime } = client.getQueryDefaults(query.queryKey);
  return typeof staleTime === 'function' ? staleTime(query as never) : staleTime;
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  vi.useRealTimers();
});

describe('CacheBridge', () => {
  describe('query defaults', () => {
    it('a covered resource is fresh until notified; an uncovered one is fresh for its ttlMs (absent, zero, negative or not a number: stale at once) (rule 7)', () => {
      const t = setup();
      const cases: Array<[unknown, number]> = [
        [5000, 5000],
        [undefined, 0],
        [0, 0],
        [-1, 0],
        ['5000', 0],
        [Number.POSITIVE_INFINITY, 0],
      ];
      for (const [i, [ttlMs, expected]] of cases.entries()) {
        const uri = `ttl://${i}`;
        t.client.setQueryData(t.keys.resource(uri), text(uri, 'x', { ttlMs }));
        expect(staleTimeOf(t.client, t.query(t.keys.resource(uri))), String(ttlMs)).toBe(expected);
        t.covered.add(uri);
        expect(staleTimeOf(t.client, t.query(t.keys.resource(uri)))).toBe(Number.POSITIVE_INFINITY);
      }
    });

    it('freshness decides whether a fetch reads: a covered entry is answered from the cache, an uncovered one without ttl is read again', async () => {
      const t = setup();
      const key = t.keys.resource('a://1');
      const first = t.client.fetchQuery({ queryKey: key });
      await t.answer(key, text('a://1', 'v1'));
      await first;
      t.covered.add('a://1');
      await t.client.fetchQuery({ queryKey: key });
      expect(t.upstream.count(key)).toBe(1);
      t.covered.delete('a://1');
      const again = t.client.fetchQuery({ queryKey: key });
      await flush();
      expect(t.upstream.count(key)).toBe(2);
      await t.answer(key, text('a://1', 'v2'));
      await again;
    });

    it('a list is fresh until notified while its list_changed is covered, else for the ttl of its last fetch; templates follow the resources list', () => {
      const t = setup();
      for (const kind of ['resources', 'resourceTemplates', 'tools', 'prompts'] as const) {
        t.client.setQueryData(t.keys.list(kind), []);
      }
      const stale = (kind: 'resources' | 'resourceTemplates' | 'tools' | 'prompts') =>
        staleTimeOf(t.client, t.query(t.keys.list(kind)));
      expect(stale('tools')).toBe(0);
      t.bridge.listFetched('tools', 30_000);
      t.bridge.listFetched('prompts', 'soon');
      expect(stale('tools')).toBe(30_000);
      expect(stale('prompts')).toBe(0);
      t.listsCovered.add('tools');
      expect(stale('tools')).toBe(Number.POSITIVE_INFINITY);
      expect(stale('resourceTemplates')).toBe(0);
      t.listsCovered.add('resources');
      expect(stale('resources')).toBe(Number.POSITIVE_INFINITY);
      expect(stale('resourceTemplates')).toBe(Number.POSITIVE_INFINITY);
      expect(stale('prompts')).toBe(0);
    });

    it('a scoped bridge sets the defaults of its own keys only', () => {
      const t = setup({ scope: 's' });
      expect(t.client.getQueryDefaults(t.keys.resource('a://1')).queryFn).toBeTypeOf('function');
      expect(t.client.getQueryDefaults(t.keys.tools()).queryFn).toBeTypeOf('function');
      expect(t.client.getQueryDefaults(['resource', 'a://1']).queryFn).toBeUndefined();
      expect(t.client.getQueryDefaults(['tools']).queryFn).toBeUndefined();
    });

    it('what retrying cannot fix is tried once; anything else is retried three times (rule 8)', async () => {
      const t = setup();
      const permanent: Array<[string, unknown]> = [
        ['invalid://uri', new McpQueryError('INVALID_URI', 'bad')],
        ['empty://1', new McpQueryError('EMPTY_CONTENTS', 'nothing')],
        ['wrong://1', new McpQueryError('WRONG_URI', 'another')],
        ['gone://1', Object.assign(new Error('Resource not found'), { code: -32002 })],
        ['gone://2', Object.assign(new Error('Resource not found'), { code: -32602 })],
      ];
      const transient = new Error('fetch failed');
      const settled: Array<Promise<unknown>> = [];
      for (const [uri] of [...permanent, ['flaky://1', transient] as const]) {
        settled.push(t.client.fetchQuery({ queryKey: t.keys.resource(uri) }).catch((e) => e));
      }
      for (let round = 0; round < 4; round++) {
        await flush();
        for (const read of t.upstream.reads) {
          if (read.answered) continue;
          read.answered = true;
          const uri = t.keys.uriOf(read.key) as string;
          read.answer.reject(permanent.find(([p]) => p === uri)?.[1] ?? transient);
        }
        await vi.advanceTimersByTimeAsync(60_000);
      }
      await Promise.all(settled);
      for (const [uri] of permanent) expect(t.upstream.count(t.keys.resource(uri)), uri).toBe(1);
      expect(t.upstream.count(t.keys.resource('flaky://1'))).toBe(4);
    });
  });

  describe('holds from observers (rule 9)', () => {
    it('an observer of a resource key holds its URI; enabled: false and mcpSubscribe: false hold nothing; unmounting lets go after the linger', async () => {
      const t = setup();
      const shown = t.mount(t.keys.resource('a://1'));
      t.mount(t.keys.resource('off://1'), { enabled: false });
      t.mount(t.keys.resource('opt-out://1'), { meta: { mcpSubscribe: false } });
      t.mount(t.keys.tools());
      expect(t.interest.wants('a://1')).toBe(true);
      expect(t.interest.wants('off://1')).toBe(false);
      expect(t.interest.wants('opt-out://1')).toBe(false);
      expect(t.interest.wantsList('tools')).toBe(true);
      expect(t.interest.wantsList('prompts')).toBe(false);

      shown.unmount();
      await vi.advanceTimersByTimeAsync(LINGER_MS - 1);
      expect(t.interest.wants('a://1')).toBe(true);
      await vi.advanceTimersByTimeAsync(1);
      expect(t.interest.wants('a://1')).toBe(false);
    });

    it('observers mounted before the bridge started hold too, and disposing the bridge lets every hold go', async () => {
      const t = setup({ start: false });
      t.mount(t.keys.resource('early://1'));
      expect(t.interest.wants('early://1')).toBe(false);
      t.bridge.start();
      expect(t.interest.wants('early://1')).toBe(true);
      t.bridge.dispose();
      await vi.advanceTimersByTimeAsync(LINGER_MS);
      expect(t.interest.wants('early://1')).toBe(false);
      // And it no longer listens: a new observer holds nothing.
      t.mount(t.keys.resource('late://1'));
      expect(t.interest.wants('late://1')).toBe(false);
    });
  });

  describe('changed (rule 3)', () => {
    it('re-reads an observed entry once; a burst during that read costs one trailing read, which ends on the latest', async () => {
      const t = setup();
      const key = t.keys.resource('a://1');
      const { observer } = await t.shown('a://1');
      t.bridge.changed('a://1');
      await flush();
      expect(t.upstream.count(key)).toBe(2);
      for (let i = 0; i < 50; i++) t.bridge.changed('a://1');
      await flush();
      expect(t.upstream.count(key)).toBe(2);
      await t.answer(key, text('a://1', 'v2'));
      expect(t.upstream.count(key)).toBe(3);
      await t.answer(key, text('a://1', 'v52'));
      expect(t.upstream.count(key)).toBe(3);
      expect(observer.getCurrentResult().data).toEqual(text('a://1', 'v52'));
    });

    it('a URI nobody cached reads nothing; an entry nobody observes is only marked stale', async () => {
      const t = setup();
      t.bridge.changed('never://cached');
      t.client.setQueryData(t.keys.resource('idle://1'), text('idle://1', 'v1'));
      t.bridge.changed('idle://1');
      await flush();
      expect(t.upstream.reads).toHaveLength(0);
      expect(t.query(t.keys.resource('idle://1')).state.isInvalidated).toBe(true);
    });
  });

  describe('listChanged', () => {
    it('the resource list is fetched even when nobody shows it, when resources are cached', async () => {
      const t = setup();
      await t.shown('a://1');
      t.client.setQueryData(t.keys.resources(), [listed('a://1')]);
      t.bridge.listChanged('resources');
      await flush();
      expect(t.upstream.count(t.keys.resources())).toBe(1);
    });

    it('the resource list is fetched even when it was never cached, when resources are; with nothing cached, nothing is', async () => {
      const t = setup();
      // An entry still loading its first content is not content to re-check.
      t.mount(t.keys.resource('loading://1'));
      t.bridge.listChanged('resources');
      await flush();
      expect(t.upstream.count(t.keys.resources())).toBe(0);

      await t.shown('a://1');
      t.bridge.listChanged('resources');
      await flush();
      expect(t.upstream.count(t.keys.resources())).toBe(1);
    });

    it('a list_changed refetches the lists it keeps fresh that someone shows, marks the unobserved ones stale, and touches no other list', async () => {
      const t = setup();
      t.mount(t.keys.tools());
      t.mount(t.keys.resourceTemplates());
      await flush();
      await t.answer(t.keys.tools(), []);
      await t.answer(t.keys.resourceTemplates(), []);
      t.client.setQueryData(t.keys.prompts(), []);
      t.client.setQueryData(t.keys.resources(), []);

      t.bridge.listChanged('tools');
      await flush();
      expect(t.upstream.count(t.keys.tools())).toBe(2);
      expect(t.upstream.count(t.keys.resourceTemplates())).toBe(1);
      expect(t.upstream.count(t.keys.resources())).toBe(0);

      t.bridge.listChanged('prompts');
      await flush();
      expect(t.upstream.count(t.keys.prompts())).toBe(0);
      expect(t.query(t.keys.prompts()).state.isInvalidated).toBe(true);

      t.bridge.listChanged('resources');
      await flush();
      expect(t.upstream.count(t.keys.resourceTemplates())).toBe(2);
      expect(t.upstream.count(t.keys.resources())).toBe(1);
    });
    it('the list_changed of one turn are one: a flood of them scans the cache once and refetches what they keep fresh once, with no trailing read', async () => {
      const t = setup();
      const prompt = t.keys.prompt('greet');
      t.mount(prompt);
      t.mount(t.keys.prompts());
      await flush();
      await t.answer(prompt, { messages: [] });
      await t.answer(t.keys.prompts(), []);
      for (let i = 0; i < 1000; i++)
        t.client.setQueryData(t.keys.resource(`x://${i}`), text(`x://${i}`, 'v1'));
      const scans = vi.spyOn(t.client.getQueryCache(), 'getAll');
      for (let i = 0; i < 100; i++) t.bridge.listChanged('prompts');
      await flush();
      expect(scans).toHaveBeenCalledTimes(1);
      await t.answer(prompt, { messages: [] });
      await t.answer(t.keys.prompts(), []);
      expect(t.upstream.count(prompt)).toBe(2);
      expect(t.upstream.count(t.keys.prompts())).toBe(2);
    });

    it('a list_changed pass that throws still ends its turn: the list_changed of later turns are handled', async () => {
      const t = setup();
      t.mount(t.keys.prompts());
      await flush();
      await t.answer(t.keys.prompts(), []);
      vi.spyOn(t.client.getQueryCache(), 'getAll').mockImplementationOnce(() => {
        throw new Error('boom');
      });
      t.bridge.listChanged('prompts');
      await expect(flush()).rejects.toThrow('boom');
      t.bridge.listChanged('prompts');
      await flush();
      expect(t.upstream.count(t.keys.prompts())).toBe(2);
    });
  });

  describe('the resource list diff', () => {
    it('the first list re-reads only the cached resources it does not list: a removal is the only certainty', async () => {
      const t = setup();
      for (const uri of ['a://1', 'b://1', 'c://1']) await t.shown(uri);
      // Loading its first content, unlisted: nothing to re-read yet (its read is under way).
      t.mount(t.keys.resource('loading://1'));
      await t.listShown([listed('a://1'), listed('c://1'), listed('uncached://1')]);
      await flush();
      await t.answer(t.keys.resource('loading://1'), text('loading://1', 'v1'));
      expect(t.upstream.keys().slice(3)).toEqual([
        t.keys.resource('loading://1'),
        t.keys.resources(),
        t.keys.resource('b://1'),
      ]);
    });

    it('a later list re-reads exactly the cached resources whose entry changed, appeared or disappeared', async () => {
      const t = setup();
      for (const uri of ['same://1', 'changed://1', 'gone://1', 'new://1']) await t.shown(uri);
      const first = [listed('same://1'), listed('changed://1'), listed('gone://1')];
      await t.listShown(first);
      await flush();
      // The first list: new://1 was cached but not listed.
      expect(t.upstream.count(t.keys.resource('new://1'))).toBe(2);
      await t.answer(t.keys.resource('new://1'), text('new://1', 'v1'));
      const before = t.upstream.reads.length;

      t.bridge.listChanged('resources');
      await flush();
      await t.answer(t.keys.resources(), [
        listed('same://1'),
        listed('changed://1', { title: 'renamed' }),
        listed('new://1'),
        listed('uncached://2'),
      ]);
      await flush();
      const reread = t.upstream
        .keys()
        .slice(before + 1)
        .map((key) => t.keys.uriOf(key));
      expect(reread.sort()).toEqual(['changed://1', 'gone://1', 'new://1']);
    });

    it('an equal list re-reads nothing', async () => {
      const t = setup();
      await t.shown('a://1');
      await t.listShown([listed('a://1')]);
      const before = t.upstream.reads.length;
      t.bridge.listChanged('resources');
      await flush();
      await t.answer(t.keys.resources(), [listed('a://1')]);
      await flush();
      expect(t.upstream.reads.length).toBe(before + 1);
    });
  });

  describe('coverageChanged (rules 4 and 6)', () => {
    it('data read before its coverage began is re-read once when it begins; after losing coverage, the next gain re-reads again', async () => {
      const t = setup();
      const key = t.keys.resource('a://1');
      await t.shown('a://1');
      t.covered.add('a://1');
      t.bridge.coverageChanged({ ...noCoverageChange, gained: ['a://1'] });
      await flush();
      expect(t.upstream.count(key)).toBe(2);
      await t.answer(key, text('a://1', 'v2'));
      // Read under coverage: the same coverage reported again costs nothing.
      t.bridge.coverageChanged({ ...noCoverageChange, gained: ['a://1'] });
      await flush();
      expect(t.upstream.count(key)).toBe(2);

      t.covered.delete('a://1');
      t.bridge.coverageChanged({ ...noCoverageChange, lost: ['a://1'] });
      t.covered.add('a://1');
      t.bridge.coverageChanged({ ...noCoverageChange, gained: ['a://1'] });
      await flush();
      expect(t.upstream.count(key)).toBe(3);
      await t.answer(key, text('a://1', 'v3'));
    });

    it('a read waiting for exactly this coverage (awaited) is the one read: no second read', async () => {
      const t = setup();
      const key = t.keys.resource('a://1');
      t.mount(key);
      await flush();
      expect(t.upstream.count(key)).toBe(1);
      t.covered.add('a://1');
      t.bridge.coverageChanged({
        ...noCoverageChange,
        gained: ['a://1'],
        awaited: { uris: new Set(['a://1']), lists: new Set() },
      });
      await t.answer(key, text('a://1', 'v1'));
      await flush();
      expect(t.upstream.count(key)).toBe(1);
    });

    it('a read in flight that was not waiting for the coverage may predate it: one more read once it settles', async () => {
      const t = setup();
      const key = t.keys.resource('a://1');
      t.mount(key);
      await flush();
      t.covered.add('a://1');
      t.bridge.coverageChanged({ ...noCoverageChange, gained: ['a://1'] });
      expect(t.upstream.count(key)).toBe(1);
      await t.answer(key, text('a://1', 'v1'));
      await flush();
      expect(t.upstream.count(key)).toBe(2);
      await t.answer(key, text('a://1', 'v2'));
    });

    it('a list coverage gained re-reads the lists it keeps fresh: resources re-reads the resource and template lists', async () => {
      const t = setup();
      await t.listShown([]);
      t.mount(t.keys.resourceTemplates());
      t.mount(t.keys.tools());
      await flush();
      await t.answer(t.keys.resourceTemplates(), []);
      await t.answer(t.keys.tools(), []);
      t.listsCovered.add('resources');
      t.bridge.coverageChanged({ ...noCoverageChange, listsGained: ['resources'] });
      await flush();
      expect(t.upstream.count(t.keys.resources())).toBe(2);
      expect(t.upstream.count(t.keys.resourceTemplates())).toBe(2);
      expect(t.upstream.count(t.keys.tools())).toBe(1);
    });
  });

  it('once disposed, changes and coverage read nothing', async () => {
    const t = setup();
    await t.shown('a://1');
    t.bridge.dispose();
    t.bridge.changed('a://1');
    t.covered.add('a://1');
    t.bridge.coverageChanged({ ...noCoverageChange, gained: ['a://1'] });
    await flush();
    expect(t.upstream.reads).toHaveLength(1);
  });

  it('once disposed, a resources list_changed fetches nothing, not even the list its diff would need', async () => {
    const t = setup();
    await t.shown('a://1');
    t.bridge.dispose();
    t.bridge.listChanged('resources');
    await flush();
    expect(t.upstream.reads).toHaveLength(1);
  });
});
