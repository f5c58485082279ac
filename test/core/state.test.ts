import type { Client } from '@modelcontextprotocol/client';
import { describe, expect, it, vi } from 'vitest';
import { initialStatus } from '../../src/core/channel';
import { McpQueryError } from '../../src/core/errors';
import type {
  ConnectionSnapshot,
  McpEvent,
  McpEventInput,
  StreamStatus,
} from '../../src/core/events';
import { INITIAL_CONNECTION, StateStore } from '../../src/core/state';

const CAPABILITIES = { resources: { subscribe: true } };
const READY: ConnectionSnapshot = {
  ...INITIAL_CONNECTION,
  phase: 'ready',
  era: 'modern',
  protocolVersion: '2026-07-28',
  capabilities: CAPABILITIES,
};

const connection = (state: ConnectionSnapshot): McpEvent => ({ type: 'connection', state, at: 0 });
const stream = (patch: Partial<StreamStatus>): McpEvent => ({
  type: 'stream',
  status: { ...initialStatus('listen', 0), ...patch },
  at: 0,
});

function setup() {
  const client = { name: 'the client' } as unknown as Client;
  const emit = vi.fn((_event: McpEventInput) => {});
  const reconnect = vi.fn();
  const authorize = vi.fn();
  const store = new StateStore({ client: () => client, reconnect, authorize, emit });
  const listener = vi.fn();
  store.subscribe(listener);
  const statuses = () =>
    emit.mock.calls
      .map(([event]) => event)
      .filter((event) => event.type === 'status')
      .map((event) => event.status);
  return { store, client, emit, reconnect, authorize, listener, statuses };
}

describe('StateStore', () => {
  it('starts connecting, with no client, and the actions wired', () => {
    const t = setup();
    const state = t.store.get();
    expect(state).toMatchObject({ status: 'connecting', client: undefined, attempt: 0 });
    state.reconnect();
    state.authorize();
    expect(t.reconnect).toHaveBeenCalledTimes(1);
    expect(t.authorize).toHaveBeenCalledTimes(1);
  });

  it('folds connection events: ready shows the client, era, version and capabilities', () => {
    const t = setup();
    t.store.apply(connection(READY));
    expect(t.store.get()).toMatchObject({
      status: 'ready',
      client: t.client,
      era: 'modern',
      protocolVersion: '2026-07-28',
      capabilities: CAPABILITIES,
    });
    expect(t.statuses()).toEqual(['ready']);
    expect(t.listener).toHaveBeenCalledTimes(1);

    const error = new Error('gone');
    t.store.apply(
      connection({ ...READY, phase: 'reconnecting', error, attempt: 2, nextRetryAt: 9 }),
    );
    expect(t.store.get()).toMatchObject({
      status: 'reconnecting',
      client: undefined,
      error,
      attempt: 2,
      nextRetryAt: 9,
    });
    expect(t.statuses()).toEqual(['ready', 'reconnecting']);
  });

  it('emits a status event only when the status changes', () => {
    const t = setup();
    const lost = { ...INITIAL_CONNECTION, phase: 'reconnecting' as const };
    t.store.apply(connection({ ...lost, attempt: 1, nextRetryAt: 1000 }));
    t.store.apply(connection({ ...lost, attempt: 2, nextRetryAt: 3000 }));
    t.store.apply(connection({ ...lost, attempt: 3, nextRetryAt: 7000 }));
    expect(t.store.get().attempt).toBe(3);
    expect(t.listener).toHaveBeenCalledTimes(3);
    expect(t.statuses()).toEqual(['reconnecting']);
  });

  it('returns the same object when nothing visible changed', () => {
    const t = setup();
    t.store.apply(connection(READY));
    const before = t.store.get();
    const calls = t.emit.mock.calls.length;
    t.store.apply(connection({ ...READY, reconnects: 5, lastLoss: 'old news' })); // not shown
    t.store.apply(stream({ state: 'open' }));
    t.store.apply(stream({ state: 'opening', reopenCount: 3 }));
    t.store.apply({ type: 'updated', uri: 'a://1', matched: true, at: 0 });
    expect(t.store.get()).toBe(before);
    expect(t.listener).toHaveBeenCalledTimes(1);
    expect(t.emit.mock.calls.length).toBe(calls);
  });

  it('a ready connection whose stream is reopening reads reconnecting, with the stream’s attempt, retry time and error', () => {
    const t = setup();
    t.store.apply(connection(READY));
    t.store.apply(
      stream({ state: 'reopening', attempt: 1, nextRetryAt: 500, lastError: 'ack timed out' }),
    );
    const state = t.store.get();
    expect(state).toMatchObject({ status: 'reconnecting', attempt: 1, nextRetryAt: 500 });
    expect(state.error).toBeInstanceOf(McpQueryError);
    expect(state.error).toMatchObject({ code: 'STREAM_LOST', message: 'ack timed out' });
    expect(t.statuses()).toEqual(['ready', 'reconnecting']);

    // The same error is kept while its message does not change.
    t.store.apply(
      stream({ state: 'reopening', attempt: 2, nextRetryAt: 1500, lastError: 'ack timed out' }),
    );
    expect(t.store.get().attempt).toBe(2);
    expect(t.store.get().error).toBe(state.error);
    expect(t.statuses()).toEqual(['ready', 'reconnecting']);

    t.store.apply(stream({ state: 'open' }));
    expect(t.store.get()).toMatchObject({ status: 'ready', error: undefined, attempt: 0 });
    expect(t.statuses()).toEqual(['ready', 'reconnecting', 'ready']);
  });

  it('a reopening stream with no error yet shows no error', () => {
    const t = setup();
    t.store.apply(connection(READY));
    t.store.apply(stream({ state: 'reopening', attempt: 1 }));
    expect(t.store.get()).toMatchObject({ status: 'reconnecting', error: undefined });
  });

  it('an unsubscribed listener is not told', () => {
    const t = setup();
    const other = vi.fn();
    const stop = t.store.subscribe(other);
    stop();
    t.store.apply(connection(READY));
    expect(other).not.toHaveBeenCalled();
    expect(t.listener).toHaveBeenCalledTimes(1);
  });
});
