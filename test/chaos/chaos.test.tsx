/** @vitest-environment jsdom */
/**
 * Chaos: hours of a real app squeezed into a few seconds per era. Components mount and unmount
 * over a few dozen URIs while the server changes content and lists, bursts and repeats
 * notifications, has its streams cut, restarts (abruptly and gracefully), fails and stalls
 * reads. Then the faults stop, and once nothing moves any more every mounted component must
 * show the server's latest content, with no spinner, no stream and no subscription left over,
 * and a read count that stays proportional to what actually happened.
 *
 * Every random choice comes from a seeded PRNG: `CHAOS_SEED=<n> npx vitest run test/chaos`
 * replays a run's operation sequence (the interleaving with network timing cannot be frozen,
 * so a timing-dependent failure may need a few replays). `CHAOS_OPS=<n>` makes a run longer.
 */
import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, render } from '@testing-library/react';
import { StrictMode, useContext, useEffect, useSyncExternalStore } from 'react';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import {
  isNotFound,
  McpCacheSync,
  type McpEvent,
  McpProvider,
  mcpKeys,
  useMcpEvents,
  useResource,
  useResourceList,
} from '../../src';
import { McpContext } from '../../src/react/context';
import { type ServerKind, type StoredResource, startServer } from '../servers';
import { diagnosticsOf } from '../support/diagnostics';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';
import { chaosSeed, createRng, type Rng } from './prng';

const SEED = chaosSeed(20260728);
const OPS = Number(process.env.CHAOS_OPS ?? 200);
// A loaded machine stretches every pause; past this the run stops early (what ran is still a
// prefix of the seed's sequence, so a replay goes through the same operations). A run cut to
// fewer than half its operations tested too little to pass.
const CHAOS_MAX_MS = Number(process.env.CHAOS_MAX_MS ?? 30_000);
const MIN_OPS = Math.ceil(OPS / 2);
// A run that injected fewer faults than this of a kind did not test what it claims. (Driver
// faults follow from the seed; 100 operations draw about 9 connection faults and 10 bursts and
// duplicates, and the reads they cause meet about one injected failure in five.)
const MIN_FAULTS = { connection: 3, read: 3, notification: 3 };
// `CHAOS_TRACE=<uri>` prints that URI's timeline (faults, driver ops, events) at the end.
const TRACE = process.env.CHAOS_TRACE;
const KINDS: ServerKind[] = ['modern', 'legacy-v2', 'legacy-v1'];

const BASE_URIS = Array.from({ length: 30 }, (_, i) => `chaos://doc/${String(i).padStart(2, '0')}`);
// Not there at first: `add` creates them, and a component may show one before it exists.
const SPARE_URIS = Array.from({ length: 6 }, (_, i) => `chaos://new/${i}`);
const POOL = [...BASE_URIS, ...SPARE_URIS];

const LINGER_MS = 100;
const RECONNECT = { initialDelayMs: 20, maxDelayMs: 300 };
const SETTLE_TIMEOUT_MS = 15_000;
const READ_FAILURE_RATE = 0.2;
// Transient failures only. A fetch whose retries are all used up ends in an error state by
// design: the old content stays, marked stale, until something refetches it (a notification,
// a reconnect, or TanStack's focus / online / mount triggers, none of which happen while this
// test settles). So the faults leave the query's 3 retries room to get through: a read is only
// failed on purpose when the previous read of that URI did not fail, whatever failed it (reads
// cut by a drop or a restart count too), and the retry delay (50, 100, 200 ms: TanStack's
// exponential default, scaled down like the reconnect backoff) outlasts a server restart
// (50-110 ms here). Before that spacing, compounding faults used up the retries about once in
// 30 era runs (repro.test.tsx, "a re-read that fails for good").
const retryDelay = (attempt: number) => Math.min(50 * 2 ** attempt, 1000);
const SLOW_READ_RATE = 0.3;
const SLOW_READ_MAX_MS = 120;
const INJECTED = 'chaos: injected read failure';
// The library abandons a 2025 session whose GET stream dropped without ending it on the server
// (repro.test.tsx, "are ended on the server after a reconnect"), so after a drop a legacy
// server holds subscriptions nobody uses. Until that is fixed, server-side subscriptions are
// compared exactly on legacy only when no drop happened since the last restart (a restart
// ends every session). Set to false once fixed.
const LEGACY_ABANDONS_SESSIONS = false;
// Per-URI slack in the read bound: the first read, a read racing the first acknowledgement, a
// list's first diff.
const READ_SLACK = 3;

