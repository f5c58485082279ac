import type { Client } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ClientSource, Prepare } from '../../src/core/clientSource';
import { Connection, type SessionLike } from '../../src/core/connection';
import { McpQueryError } from '../../src/core/errors';
import type { ConnectionPhase, ConnectionSnapshot, McpEventInput } from '../../src/core/events';
import type { TransportObserver } from '../../src/core/httpTransport';
import type { SessionControl } from '../../src/core/session';
import { type Deferred, deferred, track } from '../support/deferred';

const BACKOFF = { initialDelayMs: 1000, maxDelayMs: 8000 };
const LABEL = 'http://mcp.test/mcp';
const CAPABILITIES = { resources: { subscribe: true, listChanged: true } };

/** Only what the connection touches of an SDK client. */
function fakeClient(name: string) {
  return {
    name,
    onclose: undefined as (() => void) | undefined,
    transport: undefined,
    fallbackNotificationHandler: undefined,
    setNotificationHandler: vi.fn(),
    getProtocolEra: () => 'modern' as const,
    getNegotiatedProtocolVersion: () => '2026-07-28',
    getServerCapabilities: () => CAPABILITIES,
    close: vi.fn(async () => {}),
  };
}
type FakeClient = ReturnType<typeof fakeClient>;

interface Attempt {
  client: FakeClient;
  timeoutMs: number;
  result: Deferred<Client>;
}

class FakeSession implements SessionLike {
  readonly client: Client;
  readonly observed: boolean;
  readonly #life = new AbortController();
  readonly #control: SessionControl;
  readonly transportObserver: TransportObserver = { stream() {}, sessionLost() {} };
  readonly ready = vi.fn();
  readonly dispose = vi.fn(async (_shutdown: boolean) => {
    this.#life.abort();
  });
  constructor(client: Client, observed: boolean, control: SessionControl) {
    this.client = client;
    this.observed = observed;
    this.#control = control;
  }
  get signal(): AbortSignal {
    return this.#life.signal;
  }
  /** What the session tells its connection when it can no longer deliver (only while alive). */
  lost(reason: string, endSession: boolean): void {
    if (!this.signal.aborted) this.#control.lost(reason, endSession);
  }
  /** A request on this session failed (only while alive). */
  failed(error: unknown): void {
    if (!this.signal.aborted) this.#control.failed(error);
  }
}

function setup({
  reconnectable = true,
  random = () => 1,
}: {
  reconnectable?: boolean;
  random?: () => number;
} = {}) {
  const attempts: Attempt[] = [];
  const source = {
    reconnectable,
    connect: vi.fn((prepare: Prepare, timeoutMs: number) => {
      const client = fakeClient(`client ${attempts.length + 1}`);
      const result = deferred<Client>();
      attempts.push({ client, timeoutMs, result });
      prepare(client as unknown as Client, true);
      return result.promise;
    }),
    release: vi.fn(async (_client: Client, _endSession: boolean) => {}),
  } satisfies ClientSource;
  const sessions: FakeSession[] = [];
  const emit = vi.fn((_event: McpEventInput) => {});
  const connection = new Connection<FakeSession>({
    source,
    label: LABEL,
    backoff: BACKOFF,
    requestTimeoutMs: 5000,
    open: (client, observed, control) => {
      const session = new FakeSession(client, observed, control);
      sessions.push(session);
      return session;
    },
    emit,
    clock: { now: () => Date.now(), random },
  });
  const last = () => {
    const attempt = attempts.at(-1);
    if (!attempt) throw new Error('no connect attempt yet');
    return attempt;
  };
  return {
    connection,
    source,
    attempts,
    sessions,
    emit,
    /** The connection events emitted so far. */
    states: () =>
      emit.mock.calls
        .map(([event]) => event)
        .filter((event) => event.type === 'connection')
        .map((event) => (event as { state: ConnectionSnapshot }).state),
    /** Let the latest attempt's handshake succeed. */
    async succeed() {
      const attempt = last();
      attempt.result.resolve(attempt.client as unknown as Client);
      await flush();
      return attempt.client;
    },
    /** Let the latest attempt's handshake fail. */
    async fail(error: unknown = new Error('ECONNREFUSED')) {
      last().result.reject(error);
      await flush();
    },
  };
}

