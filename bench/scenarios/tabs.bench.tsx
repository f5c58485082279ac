/** @vitest-environment node */
import { QueryClient, QueryObserver } from '@tanstack/query-core';
import { it } from 'vitest';
import { McpCacheSync, type McpEventOf } from '../../src/core';
import { shareAcrossTabs } from '../../src/tabs';
import type { ServerKind, TestServer } from '../../test/servers';
import { BrowserLocks, tabChannels } from '../../test/support/tabs';
import { KINDS, OUR_OPTIONS, SEED, SIZES, type TabsSize } from '../lib/config';
import { elapsed, quiet, serverText, sleep, startBenchServer, until, uriOf } from '../lib/harness';
import { textOf } from '../lib/impls';
import { Prng } from '../lib/prng';
import { type Cell, ms, type Table, type Target, times, writeFragment } from '../lib/report';
import { ratio, type Summary, summarize } from '../lib/stats';
import { Tracker } from '../lib/tracker';

/** A handover must have settled on one connection by then. */
const HANDOVER_TIMEOUT_MS = 15_000;
/** A small run of both variants on each era before the measured ones, thrown away. */
const WARMUP: TabsSize = { tabs: 3, uris: 2, updates: 3, consistentTimeoutMs: 10_000 };
/** What the bench passes to `shareAcrossTabs` besides locks and channel: nothing, the defaults. */
const SHARE_OPTIONS = {} as const;

type Variant = 'shared' | 'unshared';

interface Update {
  uri: string;
  text: string;
}

/** The same seeded updates for both variants and every era. */
function makeWorkload(size: TabsSize): { updates: Update[]; handoverUris: string[] } {
  const random = new Prng(SEED, 'tabs');
  const uris = Array.from({ length: size.uris }, (_, i) => uriOf(i));
  return {
    updates: Array.from({ length: size.updates }, (_, k) => ({
      uri: random.pick(uris),
      text: `u${k}`,
    })),
    // close, the update during it, then crash, the update during it, then one more.
    handoverUris: [random.pick(uris), random.pick(uris), random.pick(uris)],
  };
}

/** One simulated browser tab: its own QueryClient and McpCacheSync, holding every URI. */
interface Tab {
  readonly index: number;
  readonly sync: McpCacheSync;
  /** The latest `tabs` event this tab emitted (shared only). */
  tabs(): McpEventOf<'tabs'> | undefined;
  close(): Promise<void>;
  /** The page dies: no goodbye, its locks go at once, then its connection drops. */
  crash(): Promise<void>;
}

interface Browser {
  readonly locks: BrowserLocks;
  open(index: number): Tab;
}

/**
 * N tabs of one browser profile in this process, as test/integration/tabs.test.ts builds them:
 * an in-memory Web Locks manager shared by the tabs, Node's BroadcastChannel (one set per tab).
 * Each tab reports to `tracker`, from its query cache, every change of a resource's text (id =
 * tab × M + URI index): "the tab's cache has the content", timestamped synchronously.
 */
