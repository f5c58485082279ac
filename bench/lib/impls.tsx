import {
  Client,
  type McpSubscription,
  type ReadResourceResult,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { notifyManager, QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import {
  createContext,
  type ReactNode,
  useContext,
  useEffect,
  useLayoutEffect,
  useState,
} from 'react';
import { OUR_OPTIONS, TANSTACK_SCHEDULER } from './config';
import { type McpEvent, McpProvider, useMcpEvents, useResource } from './ours';
import type { Track } from './tracker';

if (TANSTACK_SCHEDULER === 'microtask') notifyManager.setScheduler(queueMicrotask);
if (TANSTACK_SCHEDULER === 'immediate') notifyManager.setScheduler((run) => setImmediate(run));

export type ImplName = 'ours' | 'tanstack-default' | 'naive' | 'plain';

/** The live contenders (plain has no subscriptions: it is the scroll scenario's React baseline). */
export const IMPL_NAMES: ImplName[] = ['ours', 'tanstack-default', 'naive'];

export interface ViewProps {
  id: number;
  uri: string;
  track: Track;
}

/** One way of showing live MCP resources in React, ready to render. */
export interface ImplInstance {
  readonly name: ImplName;
  /** The providers the views need, around `children`. */
  wrap(children: ReactNode): ReactNode;
  readonly View: (props: ViewProps) => ReactNode;
  /** Whatever outlives the React tree (clients, caches). Call after unmounting. */
  close(): Promise<void>;
  /** What the library itself reported (ours with `probe`), for the results. */
  probe?(): OurProbe;
  /** Failed read attempts, by error message. */
  failures(): Record<string, number>;
}

/** Counts failed read attempts by message (retries included). */
class Failures {
  readonly counts: Record<string, number> = {};

  add = (error: unknown): void => {
    const text = error instanceof Error ? error.message : String(error);
    // undici says only "fetch failed"; the socket error is in the cause.
    const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
    const detail = cause?.code ?? cause?.message;
    const message = (detail === undefined ? text : `${text} (${String(detail)})`).slice(0, 120);
    this.counts[message] = (this.counts[message] ?? 0) + 1;
  };

  /** Every failed attempt of any query of `queryClient`. */
  watch(queryClient: QueryClient): void {
    queryClient.getQueryCache().subscribe((event) => {
      if (event.type === 'updated' && event.action.type === 'failed') this.add(event.action.error);
    });
  }

  snapshot = (): Record<string, number> => ({ ...this.counts });
}

export interface OurProbe {
  lastStatus: string | undefined;
  /** Stream state changes as the library saw them, e.g. `listen:open`. */
  streamStates: Record<string, number>;
  lastStream: string | undefined;
  reads: number;
  readErrors: number;
}

const CLIENT_INFO = { name: 'mcp-react-query-bench', version: '0.0.0' };

export function textOf(result: ReadResourceResult | undefined): string | undefined {
  const content = result?.contents[0];
  return content && 'text' in content ? content.text : undefined;
}

/** The commit effect every view uses to say what it shows. */
export function useShown(track: Track, id: number, text: string | undefined): ReactNode {
  useLayoutEffect(() => track(id, text), [track, id, text]);
  return <span>{text ?? ''}</span>;
}

/** A client the way the SDK README connects one: era negotiated automatically. */
export async function connectClient(url: string, fetch?: typeof globalThis.fetch): Promise<Client> {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), fetch && { fetch }));
  return client;
}

/** Options a run may pass to any implementation. */
export interface ImplOptions {
  /** Used for every HTTP request of the implementation's client (ours, tanstack-default). */
  fetch?: typeof globalThis.fetch;
  /**
   * Plain only: each read waits until the server has acknowledged a subscription to its URI,
   * what rule 4 asks of a first load, with nothing else around it (the scroll's floor).
   * 2025: the URI's own `resources/subscribe`. 2026-07-28: one `subscriptions/listen` for the
   * URIs asked for before a microtask passes (a wave of rows mounts in one `flushSync`), its
   * reads once it is acknowledged; the `keepListens` latest stay open.
   */
  subscribeFirst?: { keepListens: number };
}

// ── ours ──────────────────────────────────────────────────────────────────

function OursView({ id, uri, track }: ViewProps) {
  const query = useResource(uri);
  return useShown(track, id, textOf(query.data));
}

function recordEvent(probe: OurProbe, event: McpEvent): void {
  if (event.type === 'status') probe.lastStatus = event.status;
  if (event.type === 'stream') {
    const key = `${event.status.kind}:${event.status.state}`;
    probe.streamStates[key] = (probe.streamStates[key] ?? 0) + 1;
    probe.lastStream = key;
  }
  if (event.type === 'read' && event.phase === 'success') probe.reads += 1;
  if (event.type === 'read' && event.phase === 'error') probe.readErrors += 1;
}

function OursProbe({
  probe,
  onEvent,
}: {
  probe: OurProbe;
  onEvent: ((event: McpEvent) => void) | undefined;
}) {
  useMcpEvents((event) => {
    recordEvent(probe, event);
    onEvent?.(event);
  });
  return null;
}