/** Let promise chains run (the fake clock does not move). */
const flush = () => vi.advanceTimersByTimeAsync(0);

/** Consecutive duplicates removed. */
const runs = <T>(values: T[]) => values.filter((value, i) => i === 0 || values[i - 1] !== value);

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('Connection', () => {
  it('connects to ready: the session is opened on the fresh client before its handshake and told ready after', async () => {
    const t = setup();
    t.connection.start();
    expect(t.connection.state.phase).toBe('connecting');
    expect(t.source.connect).toHaveBeenCalledTimes(1);
    expect(t.attempts[0]?.timeoutMs).toBe(5000);
    // Rule 1: the session exists (and owns the client) before the handshake completes.
    expect(t.sessions).toHaveLength(1);
    expect(t.sessions[0]?.client).toBe(t.attempts[0]?.client);
    expect(t.sessions[0]?.observed).toBe(true);
    expect(t.sessions[0]?.ready).not.toHaveBeenCalled();
    expect(t.connection.session).toBeUndefined();

    const client = await t.succeed();
    expect(t.connection.state).toMatchObject({
      phase: 'ready',
      era: client.getProtocolEra(),
      protocolVersion: client.getNegotiatedProtocolVersion(),
      capabilities: client.getServerCapabilities(),
      error: undefined,
      attempt: 0,
      nextRetryAt: undefined,
    });
    expect(t.connection.session).toBe(t.sessions[0]);
    expect(t.sessions[0]?.ready).toHaveBeenCalledTimes(1);
  });

  it('start() is idempotent and nothing connects before it', async () => {
    const t = setup();
    t.connection.reconnect(); // not started: nothing to reconnect
    await flush();
    expect(t.source.connect).not.toHaveBeenCalled();
    expect(t.connection.started).toBe(false);
    t.connection.start();
    t.connection.start();
    expect(t.connection.started).toBe(true);
    expect(t.source.connect).toHaveBeenCalledTimes(1);
  });

  it('a failed connect shows reconnecting with attempt and nextRetryAt, and retries after exactly the capped backoff', async () => {
    const t = setup({ random: () => 1 });
    t.connection.start();
    const failedAt = Date.now();
    await t.fail(new Error('ECONNREFUSED'));
    expect(t.connection.state).toMatchObject({
      phase: 'reconnecting',
      attempt: 1,
      nextRetryAt: failedAt + BACKOFF.initialDelayMs,
    });
    expect(t.connection.state.error?.message).toContain('ECONNREFUSED');
    expect(t.connection.state.error?.message).toContain(LABEL);
    // The session opened for the failed client is disposed (not as a shutdown).
    expect(t.sessions[0]?.dispose).toHaveBeenCalledWith(false);

    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs - 1);
    expect(t.source.connect).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.source.connect).toHaveBeenCalledTimes(2);
    expect(t.connection.state.nextRetryAt).toBeUndefined();

    // Each failure doubles the ceiling, up to maxDelayMs.
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const at = Date.now();
      await t.fail();
      const next = t.connection.state.nextRetryAt as number;
      delays.push(next - at);
      expect(t.connection.state.attempt).toBe(i + 2);
      await vi.advanceTimersByTimeAsync(next - at);
    }
    expect(delays).toEqual([2000, 4000, BACKOFF.maxDelayMs, BACKOFF.maxDelayMs]);
    expect(t.source.connect).toHaveBeenCalledTimes(6);
  });

  it('the retry delay is the injected random share of the backoff ceiling (full jitter)', async () => {
    const t = setup({ random: () => 0.25 });
    t.connection.start();
    const at = Date.now();
    await t.fail();
    expect(t.connection.state.nextRetryAt).toBe(at + 0.25 * BACKOFF.initialDelayMs);
    await vi.advanceTimersByTimeAsync(0.25 * BACKOFF.initialDelayMs);
    expect(t.source.connect).toHaveBeenCalledTimes(2);
  });

  it('a session that is lost is ended and replaced with backoff; a disposed session can no longer say it is lost', async () => {
    const t = setup();
    t.connection.start();
    const first = await t.succeed();
    const old = t.sessions[0] as FakeSession;

    old.lost('the SSE stream ended', true);
    expect(old.dispose).toHaveBeenCalledWith(false);
    expect(t.source.release).toHaveBeenCalledWith(first, true);
    expect(t.connection.session).toBeUndefined();
    expect(t.connection.state).toMatchObject({
      phase: 'reconnecting',
      lastLoss: 'the SSE stream ended',
      reconnects: 1,
      attempt: 1,
    });
    expect(t.connection.state.error).toMatchObject({ code: 'CONNECTION_LOST' });

    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
    expect(t.source.connect).toHaveBeenCalledTimes(2);
    await t.succeed();
    const current = t.sessions[1] as FakeSession;
    expect(t.connection.session).toBe(current);

    const events = t.emit.mock.calls.length;
    old.lost('late news from the old client', true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(t.connection.state.phase).toBe('ready');
    expect(t.connection.session).toBe(current);
    expect(current.dispose).not.toHaveBeenCalled();
    expect(t.source.connect).toHaveBeenCalledTimes(2);
    expect(t.emit.mock.calls.length).toBe(events);
  });

  it("a transport that closes loses the session, chains the host's own onclose, and restores it", async () => {
    const t = setup();
    const hostOnclose = vi.fn();
    t.connection.start();
    const client = t.attempts[0]?.client as FakeClient;
    client.onclose = hostOnclose;
    await t.succeed();
    expect(client.onclose).not.toBe(hostOnclose);

    client.onclose?.();
    expect(hostOnclose).toHaveBeenCalledTimes(1);
    expect(t.connection.state).toMatchObject({
      phase: 'reconnecting',
      lastLoss: 'the transport closed',
    });
    // The transport is gone already: nothing to end on the server.
    expect(t.source.release).toHaveBeenCalledWith(client, false);
    expect(client.onclose).toBe(hostOnclose);
  });

  it('a borrowed (non-reconnectable) source goes to error on loss, without retrying', async () => {
    const t = setup({ reconnectable: false });
    t.connection.start();
    await t.succeed();
    (t.sessions[0] as FakeSession).lost('the transport closed', false);
    expect(t.connection.state.phase).toBe('error');
    expect(t.connection.state.error).toMatchObject({ code: 'CONNECTION_LOST' });
    expect(t.connection.state.error?.message).toContain('reconnect()');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(t.source.connect).toHaveBeenCalledTimes(1);
  });

  it('a borrowed source whose connect fails goes to error, without retrying', async () => {
    const t = setup({ reconnectable: false });
    t.connection.start();
    await t.fail(new Error('not connected yet'));
    expect(t.connection.state).toMatchObject({ phase: 'error', nextRetryAt: undefined });
    expect(t.connection.state.error?.message).toContain('not connected yet');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(t.source.connect).toHaveBeenCalledTimes(1);
  });

  it('reconnect() during a backoff wait connects at once and restarts the backoff from the initial delay', async () => {
    const t = setup();
    t.connection.start();
    await t.fail();
    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
    await t.fail(); // the next wait would be 2000
    expect(t.source.connect).toHaveBeenCalledTimes(2);

    t.connection.reconnect();
    expect(t.source.connect).toHaveBeenCalledTimes(3);
    expect(t.connection.state).toMatchObject({
      phase: 'reconnecting',
      attempt: 0,
      nextRetryAt: undefined,
    });
    // The cancelled wait does not fire a second attempt.
    await vi.advanceTimersByTimeAsync(5000);
    expect(t.source.connect).toHaveBeenCalledTimes(3);

    const at = Date.now();
    await t.fail();
    expect(t.connection.state.nextRetryAt).toBe(at + BACKOFF.initialDelayMs);
  });

  it('reconnect() on a ready connection ends the session on the server and connects again', async () => {
    const t = setup();
    t.connection.start();
    const client = await t.succeed();
    t.connection.reconnect();
    expect(t.sessions[0]?.dispose).toHaveBeenCalledWith(false);
    expect(t.source.release).toHaveBeenCalledWith(client, true);
    expect(t.source.connect).toHaveBeenCalledTimes(2);
    await t.succeed();
    expect(t.connection.session).toBe(t.sessions[1]);
  });

  it('reconnect() while a handshake is in flight starts no second attempt', async () => {
    const t = setup();
    t.connection.start();
    t.connection.reconnect();
    expect(t.source.connect).toHaveBeenCalledTimes(1);
    await t.succeed();
    expect(t.connection.state.phase).toBe('ready');
  });

  describe('whenReady', () => {
    it('waits through connecting and resolves with the session', async () => {
      const t = setup();
      t.connection.start();
      const ready = track(t.connection.whenReady(undefined, 10_000));
      await flush();
      expect(ready.state).toBe('pending');
      await t.succeed();
      expect(ready.state).toBe('resolved');
      expect(ready.value).toBe(t.sessions[0]);
    });

    it('waits through a failed attempt and its backoff, within the timeout', async () => {
      const t = setup();
      t.connection.start();
      const ready = track(t.connection.whenReady(undefined, 10_000));
      await t.fail();
      await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
      expect(ready.state).toBe('pending');
      await t.succeed();
      expect(ready.value).toBe(t.sessions[1]);
    });

    it('rejects at once in error, with the error', async () => {
      const t = setup({ reconnectable: false });
      t.connection.start();
      await t.fail(new Error('handshake refused'));
      const ready = track(t.connection.whenReady(undefined, 10_000));
      await flush();
      expect(ready.state).toBe('rejected');
      expect((ready.error as Error).message).toContain('handshake refused');
    });

    it('rejects at once when closed, and a waiting call rejects when the connection closes', async () => {
      const t = setup();
      t.connection.start();
      const waiting = track(t.connection.whenReady(undefined, 10_000));
      await t.fail();
      await t.connection.dispose();
      await flush();
      expect(waiting.state).toBe('rejected');
      const after = track(t.connection.whenReady(undefined, 10_000));
      await flush();
      expect(after.state).toBe('rejected');
      expect(after.error).toBeInstanceOf(McpQueryError);
    });

    it('rejects after the timeout with the last error in its message', async () => {
      const t = setup();
      t.connection.start();
      await t.fail(new Error('ECONNRESET by peer'));
      const ready = track(t.connection.whenReady(undefined, 3000));
      await vi.advanceTimersByTimeAsync(2999);
      expect(ready.state).toBe('pending');
      await vi.advanceTimersByTimeAsync(1);
      expect(ready.state).toBe('rejected');
      expect(ready.error).toBeInstanceOf(McpQueryError);
      expect((ready.error as McpQueryError).code).toBe('NOT_CONNECTED');
      expect((ready.error as Error).message).toContain('ECONNRESET by peer');
    });

    it('rejects with NOT_STARTED after the timeout when the connection was never started', async () => {
      const t = setup();
      const ready = track(t.connection.whenReady(undefined, 500));
      await vi.advanceTimersByTimeAsync(499);
      expect(ready.state).toBe('pending');
      await vi.advanceTimersByTimeAsync(1);
      expect(ready.state).toBe('rejected');
      expect((ready.error as McpQueryError).code).toBe('NOT_STARTED');
    });

    it('rejects with the abort reason when its signal aborts', async () => {
      const t = setup();
      t.connection.start();
      const controller = new AbortController();
      const ready = track(t.connection.whenReady(controller.signal, 10_000));
      await flush();
      const reason = new Error('unmounted');
      controller.abort(reason);
      await flush();
      expect(ready.state).toBe('rejected');
      expect(ready.error).toBe(reason);
    });
  });

  describe('dispose', () => {
    it('waits for a handshake in flight, then disposes its session and releases its client ending the session', async () => {
      const t = setup();
      t.connection.start();
      const disposed = track(t.connection.dispose());
      expect(t.connection.state.phase).toBe('closed');
      await vi.advanceTimersByTimeAsync(1000);
      expect(disposed.state).toBe('pending');

      const client = await t.succeed();
      expect(disposed.state).toBe('resolved');
      expect(t.sessions[0]?.dispose).toHaveBeenCalledWith(true);
      expect(t.source.release).toHaveBeenCalledWith(client, true);
      expect(t.sessions[0]?.ready).not.toHaveBeenCalled();
      expect(t.connection.state.phase).toBe('closed');
      expect(t.connection.session).toBeUndefined();
    });

    it('cuts a handshake that hangs off after the 2 s grace period', async () => {
      const t = setup();
      t.connection.start();
      const attempt = t.attempts[0] as Attempt;
      // Closing the client fails its pending handshake, as the SDK does.
      attempt.client.close.mockImplementation(async () => {
        attempt.result.reject(new Error('connection closed'));
      });
      const disposed = track(t.connection.dispose());
      await vi.advanceTimersByTimeAsync(1999);
      expect(attempt.client.close).not.toHaveBeenCalled();
      expect(disposed.state).toBe('pending');
      await vi.advanceTimersByTimeAsync(1);
      expect(attempt.client.close).toHaveBeenCalledTimes(1);
      expect(disposed.state).toBe('resolved');
      expect(t.sessions[0]?.dispose).toHaveBeenCalledWith(true);
      // Closed means closed: no retry of the cut-off attempt.
      await vi.advanceTimersByTimeAsync(60_000);
      expect(t.source.connect).toHaveBeenCalledTimes(1);
      expect(t.connection.state.phase).toBe('closed');
    });

    it('disposes the ready session and releases its client, and is idempotent', async () => {
      const t = setup();
      t.connection.start();
      const client = await t.succeed();
      await t.connection.dispose();
      await t.connection.dispose();
      expect(t.sessions[0]?.dispose).toHaveBeenCalledTimes(1);
      expect(t.sessions[0]?.dispose).toHaveBeenCalledWith(true);
      expect(t.source.release).toHaveBeenCalledTimes(1);
      expect(t.source.release).toHaveBeenCalledWith(client, true);
      // A close reported by the client afterwards changes nothing.
      client.onclose?.();
      expect(t.connection.state.phase).toBe('closed');
    });

    it('cancels a pending retry: nothing connects after dispose', async () => {
      const t = setup();
      t.connection.start();
      await t.fail();
      expect(t.connection.state.nextRetryAt).toBeDefined();
      await t.connection.dispose();
      expect(t.connection.state).toMatchObject({ phase: 'closed', nextRetryAt: undefined });
      await vi.advanceTimersByTimeAsync(60_000);
      expect(t.source.connect).toHaveBeenCalledTimes(1);
      t.connection.start();
      t.connection.reconnect();
      expect(t.source.connect).toHaveBeenCalledTimes(1);
    });
  });

  it('emits one connection event per phase change, following connecting → reconnecting → ready → reconnecting → closed', async () => {
    const t = setup();
    t.connection.start();
    await t.fail();
    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
    await t.succeed();
    (t.sessions[1] as FakeSession).lost('gone', false);
    await t.connection.dispose();

    const states = t.states();
    expect(runs(states.map((state) => state.phase))).toEqual<ConnectionPhase[]>([
      'connecting',
      'reconnecting',
      'ready',
      'reconnecting',
      'closed',
    ]);
    // Every event carries the state as it was then, and the last one is the current state.
    expect(states.at(-1)).toEqual(t.connection.state);
    const ready = states.find((state) => state.phase === 'ready');
    expect(ready).toMatchObject({ era: 'modern', attempt: 0, error: undefined });
    const firstRetry = states.find((state) => state.phase === 'reconnecting');
    expect(firstRetry?.attempt).toBe(1);
  });

  it('a connection that dies right after coming up keeps backing off; one that lived ≥ maxDelayMs starts from the initial delay', async () => {
    const t = setup();
    t.connection.start();
    await t.fail(); // backoff position 1
    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
    await t.succeed();
    expect(t.connection.state.attempt).toBe(0); // the displayed count restarts…

    let at = Date.now();
    (t.sessions[1] as FakeSession).lost('dropped at once', false);
    // …but the backoff position survived: 2000, not 1000.
    expect((t.connection.state.nextRetryAt as number) - at).toBe(2000);
    await vi.advanceTimersByTimeAsync(2000);
    await t.succeed();

    at = Date.now();
    (t.sessions[2] as FakeSession).lost('dropped again', false);
    expect((t.connection.state.nextRetryAt as number) - at).toBe(4000);
    await vi.advanceTimersByTimeAsync(4000);
    await t.succeed();

    await vi.advanceTimersByTimeAsync(BACKOFF.maxDelayMs);
    at = Date.now();
    (t.sessions[3] as FakeSession).lost('dropped after a long life', false);
    expect((t.connection.state.nextRetryAt as number) - at).toBe(BACKOFF.initialDelayMs);
  });

  it('a failure that is not an MCP endpoint (HTTP 404) is retried once, then ends in error', async () => {
    const t = setup();
    const notFound = () => Object.assign(new Error('Not Found'), { status: 404 });
    t.connection.start();
    await t.fail(notFound());
    expect(t.connection.state.phase).toBe('reconnecting');
    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
    await t.fail(notFound());
    expect(t.connection.state.phase).toBe('error');
    expect(t.connection.state.error?.message).toContain('HTTP 404');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(t.source.connect).toHaveBeenCalledTimes(2);
  });

  it('a connect refused for credentials (HTTP 401) waits in unauthorized, and whenReady rejects at once', async () => {
    const t = setup();
    t.connection.start();
    await t.fail(Object.assign(new Error('Unauthorized'), { status: 401 }));
    expect(t.connection.state).toMatchObject({ phase: 'unauthorized', nextRetryAt: undefined });
    const ready = track(t.connection.whenReady(undefined, 10_000));
    await flush();
    expect(ready.state).toBe('rejected');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(t.source.connect).toHaveBeenCalledTimes(1);
  });

  it('a request refused for credentials ends the ready session in unauthorized; a failure of a replaced session changes nothing', async () => {
    const t = setup();
    t.connection.start();
    await t.succeed();
    const old = t.sessions[0] as FakeSession;
    old.lost('dropped', false);
    await vi.advanceTimersByTimeAsync(BACKOFF.initialDelayMs);
    await t.succeed();
    const current = t.sessions[1] as FakeSession;
    const refused = Object.assign(new Error('Unauthorized'), { status: 401 });

    old.failed(refused); // a read of the old session, answered late
    expect(t.connection.state.phase).toBe('ready');
    current.failed(new Error('a tool failed'));
    expect(t.connection.state.phase).toBe('ready');

    current.failed(refused);
    expect(t.connection.state).toMatchObject({ phase: 'unauthorized', nextRetryAt: undefined });
    expect(current.dispose).toHaveBeenCalledWith(false);
    expect(t.connection.session).toBeUndefined();
  });
});
