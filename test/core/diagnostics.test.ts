import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { initialStatus } from '../../src/core/channel';
import {
  checks,
  looseForm,
  type McpDiagnostics,
  type ResourceDiagnostics,
  type UnmatchedNotification,
} from '../../src/core/checks';
import { Diagnostics } from '../../src/core/diagnostics';
import type {
  ConnectionSnapshot,
  McpEvent,
  McpEventInput,
  StreamStatus,
} from '../../src/core/events';
import { deriveStatus, INITIAL_CONNECTION } from '../../src/core/state';

const T0 = Date.UTC(2026, 6, 28, 12, 0, 0);

/** An event as the bus delivers it: with the time it happened. */
const at = (event: McpEventInput, time = Date.now()): McpEvent =>
  ({ ...event, at: time }) as McpEvent;

const want = (uri: string, refs = 1): McpEvent => at({ type: 'interest', uri, refs, wanted: true });
const unwant = (uri: string): McpEvent => at({ type: 'interest', uri, refs: 0, wanted: false });
const updated = (uri: string, matched: boolean): McpEvent => at({ type: 'updated', uri, matched });
const coverage = (acknowledged: string[], lost: string[] = [], lists: McpEvent[] = []) =>
  at({ type: 'coverage', acknowledged, lost, lists: lists as never });

const READY: ConnectionSnapshot = {
  ...INITIAL_CONNECTION,
  phase: 'ready',
  era: 'modern',
  protocolVersion: '2026-07-28',
  capabilities: { resources: { subscribe: true, listChanged: true } },
};

const stream = (patch: Partial<StreamStatus>): StreamStatus => ({
  ...initialStatus('listen', T0),
  ...patch,
});

function fed(...events: McpEvent[]) {
  const diagnostics = new Diagnostics();
  for (const event of events) diagnostics.apply(event);
  return diagnostics;
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});

afterEach(() => {
  vi.useRealTimers();
});