export function startOurs(
  url: string,
  options: ImplOptions & {
    lingerMs?: number;
    probe?: boolean;
    /** With `probe`: every event of the library, as it happens. */
    onEvent?: (event: McpEvent) => void;
  } = {},
): ImplInstance {
  const queryClient = new QueryClient();
  const failures = new Failures();
  failures.watch(queryClient);
  const lingerMs = options.lingerMs ?? OUR_OPTIONS.lingerMs;
  const probe: OurProbe = {
    lastStatus: undefined,
    streamStates: {},
    lastStream: undefined,
    reads: 0,
    readErrors: 0,
  };
  return {
    name: 'ours',
    wrap: (children) => (
      <QueryClientProvider client={queryClient}>
        <McpProvider url={url} lingerMs={lingerMs} fetch={options.fetch}>
          {/* Only when asked: an events listener makes the library allocate an
              event per notification, which storm and latency must not pay. */}
          {options.probe && <OursProbe probe={probe} onEvent={options.onEvent} />}
          {children}
        </McpProvider>
      </QueryClientProvider>
    ),
    View: OursView,
    failures: failures.snapshot,
    async close() {
      queryClient.clear();
    },
    ...(options.probe && { probe: () => structuredClone(probe) }),
  };
}

// ── baseline: tanstack-default ────────────────────────────────────────────

/**
 * What a TanStack user writes by hand to share subscriptions: a reference
 * count per URI. Legacy: subscribe on the first holder, unsubscribe on the
 * last. Modern: one listen stream for the whole set, re-opened (new stream
 * first, then close the old) whenever the set changes, changes of one tick
 * batched. No linger, no ack-aware reads, no coalescing of notifications.
 */
export class SharedSubscriptions {
  readonly #client: Client;
  readonly #refs = new Map<string, number>();
  #current: McpSubscription | undefined;
  #currentKey = '';
  #scheduled = false;
  #opening = false;
  #dirty = false;
  #closed = false;

  constructor(client: Client) {
    this.#client = client;
  }

  get #modern(): boolean {
    return this.#client.getProtocolEra() === 'modern';
  }

  acquire(uri: string): () => void {
    const refs = this.#refs.get(uri) ?? 0;
    this.#refs.set(uri, refs + 1);
    if (refs === 0) this.#changed(uri, true);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#refs.get(uri) ?? 1) - 1;
      if (left > 0) {
        this.#refs.set(uri, left);
        return;
      }
      this.#refs.delete(uri);
      this.#changed(uri, false);
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#current?.close().catch(() => {});
  }

  #changed(uri: string, added: boolean): void {
    if (this.#closed) return;
    if (!this.#modern) {
      const request = added
        ? this.#client.subscribeResource({ uri })
        : this.#client.unsubscribeResource({ uri });
      void request.catch(() => {});
      return;
    }
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      void this.#reopen();
    });
  }

  async #reopen(): Promise<void> {
    if (this.#opening) {
      this.#dirty = true;
      return;
    }
    const uris = [...this.#refs.keys()].sort();
    const key = uris.join('\n');
    if (key === this.#currentKey || this.#closed) return;
    this.#opening = true;
    try {
      const next =
        uris.length > 0 ? await this.#client.listen({ resourceSubscriptions: uris }) : undefined;
      const previous = this.#current;
      this.#current = next;
      this.#currentKey = key;
      await previous?.close();
    } catch {
      // A failed reopen keeps the old stream; the next change tries again.
    } finally {
      this.#opening = false;
      if (this.#dirty) {
        this.#dirty = false;
        void this.#reopen();
      }
    }
  }
}

interface BaselineContext {
  client: Client;
  shared: SharedSubscriptions;
}

const TanstackContext = createContext<BaselineContext | undefined>(undefined);

function TanstackView({ id, uri, track }: ViewProps) {
  const context = useContext(TanstackContext) as BaselineContext;
  useEffect(() => context.shared.acquire(uri), [context, uri]);
  const query = useQuery({
    queryKey: ['resource', uri],
    queryFn: () => context.client.readResource({ uri }),
  });
  return useShown(track, id, textOf(query.data));
}

export async function startTanstackDefault(
  url: string,
  options: ImplOptions = {},
): Promise<ImplInstance> {
  const queryClient = new QueryClient();
  const failures = new Failures();
  failures.watch(queryClient);
  const client = await connectClient(url, options.fetch);
  client.setNotificationHandler('notifications/resources/updated', (notification) => {
    void queryClient.invalidateQueries({ queryKey: ['resource', notification.params.uri] });
  });
  const context: BaselineContext = { client, shared: new SharedSubscriptions(client) };
  return {
    name: 'tanstack-default',
    wrap: (children) => (
      <QueryClientProvider client={queryClient}>
        <TanstackContext.Provider value={context}>{children}</TanstackContext.Provider>
      </QueryClientProvider>
    ),
    View: TanstackView,
    failures: failures.snapshot,
    async close() {
      await context.shared.close();
      await client.close().catch(() => {});
      queryClient.clear();
    },
  };
}

// ── baseline: naive ───────────────────────────────────────────────────────

