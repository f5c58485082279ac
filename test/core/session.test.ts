import type { Client, McpSubscription, ServerCapabilities } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { McpEventInput } from '../../src/core/events';
import type { NotifiedList } from '../../src/core/lists';
import { Retention } from '../../src/core/retention';
import { Session, type SessionHost, type SessionOptions } from '../../src/core/session';
import { type Deferred, deferred, track } from '../support/deferred';

const ACK_TIMEOUT_MS = 3000;
const FULL: ServerCapabilities = {
  resources: { subscribe: true, listChanged: true },
  tools: { listChanged: true },
};

interface Filter {
  resourceSubscriptions?: string[];
  [bit: string]: unknown;
}

/** A 2026-07-28 client as far as a session uses it: handlers, era, capabilities, listen. */
function fakeClient(capabilities: ServerCapabilities) {
  const handlers = new Map<string, (params: unknown) => void>();
  const listens: Array<{ filter: Filter; request: Deferred<McpSubscription> }> = [];
  const client = {
    setNotificationHandler: vi.fn(
      (method: string, _schema: unknown, handler: (params: unknown) => void) => {
        handlers.set(method, handler);
      },
    ),
    fallbackNotificationHandler: undefined as unknown,
    getProtocolEra: () => 'modern' as const,
    getServerCapabilities: () => capabilities,
    listen: vi.fn((filter: Filter) => {
      const request = deferred<McpSubscription>();
      listens.push({ filter, request });
      return request.promise;
    }),
  };
  return {
    client: client as unknown as Client,
    listens,
    /** A notification from the server, through the handler the session installed. */
    notify: (method: string, params?: unknown) => handlers.get(method)?.(params),
    /** The server acknowledges the latest listen, honouring `honored` (default: all). */
    async ack(honored?: Filter) {
      const last = listens.at(-1);
      if (!last) throw new Error('no listen request');
      last.request.resolve({
        honoredFilter: honored ?? last.filter,
        close: async () => {},
        closed: new Promise(() => {}),
      } as unknown as McpSubscription);
      await vi.advanceTimersByTimeAsync(0);
    },
  };
}

function setup({
  capabilities = FULL,
  wanted = [] as string[],
  lists = [] as NotifiedList[],
} = {}) {
  const fake = fakeClient(capabilities);
  const want = new Set(wanted);
  const wantLists = new Set<NotifiedList>(['resources', ...lists]);
  const emit = vi.fn((_event: McpEventInput) => {});
  const changes = {
    changed: vi.fn((_uri: string) => {}),
    listChanged: vi.fn(),
    coverageChanged: vi.fn(),
  };
  const host = {
    emit,
    wanted: {
      desire: () => ({ uris: [...want].sort(), held: new Set(want), lists: new Set(wantLists) }),
      wants: (uri: string) => want.has(uri),
      wantsList: (list: NotifiedList) => wantLists.has(list),
    },
    changes,
    lost: vi.fn(),
    failed: vi.fn(),
    // Flattened for the assertions below.
    ...changes,
  } satisfies SessionHost & typeof changes;
  // Only the options whenCovered and the channel need (the rest is off when absent).
  const options = {
    backoff: { initialDelayMs: 1000, maxDelayMs: 8000 },
    ackTimeoutMs: ACK_TIMEOUT_MS,
    requestTimeoutMs: 5000,
    retention: new Retention(),
    releaseAfterMs: 60_000,
    history: { reopenCount: 0, lastCloseReason: undefined },
    clock: { now: () => Date.now(), random: () => 1 },
  } satisfies SessionOptions;
  const session = new Session(fake.client, host, options, false);
  const events = (type: string) =>
    emit.mock.calls.map(([event]) => event).filter((event) => event.type === type);
  return { session, host, fake, want, events };
}