describe('Diagnostics', () => {
  it('keeps a record only for wanted URIs; an interest event with wanted:false drops it', () => {
    const d = fed(want('b://2', 2), want('a://1'));
    expect(d.getSnapshot().resources.map((r) => [r.uri, r.refs, r.subscribed])).toEqual([
      ['a://1', 1, true],
      ['b://2', 2, true],
    ]);
    d.apply(at({ type: 'interest', uri: 'b://2', refs: 0, wanted: true })); // lingering
    expect(d.getSnapshot().resources.find((r) => r.uri === 'b://2')?.refs).toBe(0);

    d.apply(unwant('b://2'));
    expect(d.getSnapshot().resources.map((r) => r.uri)).toEqual(['a://1']);
    // A notification or read for a URI nobody wants leaves no record.
    d.apply(updated('b://2', true));
    d.apply(at({ type: 'read', phase: 'success', uri: 'b://2' }));
    expect(d.getSnapshot().resources.map((r) => r.uri)).toEqual(['a://1']);
  });

  it('a record wanted again starts afresh', () => {
    const d = fed(want('a://1'), updated('a://1', true), unwant('a://1'), want('a://1'));
    expect(d.getSnapshot().resources[0]).toMatchObject({ uri: 'a://1', notifications: 0 });
  });

  it('counts notifications, list changes, malformed messages and reads, per URI and in total', () => {
    const d = fed(want('a://1'));
    d.apply(updated('a://1', true));
    vi.advanceTimersByTime(10);
    d.apply(updated('a://1', true));
    d.apply(at({ type: 'list_changed', list: 'resources' }));
    d.apply(at({ type: 'list_changed', list: 'tools' }));
    d.apply(at({ type: 'list_changed', list: 'tools' }));
    d.apply(at({ type: 'list_changed', list: 'prompts' }));
    d.apply(at({ type: 'malformed', method: 'notifications/resources/updated', reason: 'no uri' }));
    d.apply(at({ type: 'read', phase: 'start', uri: 'a://1' }));
    d.apply(at({ type: 'read', phase: 'success', uri: 'a://1' }));
    vi.advanceTimersByTime(10);
    d.apply(at({ type: 'read', phase: 'error', uri: 'a://1', error: 'boom' }));
    d.apply(at({ type: 'read', phase: 'error', uri: 'x://other', error: 'nope' }));

    const snapshot = d.getSnapshot();
    expect(snapshot.counters).toEqual({
      updated: 2,
      listChanged: 1,
      toolsListChanged: 2,
      promptsListChanged: 1,
      unmatched: 0,
      malformed: 1,
      reads: 3,
      readErrors: 2,
    });
    expect(snapshot.lastMalformed).toEqual({
      method: 'notifications/resources/updated',
      reason: 'no uri',
      at: T0 + 10,
    });
    expect(snapshot.resources[0]).toMatchObject({
      notifications: 2,
      lastNotificationAt: T0 + 10,
      reads: 2,
      lastReadAt: T0 + 10,
      lastError: 'boom',
      lastErrorAt: T0 + 20,
    });
    // A later success clears the error.
    d.apply(at({ type: 'read', phase: 'success', uri: 'a://1' }));
    expect(d.getSnapshot().resources[0]?.lastError).toBeUndefined();
  });

  it('shows coverage and declines on the records', () => {
    const d = fed(want('a://1'), want('b://2'), coverage(['a://1', 'b://2']));
    d.apply(at({ type: 'declined', changes: [['b://2', 'not in the acknowledged filter']] }));
    d.apply(coverage([], ['b://2']));
    const [a, b] = d.getSnapshot().resources;
    expect(a).toMatchObject({ acknowledged: true, declined: undefined });
    expect(b).toMatchObject({ acknowledged: false, declined: 'not in the acknowledged filter' });
    d.apply(at({ type: 'declined', changes: [['b://2', null]] }));
    expect(d.getSnapshot().resources[1]?.declined).toBeUndefined();
  });

  it('lists the unmatched newest first, bounded at 50, forgetting the oldest', () => {
    const d = new Diagnostics();
    for (let i = 0; i < 60; i++) d.apply(updated(`x://${i}`, false));
    d.apply(updated('x://15', false)); // seen again: counted and moved to the front
    const { unmatched, counters } = d.getSnapshot();
    expect(counters.unmatched).toBe(61);
    expect(unmatched).toHaveLength(50);
    expect(unmatched[0]).toMatchObject({ uri: 'x://15', count: 2 });
    expect(unmatched[1]?.uri).toBe('x://59');
    expect(unmatched.map((u) => u.uri)).not.toContain('x://9');
    expect(unmatched.at(-1)?.uri).toBe('x://10');
  });

  it('cuts a huge unmatched URI for display instead of storing it whole', () => {
    const huge = `x://${'a'.repeat(1_000_000)}`;
    const d = fed(updated(huge, false), updated(huge, false));
    const [entry] = d.getSnapshot().unmatched;
    expect(entry?.uri.length).toBe(513);
    expect(entry?.uri.endsWith('…')).toBe(true);
    expect(entry?.count).toBe(2);
  });

  it.each([
    ['case', 'file:///Docs/Readme.md', 'file:///docs/readme.md'],
    ['trailing slashes', 'app://notes/1', 'app://notes/1//'],
    ['percent-encoding', 'app://notes/a b', 'app://notes/a%20b'],
  ])('hints at the wanted URI an unmatched one nearly matches (%s)', (_, wanted, sent) => {
    const d = fed(want(wanted), want('other://1'), updated(sent, false), updated('z://9', false));
    const [z, near] = d.getSnapshot().unmatched;
    expect(near).toMatchObject({ uri: sent, nearest: wanted });
    expect(z?.nearest).toBeUndefined();
    // Released: no hint any more.
    d.apply(unwant(wanted));
    expect(d.getSnapshot().unmatched[1]?.nearest).toBeUndefined();
  });

  it('an escaped plus is no near-miss of a space: they name two resources', () => {
    const d = fed(want('tag://a%2Bb'), updated('tag://a%20b', false), updated('tag://a b', false));
    expect(d.getSnapshot().unmatched.map((u) => u.nearest)).toEqual([undefined, undefined]);
  });

  // Two wanted URIs can share a loose form; releasing one keeps the other's hint.
  it('a near-miss hint survives the release of another wanted URI with the same loose form', () => {
    const d = fed(want('a://Doc'), want('a://doc'), unwant('a://Doc'), updated('a://DOC', false));
    expect(d.getSnapshot().unmatched[0]?.nearest).toBe('a://doc');
  });

  describe('subscribed but silent', () => {
    const read = (phase: 'start' | 'success', digest?: string) =>
      at({ type: 'read', phase, uri: 'a://1', ...(digest !== undefined && { digest }) });

    /** a://1 wanted and covered, read once (content "v1"), and a second read under way. */
    function coveredAndReadTwice() {
      const d = fed(want('a://1'), coverage(['a://1']), read('start'), read('success', 'v1'));
      d.apply(read('start'));
      return d;
    }

    const silent = (d: Diagnostics) => d.getSnapshot().resources[0]?.silentChanges;

    it('new content found by a read, covered throughout and unannounced, counts as silent after the 2 s grace', async () => {
      const d = coveredAndReadTwice();
      d.apply(read('success', 'v2'));
      await vi.advanceTimersByTimeAsync(1999);
      expect(silent(d)).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(silent(d)).toBe(1);
      expect(d.getSnapshot().checks.find((c) => c.id === 'silent')?.ok).toBe(false);
    });

    it('a notification within the grace announces the change: not silent', async () => {
      const d = coveredAndReadTwice();
      d.apply(read('success', 'v2'));
      await vi.advanceTimersByTimeAsync(1500);
      d.apply(updated('a://1', true));
      await vi.advanceTimersByTimeAsync(10_000);
      expect(silent(d)).toBe(0);
    });

    it('unchanged content (the same digest) is not silent', async () => {
      const d = coveredAndReadTwice();
      d.apply(read('success', 'v1'));
      await vi.advanceTimersByTimeAsync(10_000);
      expect(silent(d)).toBe(0);
    });

    it('new content is not silent after a notification, across a new coverage, without coverage, or on the first read', async () => {
      const notified = coveredAndReadTwice();
      notified.apply(updated('a://1', true));
      notified.apply(read('success', 'v2'));
      notified.apply(read('start'));
      notified.apply(read('success', 'v3'));

      const recovered = fed(want('a://1'), coverage(['a://1']), read('start'));
      recovered.apply(read('success', 'v1'));
      recovered.apply(coverage([], ['a://1']));
      recovered.apply(coverage(['a://1']));
      recovered.apply(read('start'));
      recovered.apply(read('success', 'v2'));

      const uncovered = coveredAndReadTwice();
      uncovered.apply(coverage([], ['a://1']));
      uncovered.apply(read('success', 'v2'));

      const first = fed(want('a://1'), coverage(['a://1']), read('start'), read('success', 'v1'));

      await vi.advanceTimersByTimeAsync(10_000);
      for (const d of [notified, recovered, uncovered, first]) expect(silent(d)).toBe(0);
    });

    it('new content read after a notification is not silent when a read in between failed', async () => {
      const d = coveredAndReadTwice();
      d.apply(read('success', 'v1'));
      d.apply(updated('a://1', true));
      d.apply(read('start'));
      d.apply(at({ type: 'read', phase: 'error', uri: 'a://1', error: 'busy' }));
      d.apply(read('start')); // the retry
      d.apply(read('success', 'v2'));
      await vi.advanceTimersByTimeAsync(10_000);
      expect(silent(d)).toBe(0);
    });

    it('quiet lists the covered, wanted URIs with no notification and no read for the period', async () => {
      const d = fed(want('a://1'), want('b://2'), want('c://3'), coverage(['a://1', 'b://2']));
      d.apply(read('success', 'v1'));
      d.apply(at({ type: 'read', phase: 'success', uri: 'b://2' }));
      d.apply(at({ type: 'read', phase: 'success', uri: 'c://3' })); // not covered
      vi.advanceTimersByTime(5000);
      d.apply(updated('b://2', true));
      vi.advanceTimersByTime(5000);
      expect(d.quiet(10_000)).toEqual(['a://1']);
      expect(d.quiet(4000)).toEqual(['a://1', 'b://2']);
    });
  });

  it('counts as retained the covered URIs nobody wants', () => {
    const d = fed(want('a://1'), coverage(['a://1', 'b://2', 'c://3']));
    expect(d.getSnapshot().retained).toBe(2);
    d.apply(want('b://2'));
    expect(d.getSnapshot().retained).toBe(1);
    d.apply(coverage([], ['c://3']));
    expect(d.getSnapshot().retained).toBe(0);
  });

  it.each<[string, ConnectionSnapshot, Partial<StreamStatus>]>([
    ['ready, stream open', READY, { state: 'open' }],
    ['ready, stream reopening', READY, { state: 'reopening' }],
    ['reconnecting, stream reopening', { ...READY, phase: 'reconnecting' }, { state: 'reopening' }],
    ['error', { ...READY, phase: 'error' }, { state: 'closed' }],
  ])('status is deriveStatus of the latest connection and stream (%s)', (_, connection, patch) => {
    const status = stream(patch);
    const d = fed(at({ type: 'connection', state: connection }), at({ type: 'stream', status }));
    const snapshot = d.getSnapshot();
    expect(snapshot.status).toBe(deriveStatus(connection, status));
    expect(snapshot.stream).toEqual(status);
  });

  it('a ready connection whose stream is reopening reads reconnecting', () => {
    const d = fed(
      at({ type: 'connection', state: READY }),
      at({ type: 'stream', status: stream({ state: 'reopening' }) }),
    );
    expect(d.getSnapshot().status).toBe('reconnecting');
  });

  it('shows the era, capabilities and list coverage of the connection', () => {
    const legacy: ConnectionSnapshot = {
      ...READY,
      era: 'legacy',
      protocolVersion: '2025-11-25',
      capabilities: { resources: { subscribe: true } },
    };
    const d = fed(
      at({ type: 'connection', state: legacy }),
      at({ type: 'coverage', acknowledged: [], lost: [], lists: ['resources', 'prompts'] }),
    );
    const snapshot = d.getSnapshot();
    expect(snapshot).toMatchObject({
      era: 'legacy',
      legacy: true,
      protocolVersion: '2025-11-25',
      capabilities: { subscribe: true, listChanged: false },
      listAcknowledged: true,
      lists: { resources: true, tools: false, prompts: true },
    });
    expect(snapshot.checks.map((check) => check.id)).toEqual([
      'capabilities',
      'uri-match',
      'stream',
      'silent',
    ]);
  });

  it('returns the same snapshot until an event changes something', () => {
    const d = fed(want('a://1'));
    const first = d.getSnapshot();
    expect(d.getSnapshot()).toBe(first);
    d.apply(at({ type: 'status', status: 'ready' })); // not folded here
    expect(d.getSnapshot()).toBe(first);
    d.apply(updated('a://1', true));
    expect(d.getSnapshot()).not.toBe(first);
  });

  it('tells listeners at most once per emitEveryMs', async () => {
    const d = new Diagnostics({ emitEveryMs: 100 });
    const listener = vi.fn();
    d.subscribe(listener);
    for (let i = 0; i < 20; i++) d.apply(updated(`x://${i}`, false));
    expect(listener).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(99);
    expect(listener).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(listener).toHaveBeenCalledTimes(1);
    expect(d.getSnapshot().counters.unmatched).toBe(20);

    await vi.advanceTimersByTimeAsync(1000);
    expect(listener).toHaveBeenCalledTimes(1); // nothing new, nothing told
    for (let i = 0; i < 5; i++) {
      d.apply(updated('y://1', false));
      await vi.advanceTimersByTimeAsync(30);
    }
    // 150 ms of events: at most two notifications.
    await vi.advanceTimersByTimeAsync(100);
    expect(listener).toHaveBeenCalledTimes(3);
  });

  it('while someone listens, the snapshot changes only when they are told, so no two readers disagree', async () => {
    const d = new Diagnostics({ emitEveryMs: 100 });
    d.apply(want('a://1'));
    const listener = vi.fn();
    d.subscribe(listener);
    const before = d.getSnapshot();
    d.apply(updated('x://1', false));
    // A component that renders now for another reason sees what every other one shows.
    expect(d.getSnapshot()).toBe(before);
    await vi.advanceTimersByTimeAsync(100);
    expect(listener).toHaveBeenCalledTimes(1);
    expect(d.getSnapshot()).not.toBe(before);
    expect(d.getSnapshot().counters.unmatched).toBe(1);
  });

  it('an unsubscribed listener and a disposed instance are told nothing', async () => {
    const d = new Diagnostics({ emitEveryMs: 50 });
    const kept = vi.fn();
    const dropped = vi.fn();
    d.subscribe(kept);
    const unsubscribe = d.subscribe(dropped);
    unsubscribe();
    d.apply(want('a://1'));
    await vi.advanceTimersByTimeAsync(50);
    expect(kept).toHaveBeenCalledTimes(1);
    expect(dropped).not.toHaveBeenCalled();

    d.apply(want('b://2'));
    d.dispose();
    await vi.advanceTimersByTimeAsync(500);
    expect(kept).toHaveBeenCalledTimes(1);
  });
});