interface NaiveContext {
  url: string;
  failures: Failures;
}

const NaiveSetup = createContext<NaiveContext>({ url: '', failures: new Failures() });

/**
 * The straightforward hook: its own SDK client, its own subscription, and a
 * read for every notification, straight into React state. One client per
 * hook is what keeps it this simple: the SDK holds one handler per method and
 * client, so hooks sharing a client would replace each other's handler.
 */
export function useNaiveResource(
  url: string,
  uri: string,
  onError: (error: unknown) => void = () => {},
): ReadResourceResult | undefined {
  const [data, setData] = useState<ReadResourceResult>();
  useEffect(() => {
    let active = true;
    let subscription: McpSubscription | undefined;
    let subscribed = false;
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: 'auto' } });
    const read = async () => {
      const result = await client.readResource({ uri });
      if (active) setData(result);
    };
    const started = (async () => {
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      if (!active) return;
      client.setNotificationHandler('notifications/resources/updated', (notification) => {
        if (notification.params.uri === uri) void read().catch(onError);
      });
      if (client.getProtocolEra() === 'modern') {
        subscription = await client.listen({ resourceSubscriptions: [uri] });
      } else {
        await client.subscribeResource({ uri });
        subscribed = true;
      }
      if (active) await read();
    })().catch(onError);
    return () => {
      active = false;
      void started.then(async () => {
        if (subscription) await subscription.close().catch(() => {});
        if (subscribed) await client.unsubscribeResource({ uri }).catch(() => {});
        await client.close().catch(() => {});
      });
    };
  }, [url, uri, onError]);
  return data;
}

function NaiveView({ id, uri, track }: ViewProps) {
  const { url, failures } = useContext(NaiveSetup);
  return useShown(track, id, textOf(useNaiveResource(url, uri, failures.add)));
}

export function startNaive(url: string): ImplInstance {
  const setup: NaiveContext = { url, failures: new Failures() };
  return {
    name: 'naive',
    wrap: (children) => <NaiveSetup.Provider value={setup}>{children}</NaiveSetup.Provider>,
    View: NaiveView,
    failures: setup.failures.snapshot,
    async close() {},
  };
}

// ── baseline: plain (no subscriptions) ────────────────────────────────────

interface PlainSetup {
  client: Client;
  /** Resolves once `uri` is subscribed; none: plain reads at once. */
  subscribed: ((uri: string) => Promise<unknown>) | undefined;
}

/** 2026-07-28: one listen for the URIs asked for before a microtask, the latest `keep` open. */
function listenPerBatch(client: Client, keep: number): (uri: string) => Promise<unknown> {
  let batch: string[] = [];
  let acknowledged: Promise<unknown> | undefined;
  const open: { close(): Promise<void> }[] = [];
  return (uri) => {
    batch.push(uri);
    acknowledged ??= Promise.resolve().then(async () => {
      const uris = batch;
      batch = [];
      acknowledged = undefined;
      open.push(await client.listen({ resourceSubscriptions: uris }));
      while (open.length > keep) void open.shift()?.close();
    });
    return acknowledged;
  };
}

const PlainContext = createContext<PlainSetup | undefined>(undefined);

/**
 * `useQuery` reading through one shared SDK client, and nothing else: no
 * subscription, no notification handler. What a list of resources costs in
 * React and TanStack Query alone, the floor for first loads.
 */
function PlainView({ id, uri, track }: ViewProps) {
  const { client, subscribed } = useContext(PlainContext) as PlainSetup;
  const query = useQuery({
    queryKey: ['plain', uri],
    queryFn: subscribed
      ? async () => {
          await subscribed(uri);
          return client.readResource({ uri }, { cacheMode: 'bypass' });
        }
      : () => client.readResource({ uri }, { cacheMode: 'bypass' }),
  });
  return useShown(track, id, textOf(query.data));
}

export async function startPlain(url: string, options: ImplOptions = {}): Promise<ImplInstance> {
  const queryClient = new QueryClient();
  const failures = new Failures();
  failures.watch(queryClient);
  const client = await connectClient(url, options.fetch);
  const first = options.subscribeFirst;
  const modern = (client.getNegotiatedProtocolVersion() ?? '') >= '2026-07-28';
  const setup: PlainSetup = {
    client,
    subscribed:
      first &&
      (modern
        ? listenPerBatch(client, first.keepListens)
        : (uri) => client.subscribeResource({ uri })),
  };
  return {
    name: 'plain',
    wrap: (children) => (
      <QueryClientProvider client={queryClient}>
        <PlainContext.Provider value={setup}>{children}</PlainContext.Provider>
      </QueryClientProvider>
    ),
    View: PlainView,
    failures: failures.snapshot,
    async close() {
      await client.close().catch(() => {});
      queryClient.clear();
    },
  };
}

export async function startImpl(
  name: ImplName,
  url: string,
  options: ImplOptions = {},
): Promise<ImplInstance> {
  switch (name) {
    case 'ours':
      return startOurs(url, options);
    case 'tanstack-default':
      return startTanstackDefault(url, options);
    case 'naive':
      return startNaive(url);
    case 'plain':
      return startPlain(url, options);
  }
}
