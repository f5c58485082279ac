import type { Client } from '@modelcontextprotocol/client';
import { describe, expect, it, vi } from 'vitest';
import { installDispatcher, type NotificationSink, UPDATED } from '../../src/core/dispatcher';
import { listChangedMethod, NOTIFIED_LISTS } from '../../src/core/lists';

type Handler = (params: unknown) => void;
type Fallback = (notification: { method: string; params?: unknown }) => Promise<void>;

interface ParamsSchema {
  '~standard': { validate(value: unknown): { value?: unknown; issues?: unknown } };
}

/**
 * What the dispatcher touches of an SDK client: the SDK keeps one handler per
 * method (a second registration replaces the first) and one fallback for the
 * methods nobody registered.
 */
function fakeClient(fallback?: Fallback) {
  const handlers = new Map<string, { schema: ParamsSchema; handler: Handler }>();
  const client = {
    setNotificationHandler: vi.fn(
      (method: string, { params }: { params: ParamsSchema }, handler: Handler) => {
        handlers.set(method, { schema: params, handler });
      },
    ),
    fallbackNotificationHandler: fallback as Fallback | undefined,
  };
  return {
    client: client as unknown as Client,
    registrations: client.setNotificationHandler,
    handlers,
    /** A notification from the server, as the SDK delivers it. */
    async notify(method: string, params?: unknown) {
      const registered = handlers.get(method);
      if (!registered) {
        await client.fallbackNotificationHandler?.({ method, params });
        return;
      }
      // The SDK validates params with the schema first; ours must let everything through.
      const checked = registered.schema['~standard'].validate(params);
      expect(checked).toEqual({ value: params });
      registered.handler(checked.value);
    },
  };
}

function recordingSink() {
  return {
    updated: vi.fn((_uri: string) => {}),
    listChanged: vi.fn(),
    malformed: vi.fn((_method: string, _reason: string) => {}),
    event: vi.fn(),
  } satisfies NotificationSink;
}

describe('installDispatcher (rule 1: the handler is in place before anything is asked)', () => {
  it('registers one handler per method: updated and the three list_changed', () => {
    const fake = fakeClient();
    installDispatcher(fake.client, recordingSink());
    expect([...fake.handlers.keys()].sort()).toEqual(
      [UPDATED, ...NOTIFIED_LISTS.map((list) => listChangedMethod[list])].sort(),
    );
    expect(fake.registrations).toHaveBeenCalledTimes(4);
  });

  it('installing again on the same client registers nothing more and swaps the sink: the old one hears nothing', async () => {
    const fake = fakeClient();
    const old = recordingSink();
    const next = recordingSink();
    installDispatcher(fake.client, old);
    installDispatcher(fake.client, next);
    expect(fake.registrations).toHaveBeenCalledTimes(4);

    await fake.notify(UPDATED, { uri: 'a://1' });
    await fake.notify(listChangedMethod.tools);
    await fake.notify('notifications/made/up');
    expect(old.updated).not.toHaveBeenCalled();
    expect(old.listChanged).not.toHaveBeenCalled();
    expect(old.malformed).not.toHaveBeenCalled();
    expect(next.updated.mock.calls).toEqual([['a://1']]);
    expect(next.listChanged.mock.calls).toEqual([['tools']]);
    expect(next.malformed.mock.calls).toEqual([['notifications/made/up', 'unknown method']]);
  });

  it('each client has its own dispatcher and sink', async () => {
    const one = fakeClient();
    const two = fakeClient();
    const sinkOne = recordingSink();
    const sinkTwo = recordingSink();
    installDispatcher(one.client, sinkOne);
    installDispatcher(two.client, sinkTwo);
    expect(two.registrations).toHaveBeenCalledTimes(4);
    await two.notify(UPDATED, { uri: 'b://2' });
    expect(sinkOne.updated).not.toHaveBeenCalled();
    expect(sinkTwo.updated.mock.calls).toEqual([['b://2']]);
  });

  it('an update with a URI reaches the sink as is (matching is the session’s, rule 2)', async () => {
    const fake = fakeClient();
    const sink = recordingSink();
    installDispatcher(fake.client, sink);
    await fake.notify(UPDATED, { uri: 'file:///a b', extra: true });
    expect(sink.updated.mock.calls).toEqual([['file:///a b']]);
    expect(sink.malformed).not.toHaveBeenCalled();
  });

  it('each list_changed reaches the sink as its list', async () => {
    const fake = fakeClient();
    const sink = recordingSink();
    installDispatcher(fake.client, sink);
    for (const list of NOTIFIED_LISTS) await fake.notify(listChangedMethod[list], {});
    expect(sink.listChanged.mock.calls).toEqual(NOTIFIED_LISTS.map((list) => [list]));
  });

  it('an update without a usable URI is reported as malformed, with why, and reads nothing (rule 8)', async () => {
    const fake = fakeClient();
    const sink = recordingSink();
    installDispatcher(fake.client, sink);
    const cases: Array<[unknown, string]> = [
      [undefined, 'no uri'],
      [{}, 'no uri'],
      [{ uri: '' }, 'uri is an empty string'],
      [{ uri: null }, 'uri is null'],
      [{ uri: 42 }, 'uri is a number'],
      [{ uri: ['a://1'] }, 'uri is a object'],
      [{ uri: { href: 'a://1' } }, 'uri is a object'],
      [{ uri: true }, 'uri is a boolean'],
    ];
    for (const [params] of cases) await fake.notify(UPDATED, params);
    expect(sink.updated).not.toHaveBeenCalled();
    expect(sink.malformed.mock.calls).toEqual(cases.map(([, reason]) => [UPDATED, reason]));
  });

  it('an unknown method is reported as malformed; the spec’s other notifications are not', async () => {
    const fake = fakeClient();
    const sink = recordingSink();
    installDispatcher(fake.client, sink);
    // Well-formed where a feature parses them (server logs, tasks: whether those parsers are
    // defined depends on what this worker imported before, in this file or another).
    const known: Array<[string, Record<string, unknown>]> = [
      ['notifications/cancelled', {}],
      ['notifications/progress', {}],
      ['notifications/message', { level: 'info', data: 'x' }],
      ['notifications/roots/list_changed', {}],
      ['notifications/tasks/status', { taskId: 't1', status: 'working' }],
      ['notifications/elicitation/complete', {}],
      ['notifications/subscriptions/acknowledged', {}],
    ];
    for (const [method, params] of known) await fake.notify(method, params);
    expect(sink.malformed).not.toHaveBeenCalled();
    await fake.notify('notifications/resources/changed', {});
    await fake.notify('', {});
    expect(sink.malformed.mock.calls).toEqual([
      ['notifications/resources/changed', 'unknown method'],
      ['', 'unknown method'],
    ]);
  });

  it('a fallback handler the client already had is chained, once, for every method it used to get', async () => {
    const hosts: string[] = [];
    const fake = fakeClient(async ({ method }) => {
      hosts.push(method);
    });
    const sink = recordingSink();
    installDispatcher(fake.client, sink);
    installDispatcher(fake.client, recordingSink()); // a later session: no second link in the chain
    await fake.notify('notifications/progress', { progressToken: 1, progress: 1 });
    await fake.notify('notifications/custom/thing', {});
    expect(hosts).toEqual(['notifications/progress', 'notifications/custom/thing']);
    // Methods the dispatcher handles itself never reach the host's fallback.
    await fake.notify(UPDATED, { uri: 'a://1' });
    expect(hosts).toHaveLength(2);
  });
});