const WEIGHTS = {
  text: 28,
  burst: 4,
  duplicate: 5,
  meta: 4,
  add: 4,
  remove: 3,
  mount: 16,
  unmount: 14,
  list: 1,
  drop: 3,
  flap: 2,
  restart: 1.5,
  gracefulRestart: 1.5,
} as const;
type Op = keyof typeof WEIGHTS;

type FaultKind =
  | 'drop'
  | 'flap'
  | 'restart'
  | 'graceful-restart'
  | 'read-failure'
  | 'slow-read'
  | 'burst'
  | 'duplicate';

interface Fault {
  kind: FaultKind;
  seq: number;
  uri?: string;
}

interface Slot {
  id: number;
  uri: string;
}

interface Scene {
  viewers: Slot[];
  list: boolean;
}

/** What the test mounts, outside React so the driver can change it between awaits. */
class SceneStore {
  #scene: Scene = { viewers: [], list: true };
  readonly #listeners = new Set<() => void>();
  get = (): Scene => this.#scene;
  subscribe = (listener: () => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };
  set(next: Scene): void {
    this.#scene = next;
    act(() => {
      for (const listener of [...this.#listeners]) listener();
    });
  }
}

/** What the test can see of the provider: its sync object and every event it emits, in order. */
interface Tap {
  sync: McpCacheSync | undefined;
  onEvent: (event: McpEvent) => void;
}

function Viewer({ uri }: { uri: string }) {
  const query = useResource(uri);
  const content = query.data?.contents[0];
  const error = query.error ? (isNotFound(query.error) ? 'not-found' : query.error.message) : '';
  return (
    <output
      data-viewer={uri}
      data-status={query.status}
      data-fetching={String(query.isFetching)}
      data-error={error}
    >
      {content && 'text' in content ? content.text : ''}
    </output>
  );
}

function ListView() {
  const list = useResourceList();
  const rows = list.data?.map((resource) => [resource.uri, resource.title ?? '']);
  return (
    <output data-list="" data-status={list.status} data-fetching={String(list.isFetching)}>
      {rows ? JSON.stringify(rows) : ''}
    </output>
  );
}

/**
 * The provider's sync object, so the test can still ask it whether it closed after the tree is
 * gone. Internal context, read defensively: its shape is not public API.
 */
function useProviderSync(): McpCacheSync | undefined {
  const value: unknown = useContext(McpContext);
  if (value instanceof McpCacheSync) return value;
  return (value as { nearest?: unknown } | undefined)?.nearest instanceof McpCacheSync
    ? (value as { nearest: McpCacheSync }).nearest
    : undefined;
}

function Tapped({ tap }: { tap: Tap }) {
  const sync = useProviderSync();
  useEffect(() => {
    tap.sync = sync;
  }, [tap, sync]);
  useMcpEvents((event) => tap.onEvent(event));
  return null;
}

function SceneView({ scene }: { scene: SceneStore }) {
  const { viewers, list } = useSyncExternalStore(scene.subscribe, scene.get, scene.get);
  return (
    <>
      {viewers.map((slot) => (
        <Viewer key={slot.id} uri={slot.uri} />
      ))}
      {list && <ListView />}
    </>
  );
}

const resource = (uri: string, text: string, title?: string): StoredResource => ({
  uri,
  name: uri.replace(/\W+/g, '-'),
  mimeType: 'text/plain',
  text,
  ...(title === undefined ? {} : { title }),
});

interface Shown {
  uri: string;
  text: string;
  status: string;
  fetching: string;
  error: string;
}

function shownViewers(container: HTMLElement): Shown[] {
  return [...container.querySelectorAll<HTMLElement>('output[data-viewer]')].map((el) => ({
    uri: el.dataset.viewer ?? '',
    text: el.textContent ?? '',
    status: el.dataset.status ?? '',
    fetching: el.dataset.fetching ?? '',
    error: el.dataset.error ?? '',
  }));
}

afterEach(() => {
  cleanup();
});

describe.each(KINDS)('chaos against the %s server', (kind) => {
  it('converges to the server content after faults stop, with nothing leaked', {
    timeout: 60_000,
  }, async () => {
    onTestFailed(() => {
      console.error(`chaos ${kind} failed; replay with CHAOS_SEED=${SEED}`);
    });
    await runChaos(kind, SEED);
  });
});

async function runChaos(kind: ServerKind, seed: number): Promise<void> {
  const rng = createRng(seed, `driver:${kind}`);
  const server = await startServer(kind);
  const { store } = server;
  let version = 0;
  const nextText = (uri: string) => `${uri} v${++version}`;
  for (const uri of BASE_URIS) store.upsert(resource(uri, nextText(uri)));

  // Sequence numbers order faults against events without trusting millisecond clocks.
  let seq = 0;
  const faults: Fault[] = [];
  const timeline: string[] = [];
  const t0 = Date.now();
  const trace = (uri: string | undefined, line: string) => {
    if (TRACE !== undefined && (uri === undefined || uri === TRACE)) {
      timeline.push(`${String(Date.now() - t0).padStart(6)}ms #${seq} ${line}`);
    }
  };
  const fault = (kind: FaultKind, uri?: string) => {
    faults.push({ kind, seq: ++seq, ...(uri && { uri }) });
    trace(uri, `fault ${kind}`);
  };
  const lastReadSettled = new Map<string, number>();
  const lastReadFailed = new Map<string, boolean>();
  let lastStreamOpen = 0;
  const tap: Tap = {
    sync: undefined,
    onEvent(event) {
      seq += 1;
      const { at: _at, ...rest } = event;
      trace('uri' in event ? event.uri : undefined, `event ${JSON.stringify(rest)}`);
      if (event.type === 'read' && event.phase !== 'start') {
        lastReadFailed.set(event.uri, event.phase === 'error');
        if (event.phase === 'success' || !event.error?.includes(INJECTED)) {
          lastReadSettled.set(event.uri, seq);
        }
      }
      if (event.type === 'stream' && event.status.state === 'open') lastStreamOpen = seq;
    },
  };

  // What the driver did to each URI, for the read bound.
  const triggers = new Map<string, number>();
  let currentOp = '';
  const trigger = (uri: string, n = 1) => {
    triggers.set(uri, (triggers.get(uri) ?? 0) + n);
    trace(uri, `driver ${currentOp}: server has ${JSON.stringify(store.get(uri)?.text)}`);
  };
  const mounts = new Map<string, number>();
  const failures = new Map<string, number>();
  // Connection faults that found each URI held (mounted, or released within the linger).
  const exposures = new Map<string, number>();
  const lastHeld = new Map<string, number>();
  const connectionFault = (weight = 1) => {
    const now = Date.now();
    for (const slot of scene.get().viewers) lastHeld.set(slot.uri, now);
    for (const [uri, at] of lastHeld) {
      if (now - at <= 2 * LINGER_MS) exposures.set(uri, (exposures.get(uri) ?? 0) + weight);
    }
  };

  // The network flaps: the browser says offline (navigator.onLine, the `offline` event, which
  // both the library's retry timer and TanStack's onlineManager follow) and the streams die
  // with it; a moment later it is back.
  let offline = false;
  Object.defineProperty(window.navigator, 'onLine', { configurable: true, get: () => !offline });
  const setOnline = (online: boolean) => {
    offline = !online;
    window.dispatchEvent(new Event(online ? 'online' : 'offline'));
  };
  let flapTimer: NodeJS.Timeout | number | undefined;
  const backOnline = () => {
    clearTimeout(flapTimer);
    flapTimer = undefined;
    if (offline) setOnline(true);
  };
  let published = 0;

  // Faults on reads: one PRNG per URI, so the k-th read of a URI meets the same fate in a replay
  // whatever order reads of different URIs happen to arrive in.
  let injecting = true;
  const faultRngs = new Map<string, Rng>();
  store.onRead(async (uri) => {
    if (!injecting) return;
    let faultRng = faultRngs.get(uri);
    if (!faultRng) {
      faultRng = createRng(seed, `reads:${kind}:${uri}`);
      faultRngs.set(uri, faultRng);
    }
    const fail = faultRng.chance(READ_FAILURE_RATE);
    const slow = faultRng.chance(SLOW_READ_RATE);
    const delay = faultRng.int(1, SLOW_READ_MAX_MS);
    if (fail && lastReadFailed.get(uri) !== true) {
      failures.set(uri, (failures.get(uri) ?? 0) + 1);
      fault('read-failure', uri);
      throw new Error(INJECTED);
    }
    if (slow) {
      fault('slow-read', uri);
      await pace(delay);
    }
  });

  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay } } });
  const scene = new SceneStore();
  let nextId = 0;
  const mount = (uri: string) => {
    mounts.set(uri, (mounts.get(uri) ?? 0) + 1);
    trace(uri, `driver mount #${nextId + 1}`);
    return { id: ++nextId, uri };
  };
  scene.set({ viewers: BASE_URIS.slice(0, 20).map(mount), list: true });

  // StrictMode, as in development: every mount is mount → unmount → mount, more churn.
  const view = render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <McpProvider url={server.url} lingerMs={LINGER_MS} reconnect={RECONNECT}>
          <Tapped tap={tap} />
          <SceneView scene={scene} />
        </McpProvider>
      </QueryClientProvider>
    </StrictMode>,
  );
  const container = view.container;
  let unmounted = false;
  const sync = () => {
    if (!tap.sync) throw new Error('the provider has not rendered');
    return tap.sync;
  };

  try {
    await eventually(() => expect(tap.sync?.getState().status).toBe('ready'), { timeout: 10_000 });

    // ── chaos ──────────────────────────────────────────────────────────────
    const present = () => store.list().map((r) => r.uri);
    const absent = () => POOL.filter((uri) => store.get(uri) === undefined);
    let restarting: Promise<unknown> = Promise.resolve();
    let drops = 0;
    let dropsSinceRestart = 0;
    const restartTimes: number[] = [];
    const opErrors: string[] = [];
    const started = Date.now();
    let ops = 0;
    for (; ops < OPS && Date.now() - started < CHAOS_MAX_MS; ops++) {
      await pace(rng.int(0, 25));
      let op: Op = rng.weighted(WEIGHTS);
      const { viewers, list } = scene.get();
      if (op === 'mount' && viewers.length >= 60) op = 'unmount';
      else if (op === 'unmount' && viewers.length <= 8) op = 'mount';
      if (op === 'remove' && present().length <= 20) op = 'text';
      if (op === 'add' && absent().length === 0) op = 'text';
      currentOp = op;
      try {
        switch (op) {
          case 'text': {
            const uri = rng.pick(present());
            server.setText(uri, nextText(uri));
            trigger(uri);
            published += 1;
            break;
          }
          case 'burst': {
            const uri = rng.pick(present());
            const n = rng.int(10, 40);
            for (let k = 0; k < n; k++) server.setText(uri, nextText(uri));
            // Single flight with one trailing read: a burst costs at most two reads.
            trigger(uri, 2);
            published += n;
            fault('burst', uri);
            break;
          }
          case 'duplicate': {
            const uri = rng.pick(present());
            if (rng.chance(0.5)) {
              server.setText(uri, nextText(uri));
              server.resourceUpdated(uri);
              published += 2;
            } else {
              server.resourceUpdated(uri);
              server.resourceUpdated(uri);
              published += 2;
            }
            trigger(uri, 2);
            fault('duplicate', uri);
            break;
          }
          case 'meta': {
            // Content and list entry change together, announced by list_changed alone: the
            // list diff is what must catch it.
            const uri = rng.pick(present());
            store.upsert(resource(uri, nextText(uri), `title ${version}`));
            server.resourcesChanged();
            trigger(uri);
            published += 1;
            break;
          }
          case 'add': {
            // A server that creates a resource someone is subscribed to also tells them; the
            // list_changed-only variant is a separate, focused test (repro.test.tsx).
            const uri = rng.pick(absent());
            server.addResource(resource(uri, nextText(uri)));
            server.resourceUpdated(uri);
            trigger(uri, 2);
            published += 2;
            break;
          }
          case 'remove': {
            const uri = rng.pick(present());
            server.removeResource(uri);
            trigger(uri);
            published += 1;
            break;
          }
          case 'mount': {
            const added = Array.from({ length: rng.int(1, 3) }, () =>
              mount(rng.chance(0.85) ? rng.pick(present()) : rng.pick(POOL)),
            );
            scene.set({ viewers: [...viewers, ...added], list });
            break;
          }
          case 'unmount': {
            const gone = new Set(Array.from({ length: rng.int(1, 3) }, () => rng.pick(viewers).id));
            for (const slot of viewers) {
              if (!gone.has(slot.id)) continue;
              lastHeld.set(slot.uri, Date.now());
              trace(slot.uri, `driver unmount #${slot.id}`);
            }
            scene.set({ viewers: viewers.filter((slot) => !gone.has(slot.id)), list });
            break;
          }
          case 'list':
            scene.set({ viewers, list: !list });
            break;
          case 'drop':
            server.dropStreams();
            drops += 1;
            dropsSinceRestart += 1;
            connectionFault();
            fault('drop');
            break;
          case 'flap': {
            // Drawn even when skipped, so the rest of the sequence does not depend on timing.
            const downMs = rng.int(30, 250);
            if (offline) break;
            setOnline(false);
            server.dropStreams();
            fault('flap');
            drops += 1;
            dropsSinceRestart += 1;
            // The lost stream, the read cut with it, and TanStack's refetch-on-reconnect of
            // whatever was stale.
            connectionFault(3);
            // biome-ignore lint/style/noRestrictedGlobals: the workload: the network is back after downMs
            flapTimer = setTimeout(backOnline, downMs);
            break;
          }
          case 'restart':
          case 'gracefulRestart': {
            // One restart at a time (the host cannot overlap them), but the driver does not
            // wait for it: changes made while the server is down are the interesting ones.
            await restarting;
            const graceful = op === 'gracefulRestart';
            connectionFault();
            fault(graceful ? 'graceful-restart' : 'restart');
            const restartStarted = Date.now();
            const dropsBefore = drops;
            restarting = server.restart({ graceful }).then(() => {
              restartTimes.push(Date.now() - restartStarted);
              // Every session died with the old process, unless a drop may have hit the new one.
              if (drops === dropsBefore) dropsSinceRestart = 0;
            });
            break;
          }
        }
      } catch (error) {
        opErrors.push(`${op}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    await restarting;
    backOnline();
    const chaosMs = Date.now() - started;

    // ── settle ─────────────────────────────────────────────────────────────
    injecting = false;
    store.onRead(undefined);
    const settleStarted = Date.now();
    const quiet = await quiesce();
    const settleMs = Date.now() - settleStarted;

    const problems: string[] = [...opErrors.map((e) => `driver op threw: ${e}`)];
    if (!quiet) problems.push(`did not settle within ${SETTLE_TIMEOUT_MS} ms`);
    if (ops < MIN_OPS) {
      problems.push(`ran ${ops} of ${OPS} operations within ${CHAOS_MAX_MS} ms (< ${MIN_OPS})`);
    }
    const injected = (...kinds: FaultKind[]) => faults.filter((f) => kinds.includes(f.kind)).length;
    const injectedByClass = {
      connection: injected('drop', 'flap', 'restart', 'graceful-restart'),
      read: injected('read-failure'),
      notification: injected('burst', 'duplicate'),
    };
    for (const [name, minimum] of Object.entries(MIN_FAULTS)) {
      const count = injectedByClass[name as keyof typeof MIN_FAULTS];
      if (count < minimum) problems.push(`only ${count} ${name} faults injected (< ${minimum})`);
    }
    const state = sync().getState();
    const diagnostics = diagnosticsOf(sync());
    if (state.status !== 'ready') problems.push(`status is ${state.status}`);
    if (diagnostics.stream.state !== 'open') {
      problems.push(`stream is ${diagnostics.stream.state}`);
    }
    if (queryClient.isFetching() !== 0) {
      problems.push(`queryClient.isFetching() = ${queryClient.isFetching()}`);
    }

    const mismatches = screenMismatches();
    problems.push(...mismatches.map((m) => m.message));

    // Server-side subscriptions follow what is mounted: on modern the open stream's
    // acknowledged filter; on legacy the union over live sessions (see LEGACY_ABANDONS_SESSIONS).
    // The live legacy session is also checked by behaviour below.
    const mountedUris = [...new Set(scene.get().viewers.map((slot) => slot.uri))].sort();
    // An unsubscribe sent just before the client settled may still be on its way (a loaded
    // machine): wait for it, bounded. A subscription nobody releases never converges.
    await eventually(() => sameList(server.subscribedUris(), mountedUris)).catch(() => {});
    const subscribed = server.subscribedUris();
    const orphaned = subscribed.filter((uri) => !mountedUris.includes(uri));
    const exact = kind === 'modern' || !LEGACY_ABANDONS_SESSIONS || dropsSinceRestart === 0;
    if (exact) {
      if (JSON.stringify(subscribed) !== JSON.stringify(mountedUris)) {
        problems.push(
          `server subscriptions ${JSON.stringify(subscribed)} ≠ mounted ${JSON.stringify(mountedUris)}`,
        );
      }
    } else {
      const missing = mountedUris.filter((uri) => !subscribed.includes(uri));
      if (missing.length > 0) problems.push(`mounted but not subscribed: ${missing.join(' ')}`);
    }
    // Likewise the streams: once quiet, the client merges what it listens to into one stream
    // and closes the others (listenPlan.ts, `settle`), and a close reaches the server a moment
    // after the client let go. Bounded: a stream nobody closes never converges.
    await eventually(() => expect(server.openStreams()).toBe(1)).catch(() => {});
    const openStreams = server.openStreams();
    if (openStreams !== 1) problems.push(`server sees ${openStreams} streams, expected 1`);

    // Bound on reads per URI: every read must be explained by something the driver did.
    //   notifications (a burst or a duplicate counts 2: single flight + one trailing read)
    //   + mounts (a mount while not covered reads: stale by TTL)
    //   + injected failures (each costs one retry)
    //   + 2 per connection fault while the URI was held (its in-flight read is lost and
    //     retried, and everything subscribed is re-read once when the stream is back)
    //   + a small constant.
    // A storm (a loop re-reading, a reconnect reading everything each time) breaks it fast.
    let totalBound = 0;
    let worst = { uri: '', reads: 0, bound: 0 };
    for (const uri of POOL) {
      const reads = store.reads(uri);
      const bound =
        (triggers.get(uri) ?? 0) +
        (mounts.get(uri) ?? 0) +
        (failures.get(uri) ?? 0) +
        2 * (exposures.get(uri) ?? 0) +
        READ_SLACK;
      totalBound += bound;
      if (reads / bound > worst.reads / Math.max(worst.bound, 1)) worst = { uri, reads, bound };
      if (reads > bound) problems.push(`${uri}: ${reads} reads > bound ${bound}`);
    }

    // A fault is survived when what it hit came back: the stream reopened after a drop or a
    // restart; for a URI still shown, a read settled after the fault (success, or not-found for
    // a removed resource) and the component shows the right thing.
    const shownUris = new Set(shownViewers(container).map((v) => v.uri));
    const wrongUris = new Set(mismatches.map((m) => m.uri));
    let survived = 0;
    for (const f of faults) {
      const ok =
        f.uri === undefined
          ? lastStreamOpen > f.seq
          : !shownUris.has(f.uri) ||
            (!wrongUris.has(f.uri) && (lastReadSettled.get(f.uri) ?? 0) > f.seq);
      if (ok) survived += 1;
      else problems.push(`fault not survived: ${f.kind}${f.uri ? ` on ${f.uri}` : ''}`);
    }

    const totalReads = store.reads();
    const byKind = faults.reduce<Record<string, number>>((acc, f) => {
      acc[f.kind] = (acc[f.kind] ?? 0) + 1;
      return acc;
    }, {});
    console.log(
      `chaos ${kind} seed=${seed}: faults injected=${faults.length} survived=${survived} ` +
        `reads=${totalReads} notifications=${published} final mismatches=${mismatches.length}`,
    );
    console.log(
      `  ${kind}: ops=${ops}/${OPS} chaos=${chaosMs}ms settle=${settleMs}ms faults=${JSON.stringify(byKind)} ` +
        `read bound=${totalBound} worst=${worst.uri} ${worst.reads}/${worst.bound} ` +
        `mounted=${scene.get().viewers.length} on ${mountedUris.length} URIs ` +
        `reopens=${diagnostics.stream.reopenCount} ` +
        `orphaned subscriptions=${orphaned.length}${exact ? '' : ' (not compared: drop since restart)'} ` +
        `restarts took ${restartTimes.join('/')}ms`,
    );
    if (TRACE !== undefined) console.log(`timeline of ${TRACE}:\n${timeline.join('\n')}`);
    expect(problems).toEqual([]);
    expect(survived).toBe(faults.length);

    // ── still live ─────────────────────────────────────────────────────────
    // After all that, one change per URI: exactly one read for each mounted URI, none for the
    // others. On legacy this is what proves the live session subscribes exactly the mounted set.
    await expectLive(mountedUris);

    // ── teardown ───────────────────────────────────────────────────────────
    // First about half the components go: the server must let go of exactly their URIs.
    const keep = scene.get().viewers.filter(() => rng.chance(0.5));
    const keptUris = [...new Set(keep.map((slot) => slot.uri))].sort();
    scene.set({ viewers: keep, list: false });
    expect(await quiesce()).toBe(true);
    // Unsubscribes are deferred (narrowing) and can trail the client's settling.
    if (exact) await eventually(() => sameList(server.subscribedUris(), keptUris)).catch(() => {});
    if (exact) expect(server.subscribedUris()).toEqual(keptUris);
    const held = diagnosticsOf(sync())
      .resources.filter((r) => r.subscribed)
      .map((r) => r.uri)
      .sort();
    expect(held).toEqual(keptUris);
    await expectLive(keptUris);

    // Then the provider goes, with components still mounted in it.
    const closing = sync();
    view.unmount();
    unmounted = true;
    await disposeSyncs(); // the provider's teardown, complete: transport closed, session ended
    expect(closing.getState().status).toBe('closed');
    expect(diagnosticsOf(closing).stream.state).toBe('closed');
    await eventually(() => expect(server.openStreams()).toBe(0));
    if (exact) await eventually(() => expect(server.subscribedUris()).toEqual([]));
    // Nothing left to run: no reconnect, re-listen or retry is scheduled, no read in flight.
    expect(closing.getState().nextRetryAt).toBeUndefined();
    expect(diagnosticsOf(closing).stream.nextRetryAt).toBeUndefined();
    expect(queryClient.isFetching()).toBe(0);
  } finally {
    clearTimeout(flapTimer);
    if (offline) setOnline(true);
    delete (window.navigator as { onLine?: boolean }).onLine;
    store.onRead(undefined);
    if (!unmounted) view.unmount();
    await disposeSyncs();
    queryClient.clear();
    await server.close();
  }

  /** One change to every existing URI: one read for each URI in `mounted`, none for others. */
  async function expectLive(mounted: readonly string[]): Promise<void> {
    const before = new Map(POOL.map((uri) => [uri, store.reads(uri)]));
    const existing = store.list().map((r) => r.uri);
    for (const uri of existing) server.setText(uri, nextText(uri));
    expect(await quiesce()).toBe(true);
    expect(screenMismatches().map((m) => m.message)).toEqual([]);
    const unexpected = existing
      .map((uri) => ({
        uri,
        reads: store.reads(uri) - (before.get(uri) ?? 0),
        want: mounted.includes(uri) ? 1 : 0,
      }))
      .filter((r) => r.reads !== r.want);
    expect(unexpected).toEqual([]);
  }

  /** Every mounted component (and the list, if shown) against the store. */
  function screenMismatches(): { uri: string; message: string }[] {
    const out: { uri: string; message: string }[] = [];
    for (const shown of shownViewers(container)) {
      const expected = store.get(shown.uri);
      const settled = shown.fetching === 'false';
      const seen = `shows ${JSON.stringify(shown.text)} (${shown.status}, fetching ${shown.fetching}${shown.error ? `, ${shown.error}` : ''})`;
      if (expected) {
        if (shown.text !== expected.text || shown.status !== 'success' || !settled) {
          const message = `${shown.uri} ${seen}, server has ${JSON.stringify(expected.text)}`;
          out.push({ uri: shown.uri, message });
        }
      } else if (shown.status !== 'error' || shown.error !== 'not-found' || !settled) {
        const message = `${shown.uri} ${seen}, but the server has no such resource`;
        out.push({ uri: shown.uri, message });
      }
    }
    const list = container.querySelector<HTMLElement>('output[data-list]');
    if (list) {
      const expected = JSON.stringify(store.list().map((r) => [r.uri, r.title ?? '']));
      if (
        list.textContent !== expected ||
        list.dataset.status !== 'success' ||
        list.dataset.fetching !== 'false'
      ) {
        const message = `[list] shows ${list.textContent} (${list.dataset.status}), server has ${expected}`;
        out.push({ uri: '[list]', message });
      }
    }
    return out;
  }

  /**
   * Waits until the client has nothing pending, then until it has handled everything the server
   * sent: a resource list_changed goes out after all of it on the same stream, and once the
   * client has counted that, whatever came before has been handled too (and its reads started).
   * Then nothing pending again. False if that takes longer than SETTLE_TIMEOUT_MS.
   */
  async function quiesce(): Promise<boolean> {
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    const nothingPending = () =>
      eventually(() => expect(pending()).toEqual([]), {
        timeout: Math.max(0, deadline - Date.now()),
      });
    try {
      await nothingPending();
      const fence = diagnosticsOf(sync()).counters.listChanged;
      server.resourcesChanged();
      await eventually(
        () => expect(diagnosticsOf(sync()).counters.listChanged).toBeGreaterThan(fence),
        {
          timeout: Math.max(0, deadline - Date.now()),
        },
      );
      await nothingPending();
      return true;
    } catch (error) {
      console.log(`chaos ${kind}: not settled: ${error instanceof Error ? error.message : error}`);
      return false;
    }
  }

  /** What the client still has going: empty once it is connected, covered and idle. */
  function pending(): string[] {
    const out: string[] = [];
    const current = tap.sync;
    if (!current) return ['no provider'];
    const status = current.getState().status;
    if (status !== 'ready') out.push(`status ${status}`);
    const diagnostics = diagnosticsOf(current);
    if (diagnostics.stream.state !== 'open') out.push(`stream ${diagnostics.stream.state}`);
    if (queryClient.isFetching() > 0) out.push(`${queryClient.isFetching()} fetching`);
    // Released URIs linger, then stay subscribed (retained) until ten quiet linger periods pass.
    for (const r of diagnostics.resources) {
      if (r.refs === 0) out.push(`${r.uri} lingering`);
      else if (!r.acknowledged && r.declined === undefined) out.push(`${r.uri} not covered yet`);
    }
    if (diagnostics.retained > 0) out.push(`${diagnostics.retained} retained`);
    if (offline) out.push('offline');
    // React has rendered what the cache holds (it commits a moment after the cache changes).
    for (const shown of shownViewers(container)) {
      const state = queryClient.getQueryState(mcpKeys.resource(shown.uri));
      const content = (state?.data as ReadResourceResult | undefined)?.contents[0];
      const cached = content && 'text' in content ? content.text : '';
      if (shown.text !== cached || shown.status !== state?.status || shown.fetching !== 'false') {
        out.push(`${shown.uri} not rendered yet`);
      }
    }
    return out;
  }
}

function sameList(a: string[], b: string[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The workload's own rhythm (random gaps between operations, a slow read on the server): what
 * the test does to the client, never a wait for something it does.
 */
function pace(ms: number): Promise<void> {
  // biome-ignore lint/style/noRestrictedGlobals: the workload's timing, not a wait
  return new Promise((resolve) => setTimeout(resolve, ms));
}