function browser(url: string, uris: string[], shared: boolean, tracker: Tracker): Browser {
  const locks = new BrowserLocks();
  const indexOf = new Map(uris.map((uri, i) => [uri, i]));
  const open = (index: number): Tab => {
    const tab = locks.tab();
    const channels = tabChannels();
    const queryClient = new QueryClient();
    const sync = new McpCacheSync({
      queryClient,
      url,
      lingerMs: OUR_OPTIONS.lingerMs,
      ...(shared && {
        shareAcrossTabs: shareAcrossTabs({
          ...SHARE_OPTIONS,
          locks: tab.locks,
          channel: channels.open,
        }),
      }),
    });
    let tabsEvent: McpEventOf<'tabs'> | undefined;
    const stopEvents = sync.subscribeEvents((event) => {
      if (event.type === 'tabs') tabsEvent = event;
    });
    const stopCache = queryClient.getQueryCache().subscribe((event) => {
      if (event.type !== 'updated') return;
      const uri = sync.keys.uriOf(event.query.queryKey);
      const at = uri === undefined ? undefined : indexOf.get(uri);
      if (at === undefined) return;
      const id = index * uris.length + at;
      const text = textOf(event.query.state.data as Parameters<typeof textOf>[0]);
      if (text !== tracker.text(id)) tracker.report(id, text);
    });
    const release = sync.mount();
    // What `useResource` does without React: a subscribed observer holds the URI.
    const stops = uris.map((uri) =>
      new QueryObserver(queryClient, sync.resourceQueryOptions(uri)).subscribe(() => {}),
    );
    let closed: Promise<void> | undefined;
    const close = () => {
      closed ??= (async () => {
        for (const stop of stops) stop();
        release();
        await sync.dispose();
        stopCache();
        stopEvents();
        queryClient.clear();
        channels.closeAll();
      })();
      return closed;
    };
    return {
      index,
      sync,
      tabs: () => tabsEvent,
      close,
      crash() {
        channels.closeAll();
        tab.crash();
        return close();
      },
    };
  };
  return { locks, open };
}

interface Connections {
  /** modern: open listen streams; legacy: open GET SSE streams. */
  streams: number;
  /** legacy: live sessions; modern (stateless): null. */
  sessions: number | null;
}

interface Handover {
  how: 'close' | 'crash';
  /** The server-side change made right after the leader started going → every remaining tab has it. */
  consistentMs: number | null;
  /**
   * Leader going → the new leader's connection is the only one on the server: a new listen
   * stream (modern) or new subscriptions (legacy) seen, every URI subscribed, one stream and
   * (legacy) one session open.
   */
  newConnectionMs: number | null;
  /** Reads from the change until the server had been quiet for 200 ms (the catch-up). */
  reads: number;
  after: Connections;
  tabsLeft: number;
  leaders: number;
  /** The `handovers` count the remaining tabs report (min–max). */
  handoversSeen: string;
}

interface TabsRun {
  variant: Variant;
  /** Tabs opened → every tab's cache has every resource. */
  openToConsistentMs: number;
  /** Once consistent and quiet. */
  connections: Connections;
  /** The moment every tab had every resource. */
  readsWhenConsistent: number;
  /** Then, once the server had been quiet for 200 ms. */
  readsAtStart: number;
  readsPerUpdate: Summary;
  /** Server-side change → the last tab's cache has the new content. */
  consistentMs: Summary;
  staleUpdates: number;
  /** Shared: the leader closes, then the next leader crashes, one update during each. */
  handovers: Handover[];
  /** After the handovers: one more update, through the last leader's stream. */
  afterHandover: { consistentMs: number | null; reads: number } | null;
  leaders: number | null;
  finalMismatches: number;
  /** After every tab disposed (each awaited): what the server and the lock manager still hold. */
  leftOpen: { streams: number; sessions: number; locks: number };
  server: ReturnType<TestServer['counters']>;
}

function connections(server: TestServer): Connections {
  return {
    streams: server.openStreams(),
    sessions: server.kind === 'modern' ? null : server.liveSessions(),
  };
}

/** After `before` (counters): a new stream or new subscriptions, and only that connection open. */
const newConnectionOnly = (
  server: TestServer,
  before: ReturnType<TestServer['counters']>,
  uris: number,
) => {
  const now = server.counters();
  const renewed =
    server.kind === 'modern'
      ? now.listenRequests > before.listenRequests
      : now.subscribeRequests > before.subscribeRequests && server.liveSessions() === 1;
  return renewed && server.openStreams() === 1 && server.subscribedUris().length === uris;
};

