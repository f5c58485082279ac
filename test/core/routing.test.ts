import { QueryClient, type QueryFunctionContext, type QueryKey } from '@tanstack/query-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { McpQueryError } from '../../src/core/errors';
import { ATTACH_WAIT_MS, attach, detach, routedQueryFn } from '../../src/core/routing';
import { type Deferred, deferred, track } from '../support/deferred';

const KEY: QueryKey = ['resource', 'a://1'];

interface Run {
  key: QueryKey;
  signal: AbortSignal;
  answer: Deferred<unknown>;
}

/** What an upstream does for routing: runs a query, and gives up when its signal aborts. */
function fakeRunner() {
  const runs: Run[] = [];
  return {
    runs,
    query: vi.fn((key: QueryKey, signal: AbortSignal) => {
      const answer = deferred<unknown>();
      signal.addEventListener('abort', () => answer.reject(signal.reason), { once: true });
      runs.push({ key, signal, answer });
      return answer.promise;
    }),
    /** The latest run. */
    last(): Run {
      const run = runs.at(-1);
      if (!run) throw new Error('nothing ran');
      return run;
    },
  };
}

/** The routed query function, called as TanStack calls it. */
function run(client: QueryClient, scope: string | undefined, signal: AbortSignal, key = KEY) {
  return routedQueryFn(scope)({ client, queryKey: key, signal } as QueryFunctionContext);
}

const flush = () => vi.advanceTimersByTimeAsync(0);

let client: QueryClient;

beforeEach(() => {
  vi.useFakeTimers();
  // A fresh QueryClient per test: routing keeps its attachments per QueryClient.
  client = new QueryClient();
});

afterEach(() => {
  client.clear();
  vi.useRealTimers();
});