const signal = () => new AbortController().signal;

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('Session', () => {
  describe('whenCovered (rule 4: a read waits for coverage that can still come)', () => {
    it('does not wait before the session is ready, nor for a URI nobody wants', () => {
      const t = setup({ wanted: ['a://1'] });
      expect(t.session.whenCovered({ uri: 'a://1' }, signal())).toBeUndefined();
      t.session.ready();
      expect(t.session.whenCovered({ uri: 'x://unwanted' }, signal())).toBeUndefined();
    });

    it('a wanted URI waits for the acknowledgement that covers it', async () => {
      const t = setup({ wanted: ['a://1'] });
      t.session.ready();
      expect(t.fake.listens[0]?.filter.resourceSubscriptions).toEqual(['a://1']);
      const wait = t.session.whenCovered({ uri: 'a://1' }, signal());
      expect(wait).toBeDefined();
      const seen = track(wait as Promise<void>);
      await vi.advanceTimersByTimeAsync(ACK_TIMEOUT_MS - 1);
      expect(seen.state).toBe('pending');

      await t.fake.ack();
      expect(seen.state).toBe('resolved');
      expect(t.session.isCovered('a://1')).toBe(true);
      expect(t.events('coverage').at(-1)).toMatchObject({ acknowledged: ['a://1'], lost: [] });
      // The read was waiting for exactly this: it goes out covered, as the one read (rule 4).
      expect(t.host.coverageChanged).toHaveBeenCalledWith(
        expect.objectContaining({
          gained: ['a://1'],
          lost: [],
          awaited: { uris: new Set(['a://1']), lists: new Set() },
        }),
      );
      // Covered now: a read goes ahead at once.
      expect(t.session.whenCovered({ uri: 'a://1' }, signal())).toBeUndefined();
    });

    it('a URI the acknowledgement leaves out stops the wait at the acknowledgement, declined', async () => {
      const t = setup({ wanted: ['a://1', 'b://2'] });
      t.session.ready();
      const seen = track(t.session.whenCovered({ uri: 'b://2' }, signal()) as Promise<void>);
      await t.fake.ack({ resourceSubscriptions: ['a://1'] });
      expect(seen.state).toBe('resolved');
      expect(t.session.isCovered('b://2')).toBe(false);
      expect(t.events('declined').at(-1)).toMatchObject({
        changes: [['b://2', 'not in the acknowledged filter']],
      });
    });

    it('an acknowledgement that never comes stops the wait after ackTimeoutMs, without failing it', async () => {
      const t = setup({ wanted: ['a://1'] });
      t.session.ready();
      const seen = track(t.session.whenCovered({ uri: 'a://1' }, signal()) as Promise<void>);
      await vi.advanceTimersByTimeAsync(ACK_TIMEOUT_MS - 1);
      expect(seen.state).toBe('pending');
      await vi.advanceTimersByTimeAsync(1);
      expect(seen.state).toBe('resolved');
    });

    it('acknowledgements of other URIs while a read waits restart its ackTimeoutMs: the server is getting there', async () => {
      const t = setup({ wanted: ['a://1'] });
      t.session.ready();
      t.want.add('b://2');
      t.session.update(t.host.wanted.desire()); // b://2 waits for a://1's request
      const seen = track(t.session.whenCovered({ uri: 'b://2' }, signal()) as Promise<void>);
      await vi.advanceTimersByTimeAsync(1500);
      await t.fake.ack(); // a://1 covered; b://2's own request goes out now
      expect(t.fake.listens.at(-1)?.filter.resourceSubscriptions).toEqual(['b://2']);
      await vi.advanceTimersByTimeAsync(ACK_TIMEOUT_MS - 1);
      expect(seen.state).toBe('pending');
      await vi.advanceTimersByTimeAsync(1);
      expect(seen.state).toBe('resolved');
    });

    it('a server without resources.subscribe never covers a URI: no wait', () => {
      const t = setup({ capabilities: { resources: { listChanged: true } }, wanted: ['a://1'] });
      t.session.ready();
      expect(t.session.whenCovered({ uri: 'a://1' }, signal())).toBeUndefined();
    });

    it('a wanted list waits for its list bit to be acknowledged', async () => {
      const t = setup({ lists: ['tools'] });
      t.session.ready();
      const seen = track(t.session.whenCovered({ list: 'tools' }, signal()) as Promise<void>);
      expect(t.session.whenCovered({ list: 'prompts' }, signal())).toBeUndefined(); // not wanted
      await t.fake.ack();
      expect(seen.state).toBe('resolved');
      expect(t.session.isListCovered('tools')).toBe(true);
    });

    it('an abort or the end of the session lets the waiting read go ahead', async () => {
      const t = setup({ wanted: ['a://1'] });
      t.session.ready();
      const controller = new AbortController();
      const aborted = track(
        t.session.whenCovered({ uri: 'a://1' }, controller.signal) as Promise<void>,
      );
      const ended = track(t.session.whenCovered({ uri: 'a://1' }, signal()) as Promise<void>);
      controller.abort();
      await vi.advanceTimersByTimeAsync(0);
      expect([aborted.state, ended.state]).toEqual(['resolved', 'pending']);
      await t.session.dispose(true);
      await vi.advanceTimersByTimeAsync(0);
      expect(ended.state).toBe('resolved');
      expect(t.session.whenCovered({ uri: 'a://1' }, signal())).toBeUndefined();
    });
  });

  describe('notifications (rule 2: exact match)', () => {
    it('an update for a wanted URI is a change; for a URI nobody wants or covers it is only counted', () => {
      const t = setup({ wanted: ['a://1'] });
      t.session.ready();
      t.fake.notify('notifications/resources/updated', { uri: 'a://1' });
      t.fake.notify('notifications/resources/updated', { uri: 'A://1' });
      expect(t.host.changed.mock.calls).toEqual([['a://1']]);
      expect(t.events('updated')).toEqual([
        { type: 'updated', uri: 'a://1', matched: true },
        { type: 'updated', uri: 'A://1', matched: false },
      ]);
    });

    it('an update for a covered URI nobody wants any more (retained) is still a change', async () => {
      const t = setup({ wanted: ['a://1'] });
      t.session.ready();
      await t.fake.ack();
      t.want.clear();
      t.fake.notify('notifications/resources/updated', { uri: 'a://1' });
      expect(t.host.changed).toHaveBeenCalledWith('a://1');
    });

    it('a malformed update is reported, not a change', () => {
      const t = setup({ wanted: ['a://1'] });
      t.fake.notify('notifications/resources/updated', {});
      expect(t.host.changed).not.toHaveBeenCalled();
      expect(t.events('malformed')).toEqual([
        { type: 'malformed', method: 'notifications/resources/updated', reason: 'no uri' },
      ]);
    });

    it('a disposed session reaches nothing: no change, no loss, no failure', async () => {
      const t = setup({ wanted: ['a://1'] });
      t.session.ready();
      await t.session.dispose(false);
      const before = t.host.emit.mock.calls.length;
      t.fake.notify('notifications/resources/updated', { uri: 'a://1' });
      t.fake.notify('notifications/tools/list_changed');
      t.session.transportObserver.sessionLost('gone', true);
      t.session.failed(new Error('a read it made, answered late'));
      expect(t.host.changed).not.toHaveBeenCalled();
      expect(t.host.listChanged).not.toHaveBeenCalled();
      expect(t.host.lost).not.toHaveBeenCalled();
      expect(t.host.failed).not.toHaveBeenCalled();
      expect(t.host.emit.mock.calls.length).toBe(before);
    });
  });

  it('a session the server lost asks to be replaced, ending it on the server unless the server forgot it', () => {
    const t = setup();
    t.session.transportObserver.sessionLost('before ready', false);
    expect(t.host.lost).not.toHaveBeenCalled();
    t.session.ready();
    t.session.transportObserver.sessionLost('stream could not be resumed', false);
    t.session.transportObserver.sessionLost('HTTP 404', true);
    expect(t.host.lost.mock.calls).toEqual([
      ['stream could not be resumed', true],
      ['HTTP 404', false],
    ]);
  });

  it('dispose uncovers everything and shows the stream closed on shutdown, reopening otherwise', async () => {
    for (const shutdown of [true, false]) {
      const t = setup({ wanted: ['a://1'] });
      t.session.ready();
      await t.fake.ack();
      await t.session.dispose(shutdown);
      expect(t.session.isCovered('a://1')).toBe(false);
      expect(t.events('coverage').at(-1)).toMatchObject({ acknowledged: [], lost: ['a://1'] });
      expect(t.events('stream').at(-1)).toMatchObject({
        status: { state: shutdown ? 'closed' : 'reopening' },
      });
    }
  });
});