/** Resolves with the time the last of `tabs` has `text` for `uri`, or null after `timeoutMs`. */
async function everyTabHas(
  tracker: Tracker,
  tabs: Tab[],
  uriIndex: number,
  uris: number,
  text: string,
  timeoutMs: number,
): Promise<number | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  const all = Promise.all(
    tabs.map((tab) => tracker.waitFor(tab.index * uris + uriIndex, text)),
  ).then((times) => Math.max(...times));
  try {
    return await Promise.race([all, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function runTabs(
  kind: ServerKind,
  variant: Variant,
  size: TabsSize,
  workload: ReturnType<typeof makeWorkload>,
): Promise<TabsRun> {
  const server = await startBenchServer(kind, size.uris);
  const uris = Array.from({ length: size.uris }, (_, i) => uriOf(i));
  const indexOf = new Map(uris.map((uri, i) => [uri, i]));
  const tracker = new Tracker();
  const { locks, open } = browser(server.url, uris, variant === 'shared', tracker);

  const openStart = performance.now();
  let tabs = Array.from({ length: size.tabs }, (_, i) => open(i));
  const everyTabHasAll = () =>
    tabs.every((tab) => uris.every((_, u) => tracker.text(tab.index * size.uris + u) === 'v0'));
  if (!(await until(everyTabHasAll, size.consistentTimeoutMs, 2))) {
    throw new Error(`tabs ${kind} ${variant}: the tabs never had every resource`);
  }
  const openToConsistentMs = elapsed(openStart);
  const readsWhenConsistent = server.store.reads();
  await until(() => server.subscribedUris().length === size.uris, 30_000, 10);
  await quiet(
    () => [server.store.reads(), server.counters(), connections(server), tracker.commits],
    200,
  );
  const readsAtStart = server.store.reads();
  const startConnections = connections(server);
  if (variant === 'shared') {
    await until(() => tabs.every((tab) => tab.tabs()?.tabs === size.tabs), 10_000, 10);
  }

  const readsPerUpdate: number[] = [];
  const consistentMs: number[] = [];
  let staleUpdates = 0;
  for (const update of workload.updates) {
    const before = server.store.reads();
    const changedAt = performance.now();
    server.setText(update.uri, update.text);
    const at = await everyTabHas(
      tracker,
      tabs,
      indexOf.get(update.uri) as number,
      size.uris,
      update.text,
      size.consistentTimeoutMs,
    );
    if (at === null) staleUpdates += 1;
    else consistentMs.push(at - changedAt);
    await quiet(() => server.store.reads(), 100);
    readsPerUpdate.push(server.store.reads() - before);
  }

  const handovers: Handover[] = [];
  let afterHandover: TabsRun['afterHandover'] = null;
  // Two handovers need three tabs: one must be left to show the update.
  if (variant === 'shared' && size.tabs >= 3) {
    for (const [h, how] of (['close', 'crash'] as const).entries()) {
      const leader = tabs.find((tab) => tab.tabs()?.leader === true);
      if (!leader) throw new Error(`tabs ${kind}: no leader before the ${how} handover`);
      tabs = tabs.filter((tab) => tab !== leader);
      const uri = workload.handoverUris[h] as string;
      const text = `handover-${how}`;
      const before = server.store.reads();
      const countersBefore = server.counters();
      const goingAt = performance.now();
      const going = how === 'close' ? leader.close() : leader.crash();
      // Nobody may be subscribed right now: the catch-up must bring it.
      const changedAt = performance.now();
      server.setText(uri, text);
      await going;
      const atPromise = everyTabHas(
        tracker,
        tabs,
        indexOf.get(uri) as number,
        size.uris,
        text,
        size.consistentTimeoutMs,
      );
      const connectedPromise = until(
        () => newConnectionOnly(server, countersBefore, size.uris),
        HANDOVER_TIMEOUT_MS,
        2,
      ).then((connected) => (connected ? elapsed(goingAt) : null));
      const [at, newConnectionMs] = await Promise.all([atPromise, connectedPromise]);
      if (at === null) staleUpdates += 1;
      await quiet(() => [server.store.reads(), server.counters(), connections(server)], 200);
      const seen = tabs.map((tab) => tab.tabs()?.handovers ?? 0);
      handovers.push({
        how,
        consistentMs: at === null ? null : at - changedAt,
        newConnectionMs,
        reads: server.store.reads() - before,
        after: connections(server),
        tabsLeft: tabs.length,
        leaders: tabs.filter((tab) => tab.tabs()?.leader === true).length,
        handoversSeen: `${Math.min(...seen)}–${Math.max(...seen)}`,
      });
    }
    // Live again: the next update comes through the new leader's stream.
    const uri = workload.handoverUris[2] as string;
    const before = server.store.reads();
    const changedAt = performance.now();
    server.setText(uri, 'after-handovers');
    const at = await everyTabHas(
      tracker,
      tabs,
      indexOf.get(uri) as number,
      size.uris,
      'after-handovers',
      size.consistentTimeoutMs,
    );
    if (at === null) staleUpdates += 1;
    await quiet(() => server.store.reads(), 100);
    afterHandover = {
      consistentMs: at === null ? null : at - changedAt,
      reads: server.store.reads() - before,
    };
  }

  // Every remaining tab's cache against what the server holds now.
  let finalMismatches = 0;
  for (const tab of tabs) {
    for (const [u, uri] of uris.entries()) {
      if (tracker.text(tab.index * size.uris + u) !== serverText(server, uri)) finalMismatches += 1;
    }
  }
  const leaders =
    variant === 'shared' ? tabs.filter((tab) => tab.tabs()?.leader === true).length : null;
  const counters = server.counters();

  await Promise.all(tabs.map((tab) => tab.close()));
  // Every dispose has resolved: nothing of this run may be left on the server.
  await until(() => server.openStreams() === 0 && server.liveSessions() === 0, 5_000, 10);
  const leftOpen = {
    streams: server.openStreams(),
    sessions: server.liveSessions(),
    locks: locks.held().length,
  };
  await server.close();
  (globalThis as { gc?: () => void }).gc?.();
  await sleep(100);
  return {
    variant,
    openToConsistentMs,
    connections: startConnections,
    readsWhenConsistent,
    readsAtStart,
    readsPerUpdate: summarize(readsPerUpdate),
    consistentMs: summarize(consistentMs),
    staleUpdates,
    handovers,
    afterHandover,
    leaders,
    finalMismatches,
    leftOpen,
    server: counters,
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const connectionsText = ({ streams, sessions }: Connections) =>
  sessions === null
    ? plural(streams, 'stream')
    : `${plural(streams, 'stream')}, ${plural(sessions, 'session')}`;

it('tabs: N tabs of one app sharing one connection, against every tab on its own', async () => {
  const start = performance.now();
  const size = SIZES.tabs;
  const workload = makeWorkload(size);
  const results: Record<string, Record<Variant, TabsRun>> = {};
  const tables: Table[] = [];
  const targets: Target[] = [];
  let ourMismatches = 0;
  const handoverRows: Cell[][] = [];

  for (const kind of KINDS) {
    // Not measured: loads and warms up both paths (the first run of a process pays for it).
    for (const variant of ['shared', 'unshared'] as const) {
      await runTabs(kind, variant, WARMUP, makeWorkload(WARMUP));
    }
    const runs = {} as Record<Variant, TabsRun>;
    for (const variant of ['shared', 'unshared'] as const) {
      const runStart = performance.now();
      runs[variant] = await runTabs(kind, variant, size, workload);
      console.log(`tabs ${kind} ${variant}: ${elapsed(runStart)} ms`);
    }
    results[kind] = runs;
    const { shared, unshared } = runs;
    for (const run of [shared, unshared]) {
      ourMismatches += run.finalMismatches + run.staleUpdates;
    }
    const row = (label: string, run: TabsRun): Cell[] => [
      label,
      run.connections.streams,
      run.connections.sessions,
      run.readsAtStart,
      run.readsPerUpdate.mean,
      run.readsPerUpdate.max,
      ms(run.consistentMs.p50),
      ms(run.consistentMs.p95),
      ms(run.consistentMs.max),
      run.openToConsistentMs,
      run.staleUpdates,
      run.finalMismatches,
      `${run.leftOpen.streams}/${run.leftOpen.sessions}/${run.leftOpen.locks}`,
    ];
    const ratioOf = (a: number | null, b: number | null) =>
      a === null || b === null ? null : ratio(a, b);
    tables.push({
      title: `tabs · ${kind} · ${size.tabs} tabs × ${size.uris} URIs (every tab holds every URI), ${size.updates} updates one at a time`,
      head: [
        'variant',
        'streams',
        'sessions',
        'reads at start',
        'reads/update mean',
        'max',
        'consistent p50 ms',
        'p95',
        'max',
        'open→consistent ms',
        'stale updates',
        'final mismatches',
        'left open s/s/l',
      ],
      rows: [
        row('shared', shared),
        row('unshared', unshared),
        [
          'shared/unshared',
          times(ratioOf(shared.connections.streams, unshared.connections.streams)),
          times(ratioOf(shared.connections.sessions, unshared.connections.sessions)),
          times(ratio(shared.readsAtStart, unshared.readsAtStart)),
          times(ratio(shared.readsPerUpdate.mean, unshared.readsPerUpdate.mean)),
          times(ratio(shared.readsPerUpdate.max, unshared.readsPerUpdate.max)),
          times(ratio(shared.consistentMs.p50, unshared.consistentMs.p50)),
          times(ratio(shared.consistentMs.p95, unshared.consistentMs.p95)),
          times(ratio(shared.consistentMs.max, unshared.consistentMs.max)),
          times(ratio(shared.openToConsistentMs, unshared.openToConsistentMs)),
          '',
          '',
          '',
        ],
      ],
      notes: [
        'shared: every tab has shareAcrossTabs({ locks, channel }) (in-memory Web Locks, Node BroadcastChannel, defaults otherwise); unshared: the same tabs without it, each with its own connection.',
        'streams: modern listen streams / legacy GET SSE streams open on the server once every tab had every resource and the server was quiet (200 ms); sessions: legacy live sessions.',
        'reads at start: resources/read served from opening the tabs until every tab had every resource and the server was quiet; reads/update: served per update until quiet for 100 ms.',
        "consistent: server-side change (setText) → the last tab's query cache has the new text (a synchronous QueryCache listener); open→consistent: tabs created → every tab has every resource.",
        'left open s/s/l: after every tab was disposed (each dispose awaited): streams / sessions on the server / Web Locks held.',
      ],
    });
    for (const h of shared.handovers) {
      handoverRows.push([
        kind,
        h.how,
        ms(h.consistentMs),
        h.newConnectionMs,
        h.reads,
        h.after.streams,
        h.after.sessions,
        h.tabsLeft,
        h.leaders,
        h.handoversSeen,
      ]);
    }
    if (shared.afterHandover) {
      handoverRows.push([
        kind,
        'next update',
        ms(shared.afterHandover.consistentMs),
        null,
        shared.afterHandover.reads,
        null,
        null,
        shared.handovers.at(-1)?.tabsLeft,
        shared.leaders,
        null,
      ]);
    }

    const wantedStreams = (run: TabsRun) =>
      run.connections.streams === 1 && (run.connections.sessions ?? 1) === 1;
    const p50Ratio = ratio(shared.consistentMs.p50, unshared.consistentMs.p50) ?? Number.NaN;
    const p95Ratio = ratio(shared.consistentMs.p95, unshared.consistentMs.p95) ?? Number.NaN;
    targets.push(
      {
        scenario: 'tabs',
        kind,
        name: `connections on the server, ${size.tabs} tabs shared`,
        target: kind === 'modern' ? '1 stream' : '1 stream, 1 session',
        actual: `${connectionsText(shared.connections)} (unshared: ${connectionsText(unshared.connections)})`,
        pass: wantedStreams(shared),
      },
      {
        scenario: 'tabs',
        kind,
        name: 'reads at start, shared',
        target: `${size.uris} (one per URI)`,
        actual: `${shared.readsAtStart} (unshared: ${unshared.readsAtStart}, ${times(ratio(shared.readsAtStart, unshared.readsAtStart))})`,
        pass: shared.readsAtStart <= size.uris,
      },
      {
        scenario: 'tabs',
        kind,
        name: 'reads per update, shared',
        target: '1.0',
        actual: `mean ${shared.readsPerUpdate.mean}, max ${shared.readsPerUpdate.max} (unshared: mean ${unshared.readsPerUpdate.mean})`,
        pass: shared.readsPerUpdate.max <= 1 && shared.readsPerUpdate.min >= 1,
      },
      {
        scenario: 'tabs',
        kind,
        name: 'time to consistent p50, shared/unshared',
        target: '≤ 1.5×',
        actual: `${p50Ratio}× (${ms(shared.consistentMs.p50)} ms vs ${ms(unshared.consistentMs.p50)} ms; p95 ${p95Ratio}×)`,
        pass: p50Ratio <= 1.5,
      },
      ...shared.handovers.map((h) => ({
        scenario: 'tabs',
        kind,
        name: `leader ${h.how === 'close' ? 'closes' : 'crashes'}: update during the handover shows in every tab, then one connection`,
        target: kind === 'modern' ? 'shown, 1 stream' : 'shown, 1 stream, 1 session',
        actual: `${h.consistentMs === null ? 'NOT shown' : `shown in ${ms(h.consistentMs)} ms`}, ${connectionsText(h.after)}`,
        pass: h.consistentMs !== null && h.after.streams === 1 && (h.after.sessions ?? 1) === 1,
      })),
      {
        scenario: 'tabs',
        kind,
        name: 'mismatches',
        target: '0',
        actual: [shared, unshared]
          .map((run) => `${run.variant} ${run.finalMismatches} final, ${run.staleUpdates} stale`)
          .join('; '),
        pass: [shared, unshared].every((run) => run.finalMismatches + run.staleUpdates === 0),
      },
      {
        scenario: 'tabs',
        kind,
        name: 'left open after every tab disposed',
        target: '0 streams, 0 sessions, 0 locks',
        actual: [shared, unshared]
          .map(
            (run) =>
              `${run.variant} ${run.leftOpen.streams}/${run.leftOpen.sessions}/${run.leftOpen.locks}`,
          )
          .join('; '),
        pass: [shared, unshared].every(
          (run) => run.leftOpen.streams + run.leftOpen.sessions + run.leftOpen.locks === 0,
        ),
      },
    );
  }

  tables.push({
    title: `tabs · handover (shared) · ${size.tabs} tabs: the leader closes, then the next leader crashes; one update right after each starts`,
    head: [
      'era',
      'leader',
      'update → every tab has it ms',
      'going → new connection only ms',
      'reads',
      'streams after',
      'sessions after',
      'tabs left',
      'leaders',
      'handovers seen',
    ],
    rows: handoverRows,
    notes: [
      'close: sync.dispose() of the leader tab; crash: its channels close and its locks are released at once (a dead renderer), then it is disposed.',
      "going → new connection only: the leader starts going → the new leader's listen stream (modern) or subscriptions (legacy) are on the server and nothing else is open.",
      'reads: from the update until the server was quiet for 200 ms (the catch-up of the new leader included); next update: one more update after both handovers, through the last leader.',
    ],
  });

  writeFragment({
    scenario: 'tabs',
    durationMs: elapsed(start),
    config: {
      ...size,
      kinds: KINDS,
      ourOptions: OUR_OPTIONS,
      shareOptions: SHARE_OPTIONS,
      updateUris: workload.updates.map((u) => u.uri),
    },
    results,
    tables,
    targets,
    ourMismatches,
  });
});