describe('routing', () => {
  it('a query runs on the upstream serving its QueryClient and scope, with its key, and gets its answer', async () => {
    const runner = fakeRunner();
    attach(client, undefined, runner);
    const result = track(run(client, undefined, new AbortController().signal));
    await flush();
    expect(runner.query).toHaveBeenCalledTimes(1);
    expect(runner.last().key).toEqual(KEY);
    runner.last().answer.resolve('content');
    await flush();
    expect(result.value).toBe('content');
  });

  it('scopes are separate, and so are QueryClients', async () => {
    const unscoped = fakeRunner();
    const scoped = fakeRunner();
    attach(client, undefined, unscoped);
    attach(client, 'b', scoped);
    track(run(client, 'b', new AbortController().signal, ['mcp', 'b', 'resource', 'b://1']));
    await flush();
    expect(scoped.query).toHaveBeenCalledTimes(1);
    expect(unscoped.query).not.toHaveBeenCalled();

    // A scope nobody serves, and another QueryClient, wait.
    const other = new QueryClient();
    const waitingScope = track(run(client, 'c', new AbortController().signal));
    const waitingClient = track(run(other, undefined, new AbortController().signal));
    await flush();
    expect(waitingScope.state).toBe('pending');
    expect(waitingClient.state).toBe('pending');
    expect(unscoped.query).not.toHaveBeenCalled();
    expect(scoped.query).toHaveBeenCalledTimes(1);
  });

  it('the most recent attachment wins; the one it replaced is aborted', async () => {
    const first = fakeRunner();
    const second = fakeRunner();
    const firstSignal = attach(client, undefined, first);
    const secondSignal = attach(client, undefined, second);
    expect(firstSignal.aborted).toBe(true);
    expect(secondSignal.aborted).toBe(false);
    track(run(client, undefined, new AbortController().signal));
    await flush();
    expect(first.query).not.toHaveBeenCalled();
    expect(second.query).toHaveBeenCalledTimes(1);
  });

  it('attaching again (another identity) aborts the previous attachment of the same upstream too', () => {
    const runner = fakeRunner();
    const before = attach(client, undefined, runner);
    const after = attach(client, undefined, runner);
    expect(before.aborted).toBe(true);
    expect(after.aborted).toBe(false);
  });

  it('detaching with a replaced attachment’s signal changes nothing; with the current one, nothing serves', async () => {
    const first = fakeRunner();
    const second = fakeRunner();
    const old = attach(client, undefined, first);
    const current = attach(client, undefined, second);
    detach(client, undefined, old);
    expect(current.aborted).toBe(false);
    track(run(client, undefined, new AbortController().signal));
    await flush();
    expect(second.query).toHaveBeenCalledTimes(1);

    detach(client, undefined, current);
    expect(current.aborted).toBe(true);
    const waiting = track(run(client, undefined, new AbortController().signal));
    await flush();
    expect(waiting.state).toBe('pending');
    expect(second.query).toHaveBeenCalledTimes(1);
  });

  it('a query before anything serves waits for an attachment, then runs on it (a route loader before the provider)', async () => {
    const result = track(
      client.fetchQuery({ queryKey: KEY, queryFn: routedQueryFn(undefined), retry: false }),
    );
    await vi.advanceTimersByTimeAsync(ATTACH_WAIT_MS - 1);
    expect(result.state).toBe('pending');
    const runner = fakeRunner();
    attach(client, undefined, runner);
    await flush();
    expect(runner.query).toHaveBeenCalledTimes(1);
    runner.last().answer.resolve('loaded');
    await flush();
    expect(result.value).toBe('loaded');
    expect(client.getQueryData(KEY)).toBe('loaded');
  });

  it('a query waiting for its scope keeps waiting while other scopes attach, and runs once its own does', async () => {
    const result = track(run(client, 'c', new AbortController().signal));
    const late = track(run(client, 'c', new AbortController().signal));
    await flush();
    const other = fakeRunner();
    attach(client, 'b', other);
    attach(client, undefined, other);
    await flush();
    expect(other.query).not.toHaveBeenCalled();
    const runner = fakeRunner();
    attach(client, 'c', runner);
    await flush();
    expect(runner.query).toHaveBeenCalledTimes(2);
    runner.runs[0]?.answer.resolve('c content');
    await flush();
    expect(result.value).toBe('c content');
    expect(late.state).toBe('pending');

    // And the bound still holds for one that never gets its scope served.
    const never = track(run(client, 'd', new AbortController().signal));
    attach(client, 'b', other);
    await vi.advanceTimersByTimeAsync(ATTACH_WAIT_MS);
    expect(never.error).toMatchObject({ code: 'NOT_ATTACHED' });
  });

  it('the wait for an attachment is bounded by ATTACH_WAIT_MS: NOT_ATTACHED, naming the scope, and nothing runs later', async () => {
    const unscoped = track(run(client, undefined, new AbortController().signal));
    const scoped = track(run(client, 'admin', new AbortController().signal));
    await vi.advanceTimersByTimeAsync(ATTACH_WAIT_MS - 1);
    expect(unscoped.state).toBe('pending');
    expect(scoped.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(unscoped.error).toMatchObject({ code: 'NOT_ATTACHED' });
    expect((unscoped.error as Error).message).toBe('no McpCacheSync serves this QueryClient');
    expect(scoped.error).toMatchObject({ code: 'NOT_ATTACHED' });
    expect((scoped.error as Error).message).toContain('"admin"');

    const runner = fakeRunner();
    attach(client, undefined, runner);
    attach(client, 'admin', runner);
    await flush();
    expect(runner.query).not.toHaveBeenCalled();
  });

  it('a read whose attachment is replaced mid-flight is cancelled there and runs again on the successor', async () => {
    const first = fakeRunner();
    const second = fakeRunner();
    attach(client, undefined, first);
    const query = new AbortController();
    const result = track(run(client, undefined, query.signal));
    await flush();
    const cancelled = first.last();
    expect(cancelled.signal.aborted).toBe(false);

    attach(client, undefined, second);
    expect(cancelled.signal.aborted).toBe(true);
    await flush();
    expect(second.query).toHaveBeenCalledTimes(1);
    expect(second.last().key).toEqual(KEY);
    expect(result.state).toBe('pending');
    second.last().answer.resolve('from the successor');
    await flush();
    expect(result.value).toBe('from the successor');
    expect(first.query).toHaveBeenCalledTimes(1);
    expect(query.signal.aborted).toBe(false);
  });

  it('a read whose upstream is detached with no successor fails DISPOSED', async () => {
    const runner = fakeRunner();
    const serving = attach(client, undefined, runner);
    const result = track(run(client, undefined, new AbortController().signal));
    await flush();
    detach(client, undefined, serving);
    await flush();
    expect(result.error).toBeInstanceOf(McpQueryError);
    expect(result.error).toMatchObject({ code: 'DISPOSED' });
    expect(runner.query).toHaveBeenCalledTimes(1);
  });

  it('the query’s own abort cancels the read on its upstream, and the query ends with it: nothing runs elsewhere', async () => {
    const first = fakeRunner();
    const second = fakeRunner();
    attach(client, undefined, first);
    const query = new AbortController();
    const result = track(run(client, undefined, query.signal));
    await flush();
    const reason = new Error('unmounted');
    query.abort(reason);
    // Replaced in the same moment: the query is over, so it does not move.
    attach(client, undefined, second);
    await flush();
    expect(first.last().signal.aborted).toBe(true);
    expect(result.error).toBe(reason);
    expect(second.query).not.toHaveBeenCalled();
  });

  it('the query’s own abort ends its wait for an attachment: an attachment later runs nothing', async () => {
    const query = new AbortController();
    const result = track(run(client, undefined, query.signal));
    await flush();
    const reason = new Error('cancelled');
    query.abort(reason);
    await flush();
    expect(result.error).toBe(reason);
    const runner = fakeRunner();
    attach(client, undefined, runner);
    await flush();
    expect(runner.query).not.toHaveBeenCalled();
  });

  it('an upstream’s own error, while it still serves, is the query’s error (not run again)', async () => {
    const runner = fakeRunner();
    attach(client, undefined, runner);
    const result = track(run(client, undefined, new AbortController().signal));
    await flush();
    const failure = new McpQueryError('EMPTY_CONTENTS', 'nothing in it');
    runner.last().answer.reject(failure);
    await flush();
    expect(result.error).toBe(failure);
    expect(runner.query).toHaveBeenCalledTimes(1);
  });
});
