import type {
  CallToolResult,
  Client,
  McpSubscription,
  ReadResourceResult,
  ServerCapabilities,
} from '@modelcontextprotocol/client';
import { QueryClient, type QueryKey } from '@tanstack/query-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CacheBridge } from '../../src/core/cacheBridge';
import { digest } from '../../src/core/digest';
import type { McpEventInput } from '../../src/core/events';
import { InterestRegistry } from '../../src/core/interest';
import { createMcpKeys } from '../../src/core/keys';
import { LocalUpstream } from '../../src/core/local';
import { defineToolCalls } from '../../src/core/tools';
import { type Deferred, deferred, track } from '../support/deferred';

/** Nobody signs in here: one identity throughout. */
const IDENTITY = { connection: 'client:1', auth: undefined };
const ACK_TIMEOUT_MS = 3000;
const REQUEST_TIMEOUT_MS = 5000;
const TOOL_TIMEOUT_MS = 60_000;
const LINGER_MS = 1000;
/** How long a first load nobody observed keeps its URI held after the read (local.ts). */
const FIRST_LOAD_GRACE_MS = 5000;
const FULL: ServerCapabilities = {
  resources: { subscribe: true, listChanged: true },
  tools: { listChanged: true },
  prompts: { listChanged: true },
};

interface Filter {
  resourceSubscriptions?: string[];
  [bit: string]: unknown;
}

interface Request<T> {
  params: unknown;
  options: { signal?: AbortSignal; timeout?: number; cacheMode?: string; [k: string]: unknown };
  answer: Deferred<T>;
}

/**
 * An SDK client as far as a connection, its session and the upstream use it
 * (the wire is the integration tests' business): era and capabilities, the
 * listen stream, and requests the test answers by hand. `honourAbort: false`
 * models an answer already on its way when the signal aborts.
 */
function fakeClient(capabilities: ServerCapabilities) {
  const listens: Array<{ filter: Filter; request: Deferred<McpSubscription> }> = [];
  const requests = {
    read: [] as Request<ReadResourceResult>[],
    list: [] as Array<Request<Record<string, unknown>> & { method: string }>,
    call: [] as Request<CallToolResult>[],
  };
  const settings = { honourAbort: true };
  const request =
    <T>(into: Request<T>[], extra: object = {}) =>
    (params: unknown, options: Request<T>['options'] = {}) => {
      const answer = deferred<T>();
      if (settings.honourAbort) {
        options.signal?.addEventListener('abort', () => answer.reject(options.signal?.reason), {
          once: true,
        });
      }
      into.push({ params, options, answer, ...extra } as Request<T>);
      return answer.promise;
    };
  const list = (method: string) => (params: unknown, options: Request<unknown>['options']) =>
    request(requests.list as Request<Record<string, unknown>>[], { method })(params, options);
  const client = {
    setNotificationHandler: vi.fn(),
    fallbackNotificationHandler: undefined as unknown,
    onclose: undefined as unknown,
    transport: undefined,
    getProtocolEra: () => 'modern' as const,
    getNegotiatedProtocolVersion: () => '2026-07-28',
    getServerCapabilities: () => capabilities,
    close: vi.fn(async () => {}),
    listen: vi.fn((filter: Filter) => {
      const subscription = deferred<McpSubscription>();
      listens.push({ filter, request: subscription });
      return subscription.promise;
    }),
    readResource: vi.fn(request(requests.read)),
    listResources: vi.fn(list('resources/list')),
    listResourceTemplates: vi.fn(list('resources/templates/list')),
    listTools: vi.fn(list('tools/list')),
    listPrompts: vi.fn(list('prompts/list')),
    callTool: vi.fn(request(requests.call)),
  };
  return {
    client: client as unknown as Client,
    calls: client,
    listens,
    requests,
    settings,
    /** The server acknowledges the latest listen, honouring everything asked. */
    async ack() {
      const last = listens.at(-1);
      if (!last) throw new Error('no listen request');
      last.request.resolve({
        honoredFilter: last.filter,
        close: async () => {},
        closed: new Promise(() => {}),
      } as unknown as McpSubscription);
      await flush();
    },
  };
}

const flush = () => vi.advanceTimersByTimeAsync(0);