/** A diagnostics snapshot without its checks, everything fine unless patched. */
function snapshot(patch: Partial<Omit<McpDiagnostics, 'checks'>> = {}) {
  return {
    status: 'ready',
    era: 'modern',
    protocolVersion: '2026-07-28',
    capabilities: { subscribe: true, listChanged: true },
    legacy: false,
    stream: stream({ state: 'open' }),
    listAcknowledged: true,
    lists: { resources: true, tools: false, prompts: false },
    resources: [],
    retained: 0,
    unmatched: [],
    counters: {
      updated: 0,
      listChanged: 0,
      toolsListChanged: 0,
      promptsListChanged: 0,
      unmatched: 0,
      malformed: 0,
      reads: 0,
      readErrors: 0,
    },
    lastMalformed: undefined,
    tabs: undefined,
    ...patch,
  } satisfies Omit<McpDiagnostics, 'checks'>;
}

const check = (input: Omit<McpDiagnostics, 'checks'>, id: string) => {
  const found = checks(input).find((c) => c.id === id);
  if (!found) throw new Error(`no check ${id}`);
  return found;
};

const resource = (patch: Partial<ResourceDiagnostics>): ResourceDiagnostics => ({
  uri: 'a://1',
  refs: 1,
  subscribed: true,
  acknowledged: true,
  declined: undefined,
  notifications: 0,
  lastNotificationAt: undefined,
  reads: 1,
  lastReadAt: undefined,
  lastError: undefined,
  lastErrorAt: undefined,
  silentChanges: 0,
  ...patch,
});

describe('checks (pure)', () => {
  it('are the same for the same snapshot, and do not touch it', () => {
    const input = snapshot({
      stream: stream({ state: 'reopening', reopenCount: 2 }),
      unmatched: [{ uri: 'x://1', count: 1, lastAt: T0, nearest: undefined }],
    });
    const frozen = structuredClone(input);
    expect(checks(input)).toEqual(checks(input));
    expect(input).toEqual(frozen);
  });

  describe('capabilities', () => {
    it('is not ok before the connection says anything', () => {
      const result = check(snapshot({ capabilities: undefined }), 'capabilities');
      expect(result).toMatchObject({ ok: false, detail: 'not connected yet' });
    });

    it('is ok with both declared, naming the era', () => {
      expect(check(snapshot(), 'capabilities')).toMatchObject({ ok: true });
      expect(check(snapshot(), 'capabilities').detail).toContain('2026-07-28 era');
      const legacy = check(
        snapshot({ era: 'legacy', protocolVersion: '2025-06-18', legacy: true }),
        'capabilities',
      );
      expect(legacy.detail).toContain('2025 era');
      expect(legacy.detail).toContain('2025-06-18');
    });

    it('names what is missing', () => {
      const none = check(
        snapshot({ capabilities: { subscribe: false, listChanged: false } }),
        'capabilities',
      );
      expect(none.ok).toBe(false);
      expect(none.detail).toContain('not declared: resources.subscribe, resources.listChanged');
      const one = check(
        snapshot({ capabilities: { subscribe: true, listChanged: false } }),
        'capabilities',
      );
      expect(one.ok).toBe(false);
      expect(one.detail).toContain('not declared: resources.listChanged —');
    });
  });

  describe('uri-match', () => {
    it('is ok with no unmatched notification', () => {
      expect(check(snapshot(), 'uri-match')).toMatchObject({ ok: true });
    });

    it('quotes a near miss next to what was subscribed, and a stranger with its count, three at most', () => {
      const unmatched: UnmatchedNotification[] = [
        { uri: 'file:///A', count: 1, lastAt: T0, nearest: 'file:///a' },
        { uri: 'x://1', count: 7, lastAt: T0, nearest: undefined },
        { uri: 'x://2', count: 1, lastAt: T0, nearest: undefined },
        { uri: 'x://fourth', count: 1, lastAt: T0, nearest: undefined },
      ];
      const result = check(snapshot({ unmatched }), 'uri-match');
      expect(result.ok).toBe(false);
      expect(result.detail).toContain('server sent "file:///A", you subscribed "file:///a"');
      expect(result.detail).toContain('server sent "x://1" ×7, which nobody subscribed');
      expect(result.detail).toContain('x://2');
      expect(result.detail).not.toContain('x://fourth');
    });
  });

  describe('stream', () => {
    it.each(['open', 'idle'] as const)('is ok while %s', (state) => {
      expect(check(snapshot({ stream: stream({ state }) }), 'stream').ok).toBe(true);
    });

    it.each(['opening', 'reopening', 'unsupported', 'closed'] as const)(
      'is not ok while %s',
      (state) => {
        expect(check(snapshot({ stream: stream({ state }) }), 'stream').ok).toBe(false);
      },
    );

    it('says since when, how often it reopened, why it closed, when it retries, the error and the note', () => {
      const status = stream({
        state: 'reopening',
        since: T0,
        reopenCount: 3,
        lastCloseReason: 'remote',
        nextRetryAt: T0 + 4000,
        lastError: 'ack timed out',
        note: 'a note',
      });
      const { detail } = check(snapshot({ stream: status }), 'stream');
      expect(detail).toBe(
        [
          `listen stream reopening since ${new Date(T0).toISOString()}`,
          'reopened 3×',
          'last close: remote',
          `next attempt ${new Date(T0 + 4000).toISOString()}`,
          'last error: ack timed out',
          'a note',
        ].join(', '),
      );
    });
  });

  describe('silent', () => {
    it('is ok when no resource changed silently', () => {
      const input = snapshot({ resources: [resource({})] });
      expect(check(input, 'silent')).toMatchObject({ ok: true });
    });

    it('names the silent resources with their count and last notification', () => {
      const input = snapshot({
        resources: [
          resource({ uri: 'a://1', silentChanges: 2 }),
          resource({ uri: 'b://2', silentChanges: 1, lastNotificationAt: T0 }),
        ],
      });
      const result = check(input, 'silent');
      expect(result.ok).toBe(false);
      expect(result.detail).toContain(
        'a://1 changed 2× with no notification (last notification: never)',
      );
      expect(result.detail).toContain(
        `b://2 changed 1× with no notification (last notification: ${new Date(T0).toISOString()})`,
      );
    });
  });
});