const contents = (uri: string, text = `${uri} text`) => ({ contents: [{ uri, text }] });

const cleanups: Array<() => unknown> = [];

/**
 * A LocalUpstream over a real Connection and Session: the client is passed in
 * (a borrowed source), the interest registry is real, the cache bridge a recorder.
 */
function setup({
  capabilities = FULL,
  onUse = true,
}: {
  capabilities?: ServerCapabilities;
  onUse?: boolean;
} = {}) {
  const fake = fakeClient(capabilities);
  const queryClient = new QueryClient();
  const keys = createMcpKeys();
  const emit = vi.fn((_event: McpEventInput) => {});
  const life = new AbortController();
  let upstream: LocalUpstream | undefined;
  const interest = new InterestRegistry({
    lingerMs: LINGER_MS,
    emit,
    onFlush: (desire) => upstream?.interest(desire),
    signal: life.signal,
  });
  const bridge = {
    changed: vi.fn(),
    listChanged: vi.fn(),
    coverageChanged: vi.fn(),
    listFetched: vi.fn(),
  };
  const demand = vi.fn(() => {
    if (onUse) upstream?.start();
  });
  const local = new LocalUpstream(
    {
      queryClient,
      client: fake.client,
      ackTimeoutMs: ACK_TIMEOUT_MS,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      toolTimeoutMs: TOOL_TIMEOUT_MS,
    },
    {
      queryClient,
      keys,
      interest,
      bridge: bridge as unknown as CacheBridge,
      emit,
      clock: { now: () => Date.now(), random: () => 1 },
      demand,
      identity: () => IDENTITY,
    },
  );
  upstream = local;
  cleanups.push(async () => {
    await local.dispose();
    life.abort();
    queryClient.clear();
  });
  const events = (type: McpEventInput['type']) =>
    emit.mock.calls.map(([event]) => event).filter((event) => event.type === type);
  return {
    fake,
    local,
    queryClient,
    keys,
    interest,
    bridge,
    demand,
    events,
    /** Started, connected, and its first stream (the resource list's list_changed) acknowledged. */
    async ready() {
      local.start();
      await flush();
      expect(local.connection.state.phase).toBe('ready');
      await fake.ack();
    },
    read(uri: unknown, signal = new AbortController().signal) {
      return track(local.query(['resource', uri], signal));
    },
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

// Tool calls register themselves where they are made (tools.ts); these tests call the upstream.
defineToolCalls();

describe('LocalUpstream', () => {
  describe('reads', () => {
    it('a resource key is read on the ready session, bypassing the SDK cache, bounded by requestTimeoutMs, with the query’s signal (rule 7)', async () => {
      const t = setup();
      await t.ready();
      const signal = new AbortController().signal;
      const read = t.read('a://1', signal);
      await flush();
      expect(t.fake.requests.read).toHaveLength(1);
      const [request] = t.fake.requests.read;
      expect(request?.params).toEqual({ uri: 'a://1' });
      expect(request?.options).toEqual({
        cacheMode: 'bypass',
        signal,
        timeout: REQUEST_TIMEOUT_MS,
      });
      request?.answer.resolve(contents('a://1'));
      await flush();
      expect(read.value).toEqual(contents('a://1'));
      expect(t.events('read')).toEqual([
        { type: 'read', phase: 'start', uri: 'a://1' },
        { type: 'read', phase: 'success', uri: 'a://1', digest: undefined },
      ]);
    });

    it('once the diagnostics install a digest, each read’s success event carries the contents’ digest', async () => {
      const t = setup();
      t.local.digestReads(digest);
      await t.ready();
      const read = t.read('a://1');
      await flush();
      t.fake.requests.read[0]?.answer.resolve(contents('a://1'));
      await flush();
      expect(read.state).toBe('resolved');
      expect(t.events('read').at(-1)).toEqual({
        type: 'read',
        phase: 'success',
        uri: 'a://1',
        digest: digest(contents('a://1').contents),
      });
    });

    it('a query asks for the connection: it connects on use and then reads', async () => {
      const t = setup();
      const read = t.read('a://1');
      expect(t.demand).toHaveBeenCalledTimes(1);
      await flush();
      expect(t.local.connection.state.phase).toBe('ready');
      await t.fake.ack();
      expect(t.fake.requests.read).toHaveLength(1);
      t.fake.requests.read[0]?.answer.resolve(contents('a://1'));
      await flush();
      expect(read.state).toBe('resolved');
    });

    it('each list key fetches its list with its own call, reports the count, and gives the list’s ttl to the bridge', async () => {
      const t = setup();
      await t.ready();
      const cases = [
        ['resources', 'resources/list', 'resources', 'bypass'],
        ['resourceTemplates', 'resources/templates/list', 'resourceTemplates', 'bypass'],
        ['tools', 'tools/list', 'tools', 'refresh'],
        ['prompts', 'prompts/list', 'prompts', 'bypass'],
      ] as const;
      for (const [i, [kind, method, field, cacheMode]] of cases.entries()) {
        const signal = new AbortController().signal;
        const fetched = track(t.local.query(t.keys.list(kind), signal));
        await flush();
        const request = t.fake.requests.list[i];
        expect(request?.method).toBe(method);
        expect(request?.options).toEqual({ cacheMode, signal, timeout: REQUEST_TIMEOUT_MS });
        request?.answer.resolve({ [field]: [{ name: 'one' }, { name: 'two' }], ttlMs: 1000 * i });
        await flush();
        expect(fetched.value).toEqual([{ name: 'one' }, { name: 'two' }]);
        expect(t.bridge.listFetched).toHaveBeenLastCalledWith(kind, 1000 * i);
        expect(t.events('list').slice(-2)).toEqual([
          { type: 'list', list: kind, phase: 'start' },
          { type: 'list', list: kind, phase: 'success', count: 2 },
        ]);
      }
    });

    it('a key that is not an MCP key of this scope is UNKNOWN_KEY, with no request and no connection', async () => {
      const t = setup();
      for (const key of [['todos'], ['mcp', 'other', 'resource', 'a://1'], ['resource']]) {
        const result = track(t.local.query(key as QueryKey, new AbortController().signal));
        await flush();
        expect(result.error, JSON.stringify(key)).toMatchObject({ code: 'UNKNOWN_KEY' });
      }
      expect(t.demand).not.toHaveBeenCalled();
      expect(t.local.connection.started).toBe(false);
    });

    it('an invalid URI is an error with no request, no event and no connection (rule 8)', async () => {
      const t = setup();
      for (const uri of ['', 42, null, undefined, { href: 'a://1' }]) {
        const read = t.read(uri);
        await flush();
        expect(read.error, String(uri)).toMatchObject({ code: 'INVALID_URI' });
      }
      expect(t.demand).not.toHaveBeenCalled();
      expect(t.fake.requests.read).toHaveLength(0);
      expect(t.events('read')).toEqual([]);
    });

    it('empty contents and another resource’s contents are errors, reported, and the content shown stays (rule 8)', async () => {
      const t = setup();
      await t.ready();
      const key = t.keys.resource('a://1');
      t.queryClient.setQueryData(key, contents('a://1', 'v1'));
      const answers: Array<[unknown, string]> = [
        [{ contents: [] }, 'EMPTY_CONTENTS'],
        [{}, 'EMPTY_CONTENTS'],
        [contents('b://2'), 'WRONG_URI'],
      ];
      for (const [answer, code] of answers) {
        const fetched = track(
          t.queryClient.fetchQuery({
            queryKey: key,
            queryFn: ({ signal }) => t.local.query(key, signal),
            retry: false,
            staleTime: 0,
          }),
        );
        await flush();
        t.fake.requests.read.at(-1)?.answer.resolve(answer as ReadResourceResult);
        await flush();
        expect(fetched.error).toMatchObject({ code });
        expect(t.events('read').at(-1)).toMatchObject({ phase: 'error', uri: 'a://1' });
        expect(t.queryClient.getQueryData(key)).toEqual(contents('a://1', 'v1'));
      }
      // A bad answer is not the connection's fault.
      expect(t.local.connection.state.phase).toBe('ready');
    });

    it('contents under another spelling of the URI (URL-normalised) or below it (a directory) are the resource’s', async () => {
      const t = setup();
      await t.ready();
      const spelled = t.read('file:///a b');
      const directory = t.read('file:///dir');
      await flush();
      t.fake.requests.read[0]?.answer.resolve(contents('file:///a%20b'));
      t.fake.requests.read[1]?.answer.resolve(contents('file:///dir/child.txt'));
      await flush();
      expect(spelled.state).toBe('resolved');
      expect(directory.state).toBe('resolved');
    });
  });

  describe('one read on first load (rule 4)', () => {
    it('a wanted URI whose coverage can still come waits for the acknowledgement, then is read once', async () => {
      const t = setup();
      await t.ready();
      const release = t.interest.holdUri('a://1');
      await flush();
      expect(t.fake.listens.at(-1)?.filter.resourceSubscriptions).toEqual(['a://1']);
      const read = t.read('a://1');
      await vi.advanceTimersByTimeAsync(ACK_TIMEOUT_MS - 1);
      expect(t.fake.requests.read).toHaveLength(0);
      await t.fake.ack();
      expect(t.local.isCovered('a://1')).toBe(true);
      expect(t.fake.requests.read).toHaveLength(1);
      t.fake.requests.read[0]?.answer.resolve(contents('a://1'));
      await flush();
      expect(read.state).toBe('resolved');
      release();
    });

    it('the wait for coverage is bounded by ackTimeoutMs: then the read goes out uncovered', async () => {
      const t = setup();
      await t.ready();
      t.interest.holdUri('a://1');
      await flush();
      t.read('a://1');
      await vi.advanceTimersByTimeAsync(ACK_TIMEOUT_MS - 1);
      expect(t.fake.requests.read).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(t.fake.requests.read).toHaveLength(1);
    });

    it('a first load nobody observes holds its URI while it reads, so it waits for coverage too, and lets go a grace period after', async () => {
      const t = setup();
      await t.ready();
      const key = t.keys.resource('a://1');
      // What prefetchQuery / a loader leaves in the cache: an entry with no data and no observer.
      t.queryClient.getQueryCache().build(t.queryClient, { queryKey: key });
      const read = track(t.local.query(key, new AbortController().signal));
      expect(t.interest.wants('a://1')).toBe(true);
      await flush();
      expect(t.fake.listens.at(-1)?.filter.resourceSubscriptions).toEqual(['a://1']);
      expect(t.fake.requests.read).toHaveLength(0);
      await t.fake.ack();
      expect(t.fake.requests.read).toHaveLength(1);
      t.fake.requests.read[0]?.answer.resolve(contents('a://1'));
      await flush();
      expect(read.state).toBe('resolved');

      await vi.advanceTimersByTimeAsync(FIRST_LOAD_GRACE_MS - 1);
      expect(t.interest.desire().held.has('a://1')).toBe(true);
      await vi.advanceTimersByTimeAsync(1);
      expect(t.interest.desire().held.has('a://1')).toBe(false);
      await vi.advanceTimersByTimeAsync(LINGER_MS);
      expect(t.interest.wants('a://1')).toBe(false);
    });

    it('an entry that has data already is not held for its read: it goes out at once', async () => {
      const t = setup();
      await t.ready();
      const key = t.keys.resource('a://1');
      t.queryClient.setQueryData(key, contents('a://1', 'v1'));
      t.local.query(key, new AbortController().signal).catch(() => {});
      expect(t.interest.wants('a://1')).toBe(false);
      await flush();
      expect(t.fake.requests.read).toHaveLength(1);
    });

    it('a read waiting for coverage whose session ends goes to the next session without waiting again', async () => {
      const t = setup();
      await t.ready();
      t.interest.holdUri('a://1');
      await flush();
      const read = t.read('a://1');
      await flush();
      const listensBefore = t.fake.listens.length;
      t.local.connection.reconnect();
      await flush();
      expect(t.local.connection.state.phase).toBe('ready');
      // The new session asked for its stream; nobody acknowledged it, and the read went anyway.
      expect(t.fake.listens.length).toBeGreaterThan(listensBefore);
      expect(t.fake.requests.read).toHaveLength(1);
      t.fake.requests.read[0]?.answer.resolve(contents('a://1'));
      await flush();
      expect(read.state).toBe('resolved');
    });
  });

  describe('the fence: what comes back after the signal aborted is not ours', () => {
    it('an answer that arrives after the serving signal aborted is not written and not reported, and fails nothing', async () => {
      const t = setup();
      await t.ready();
      t.fake.settings.honourAbort = false;
      const key = t.keys.resource('a://1');
      t.queryClient.setQueryData(key, contents('a://1', 'v1'));
      // What routing gives the upstream: the query's signal and its McpCacheSync's attachment.
      const attachment = new AbortController();
      const fetched = track(
        t.queryClient.fetchQuery({
          queryKey: key,
          queryFn: ({ signal }) => t.local.query(key, AbortSignal.any([signal, attachment.signal])),
          retry: false,
          staleTime: 0,
        }),
      );
      await flush();
      expect(t.fake.requests.read).toHaveLength(1);
      attachment.abort(new Error('another identity took the scope'));
      t.fake.requests.read[0]?.answer.resolve(contents('a://1', 'v2 of someone else'));
      await flush();
      expect(fetched.state).toBe('rejected');
      expect(t.queryClient.getQueryData(key)).toEqual(contents('a://1', 'v1'));
      expect(t.events('read').map((event) => (event as { phase: string }).phase)).toEqual([
        'start',
      ]);
    });

    it('a read cancelled while it waits for coverage sends nothing and reports nothing', async () => {
      const t = setup();
      await t.ready();
      t.interest.holdUri('a://1');
      await flush();
      const query = new AbortController();
      const read = t.read('a://1', query.signal);
      await flush();
      const reason = new Error('unmounted');
      query.abort(reason);
      await flush();
      expect(read.error).toBe(reason);
      await t.fake.ack();
      expect(t.fake.requests.read).toHaveLength(0);
      expect(t.events('read')).toEqual([]);
    });

    it('a read cancelled in flight reports no error and does not fail the session', async () => {
      const t = setup();
      await t.ready();
      const query = new AbortController();
      const read = t.read('a://1', query.signal);
      await flush();
      query.abort(Object.assign(new Error('401'), { status: 401 }));
      await flush();
      expect(read.state).toBe('rejected');
      expect(t.events('read').map((event) => (event as { phase: string }).phase)).toEqual([
        'start',
      ]);
      expect(t.local.connection.state.phase).toBe('ready');
    });
  });

  describe('failures go to the session', () => {
    const unauthorized = () =>
      Object.assign(new Error('Unauthorized'), { name: 'UnauthorizedError' });

    it('a read refused for want of credentials makes the connection unauthorized (rule 13)', async () => {
      const t = setup();
      await t.ready();
      const read = t.read('a://1');
      await flush();
      t.fake.requests.read[0]?.answer.reject(unauthorized());
      await flush();
      expect(read.error).toMatchObject({ name: 'UnauthorizedError' });
      expect(t.events('read').at(-1)).toMatchObject({ phase: 'error', error: 'Unauthorized' });
      expect(t.local.connection.state.phase).toBe('unauthorized');
      expect(t.local.connection.session).toBeUndefined();
    });

    it('any other failure of a read leaves the connection as it is', async () => {
      const t = setup();
      await t.ready();
      const read = t.read('a://1');
      await flush();
      t.fake.requests.read[0]?.answer.reject(
        Object.assign(new Error('Resource not found'), { code: -32602 }),
      );
      await flush();
      expect(read.state).toBe('rejected');
      expect(t.local.connection.state.phase).toBe('ready');
    });

    it('a refusal that answers a session which has ended since says nothing about the next one', async () => {
      const t = setup();
      await t.ready();
      const read = t.read('a://1');
      await flush();
      t.local.connection.reconnect();
      await flush();
      expect(t.local.connection.state.phase).toBe('ready');
      t.fake.requests.read[0]?.answer.reject(unauthorized());
      await flush();
      expect(read.state).toBe('rejected');
      expect(t.local.connection.state.phase).toBe('ready');
    });

    it('a tool call refused for want of credentials makes the connection unauthorized', async () => {
      const t = setup({ capabilities: { resources: FULL.resources } });
      await t.ready();
      const call = track(t.local.callTool({ name: 'echo' }));
      await flush();
      t.fake.requests.call[0]?.answer.reject(unauthorized());
      await flush();
      expect(call.state).toBe('rejected');
      expect(t.local.connection.state.phase).toBe('unauthorized');
    });
  });

  describe('tool calls', () => {
    it('a call lists the tools once per client first, then passes name, arguments, timeout, signal and progress', async () => {
      const t = setup();
      await t.ready();
      const signal = new AbortController().signal;
      const onProgress = vi.fn();
      const first = track(
        t.local.callTool({ name: 'echo', arguments: { text: 'hi' }, signal, onProgress }),
      );
      await flush();
      expect(t.fake.requests.list.map((request) => request.method)).toEqual(['tools/list']);
      expect(t.fake.requests.call).toHaveLength(0);
      t.fake.requests.list[0]?.answer.resolve({ tools: [] });
      await flush();
      expect(t.fake.requests.call).toHaveLength(1);
      expect(t.fake.requests.call[0]?.params).toEqual({ name: 'echo', arguments: { text: 'hi' } });
      expect(t.fake.requests.call[0]?.options).toEqual({
        timeout: TOOL_TIMEOUT_MS,
        resetTimeoutOnProgress: true,
        // Progress restarts the timeout, up to the total (default toolMaxTotalTimeoutMs, 30 min).
        maxTotalTimeout: 1_800_000,
        signal,
        onprogress: onProgress,
      });
      const result = { content: [{ type: 'text', text: 'hi' }] } as CallToolResult;
      t.fake.requests.call[0]?.answer.resolve(result);
      await flush();
      expect(first.value).toBe(result);

      t.local.callTool({ name: 'echo' }).catch(() => {});
      await flush();
      expect(t.fake.requests.list).toHaveLength(1);
      expect(t.fake.requests.call).toHaveLength(2);
    });
  });

  describe('coverage and the client', () => {
    it('coverage, the ready client and client() follow the session', async () => {
      const t = setup();
      expect(t.local.isCovered('a://1')).toBe(false);
      expect(t.local.isListCovered('resources')).toBe(false);
      expect(t.local.readyClient()).toBeUndefined();
      const client = track(t.local.client());
      await t.ready();
      expect(client.value).toBe(t.fake.client);
      expect(t.local.readyClient()).toBe(t.fake.client);
      expect(t.local.isListCovered('resources')).toBe(true);
      t.interest.holdUri('a://1');
      await flush();
      await t.fake.ack();
      expect(t.local.isCovered('a://1')).toBe(true);
      await t.local.stop();
      expect(t.local.isCovered('a://1')).toBe(false);
      expect(t.local.readyClient()).toBeUndefined();
    });
  });

  describe('before the provider mounts', () => {
    it('rendering on the server (no document, never started): NOT_STARTED at once for reads, lists and calls', async () => {
      const t = setup({ onUse: false });
      expect(typeof document).toBe('undefined');
      const read = t.read('a://1');
      const list = track(t.local.query(t.keys.resources(), new AbortController().signal));
      const call = track(t.local.callTool({ name: 'echo' }));
      const client = track(t.local.client());
      await flush(); // microtasks only: the clock does not move
      for (const outcome of [read, list, call, client]) {
        expect(outcome.error).toMatchObject({ code: 'NOT_STARTED' });
      }
      expect(t.local.connection.started).toBe(false);
    });

    it('in a browser, a read before the provider mounts waits for the mount', async () => {
      vi.stubGlobal('document', {});
      const t = setup({ onUse: false });
      const read = t.read('a://1');
      await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS - 1);
      expect(read.state).toBe('pending');
      t.local.start();
      await flush();
      await t.fake.ack();
      expect(t.fake.requests.read).toHaveLength(1);
    });

    it('in a browser, a provider that never mounts fails the read after requestTimeoutMs, NOT_STARTED', async () => {
      vi.stubGlobal('document', {});
      const t = setup({ onUse: false });
      const read = t.read('a://1');
      await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS - 1);
      expect(read.state).toBe('pending');
      await vi.advanceTimersByTimeAsync(1);
      expect(read.error).toMatchObject({ code: 'NOT_STARTED' });
    });
  });
});