describe('looseForm', () => {
  it.each([
    ['file:///Docs/Readme.MD', 'file:///docs/readme.md'],
    ['app://notes/1///', 'app://notes/1'],
    ['app://notes/a%20b', 'app://notes/a b'],
    ['app://notes/%E2%9C%93/', 'app://notes/✓'],
    ['app://bad/%E2%9C', 'app://bad/%e2%9c'], // not decodable: the raw spelling, lowercased
    // A stray % spoils only itself: the escapes around it are still read.
    ['app://x/a%20b/50%', 'app://x/a b/50%'],
    ['app://x/a%20b/50%25', 'app://x/a b/50%'],
    ['app://x/%E2%9C/%41', 'app://x/%e2%9c/a'],
    // Form encoding: + is a space, as %20 is; %2B is how a plus is told from one, so it stays a plus.
    ['app://notes/a+b', 'app://notes/a b'],
    ['app://notes/a%2Bb', 'app://notes/a+b'],
    ['app://notes/c%2B%2B', 'app://notes/c++'],
  ])('%s → %s', (uri, loose) => {
    expect(looseForm(uri)).toBe(loose);
  });

  it('is linear: a million escapes, stray or not, complete', () => {
    expect(looseForm(`x:${'%41'.repeat(1_000_000)}`)).toBe(`x:${'a'.repeat(1_000_000)}`);
    expect(looseForm(`x:${'%'.repeat(1_000_000)}`)).toBe(`x:${'%'.repeat(1_000_000)}`);
    expect(looseForm(`x:${'%E2'.repeat(1_000_000)}`)).toBe(`x:${'%e2'.repeat(1_000_000)}`);
  });

  it('is linear: a million trailing slashes complete', () => {
    expect(looseForm(`x:${'/'.repeat(1_000_000)}`)).toBe('x:');
    expect(looseForm('/'.repeat(1_000_000))).toBe('');
    const inner = `${'/'.repeat(1_000_000)}x`;
    expect(looseForm(inner)).toBe(inner);
  });
});
