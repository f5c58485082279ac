/** @vitest-environment jsdom */
/**
 * Server logs (issue 21): `useServerLog({ level })` on the three real servers and the reference
 * server. The level reaches the server the way its era says (`logging/setLevel` on 2025, each
 * request's `_meta` on 2026-07-28), only where it declared logging; messages land in a bounded
 * inbox, newest first, with a count of those dropped; a malformed one is counted, not kept.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { type ReactNode, useEffect } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, McpProvider, useCallTool, useServerLog } from '../../src';
import { McpCacheSync } from '../../src/core/mcpCacheSync';
import { serverLog } from '../../src/core/serverLog';
import { McpDevtools } from '../../src/devtools';
import {
  type ServerCapabilityOptions,
  type StoredTool,
  startTamperProxy,
  type TestServer,
} from '../servers';
import { startEverythingServer } from '../servers/everything';
import { atEnd, closeAll } from '../support/atEnd';
import { ERA_CASES, serve as serveEra } from '../support/eras';
import { disposeSyncs } from '../support/syncs';
import { eventually } from '../support/wait';

const TOOLS: StoredTool[] = [
  {
    name: 'chatty',
    log: [
      { level: 'debug', data: 'noise' },
      { level: 'warning', data: { disk: 91 } },
      { level: 'error', data: 'bad' },
    ],
  },
  { name: 'burst', log: ['a', 'b', 'c', 'd', 'e'].map((data) => ({ level: 'error', data })) },
];

afterEach(async () => {
  cleanup();
  await disposeSyncs();
  await closeAll();
});

async function serve(
  kind: (typeof ERA_CASES)[number]['kind'],
  capabilities?: ServerCapabilityOptions,
): Promise<TestServer> {
  const server = await serveEra(kind, capabilities);
  server.store.setTools(TOOLS);
  return server;
}

interface Caller {
  call?: ReturnType<typeof useCallTool>;
}

type Level = 'debug' | 'warning' | 'error';

function Log({
  level,
  max,
  clearOnLevel,
  caller,
}: {
  level?: Level;
  max?: number;
  /** A host's "start afresh at each level": an effect on the level and `clear` (counted). */
  clearOnLevel?: { clears: number };
  caller: Caller;
}) {
  const log = useServerLog({ ...(level && { level }), ...(max && { max }) });
  caller.call = useCallTool();
  const { clear } = log;
  useEffect(() => {
    // At most 10: an effect run at every render would clear, render and clear again for ever.
    if (!clearOnLevel || !level || clearOnLevel.clears >= 10) return;
    clearOnLevel.clears += 1;
    clear();
  }, [clearOnLevel, level, clear]);
  return (
    <div data-testid="log" data-supported={String(log.supported)}>
      {log.entries.map((entry) => `${entry.level}:${JSON.stringify(entry.data)}`).join(' ')}
      {log.dropped > 0 && ` (+${log.dropped} dropped)`}
    </div>
  );
}

function app(
  url: string,
  props: { level?: Level; max?: number; clearOnLevel?: { clears: number } },
) {
  const queryClient = new QueryClient();
  atEnd(() => queryClient.clear());
  const caller: Caller = {};
  const ui = (next: typeof props) => (
    <QueryClientProvider client={queryClient}>
      <McpProvider url={url} lingerMs={20}>
        <Log {...next} caller={caller} />
      </McpProvider>
    </QueryClientProvider>
  );
  const view = render(ui(props));
  const run = async (name: string) => {
    await act(async () => {
      await caller.call?.mutateAsync({ name });
    });
  };
  return { run, rerender: (next: typeof props) => act(() => view.rerender(ui(next))) };
}

const shown = () => screen.getByTestId('log').textContent;
const supported = () => screen.getByTestId('log').dataset.supported;

describe.each(ERA_CASES)('server logs ($kind)', ({ kind, era }) => {
  it('shows the messages from the level asked for, newest first, and tells the server the level', async () => {
    const server = await serve(kind);
    const { run } = app(server.url, { level: 'warning' });
    await eventually(() => expect(supported()).toBe('true'));
    if (era === 'legacy')
      await eventually(() => expect(server.counters().setLevelRequests).toBe(1));
    await run('chatty');
    await eventually(() => expect(shown()).toBe('error:"bad" warning:{"disk":91}'));
    if (era === 'modern') expect(server.counters().methods['logging/setLevel']).toBeUndefined();
  });

  it('a new level reaches the server, and the inbox shows from it', async () => {
    const server = await serve(kind);
    const { run, rerender } = app(server.url, { level: 'warning' });
    await eventually(() => expect(supported()).toBe('true'));
    await run('chatty');
    await eventually(() => expect(shown()).toBe('error:"bad" warning:{"disk":91}'));
    rerender({ level: 'error' });
    await eventually(() => expect(shown()).toBe('error:"bad"'));
    if (era === 'legacy')
      await eventually(() => expect(server.counters().setLevelRequests).toBe(2));
    await run('chatty');
    // The server sent the new call's messages from `error` up only.
    await eventually(() => expect(shown()).toBe('error:"bad" error:"bad"'));
  });

  it('keeps at most `max` entries and counts the dropped ones', async () => {
    const server = await serve(kind);
    const { run } = app(server.url, { level: 'error', max: 2 });
    await eventually(() => expect(supported()).toBe('true'));
    await run('burst');
    await eventually(() => expect(shown()).toBe('error:"e" error:"d" (+3 dropped)'));
  });

  it('clear is the same function from render to render: an effect on it clears once per level', async () => {
    const server = await serve(kind);
    const clearOnLevel = { clears: 0 };
    const { run } = app(server.url, { level: 'warning', clearOnLevel });
    await eventually(() => expect(supported()).toBe('true'));
    await run('chatty');
    await eventually(() => expect(shown()).toBe('error:"bad" warning:{"disk":91}'));
    expect(clearOnLevel.clears).toBe(1);
  });

  it('a server that declared no logging is not asked, and says so', async () => {
    const server = await serve(kind, { logging: false });
    const { run } = app(server.url, { level: 'warning' });
    await eventually(() => expect(supported()).toBe('false'));
    // A level would have been sent as the connection became ready, before this call, which has
    // been answered since (and the call's own messages come before its answer).
    await run('chatty');
    expect(server.counters().methods['logging/setLevel']).toBeUndefined();
    expect(shown()).toBe('');
  });
});

/** An McpCacheSync (no React) on a tamper proxy before a legacy-v2 server, its stream open. */
async function inboxOnProxy() {
  const server = await serve('legacy-v2');
  const proxy = await startTamperProxy(server.url);
  atEnd(() => proxy.close());
  const queryClient = new (await import('@tanstack/query-core')).QueryClient();
  const sync = new McpCacheSync({ queryClient, url: proxy.url });
  atEnd(() => sync.dispose());
  const log = serverLog(sync);
  sync.mount();
  await eventually(() => expect(proxy.openStreams()).toBe(1));
  return { proxy, sync, log };
}

/** A `notifications/message` as the server would send it. */
const message = (params: object) => ({
  jsonrpc: '2.0' as const,
  method: 'notifications/message',
  params,
});

describe('server logs: hostile messages (legacy-v2, on the session stream)', () => {
  it('a message with no known level is counted as malformed; huge data is cut', async () => {
    const { proxy, sync, log } = await inboxOnProxy();
    const malformed: string[] = [];
    sync.subscribeEvents((event) => {
      if (event.type === 'malformed') malformed.push(event.reason);
    });
    proxy.inject([
      message({ level: 'loud', data: 'x' }),
      message({ data: 'no level' }),
      message({ level: 'info', logger: 'l'.repeat(5000), data: 'y'.repeat(100_000) }),
    ]);
    await eventually(() => expect(log.store.get().entries).toHaveLength(1));
    expect(malformed).toEqual(['level is "loud"', 'no level']);
    const [entry] = log.store.get().entries;
    expect(entry?.logger).toHaveLength(201);
    expect(typeof entry?.data === 'string' && entry.data.length).toBe(8001);
  });
});

describe('server logs: how much is kept', () => {
  it('a larger `max` keeps more only while someone asks for it; once let go the inbox shrinks back', async () => {
    const { proxy, log } = await inboxOnProxy();
    const letGo = log.keep(300);
    const small = log.keep(50);
    proxy.inject(Array.from({ length: 300 }, (_, i) => message({ level: 'info', data: i })));
    await eventually(() => expect(log.store.get().entries).toHaveLength(300));
    // Let go and held again at once (a hook whose `max` changed): nothing is dropped.
    letGo();
    const again = log.keep(300);
    await Promise.resolve();
    expect(log.store.get().entries).toHaveLength(300);
    again();
    again(); // twice is once
    await Promise.resolve();
    // Back to the default (200): the oldest go, counted as dropped.
    expect(log.store.get()).toMatchObject({ dropped: 100 });
    expect(log.store.get().entries.map((e) => e.data)).toEqual(
      Array.from({ length: 200 }, (_, i) => 299 - i),
    );
    small();
    await Promise.resolve();
    expect(log.store.get().entries).toHaveLength(200);
  });
});

/** A tamper proxy before a legacy-v2 server, and the page rendered on it (again on `rerender`). */
async function onProxy<P>(page: (props: P) => ReactNode, props: P) {
  const server = await serve('legacy-v2');
  const proxy = await startTamperProxy(server.url);
  atEnd(() => proxy.close());
  const queryClient = new QueryClient();
  atEnd(() => queryClient.clear());
  const ui = (next: P) => (
    <QueryClientProvider client={queryClient}>
      <McpProvider url={proxy.url}>{page(next)}</McpProvider>
    </QueryClientProvider>
  );
  const view = render(ui(props));
  await eventually(() => expect(proxy.openStreams()).toBe(1));
  return { proxy, rerender: (next: P) => act(async () => view.rerender(ui(next))) };
}

/** Two readers of one inbox, the second asking for twice the first's `max`. */
function Pair({ base }: { base: number }) {
  const small = useServerLog({ max: base });
  const large = useServerLog({ max: base * 2 });
  const counts = [small.entries.length, large.entries.length, large.dropped];
  return <div data-testid="pair">{counts.join(' ')}</div>;
}

describe('server logs: readers whose `max` changes together', () => {
  it('two hooks whose `max` changes in one render keep everything the larger one shows', async () => {
    const { proxy, rerender } = await onProxy<number>((base) => <Pair base={base} />, 250);
    proxy.inject(Array.from({ length: 500 }, (_, i) => message({ level: 'info', data: i })));
    const pair = () => screen.getByTestId('pair').textContent;
    await eventually(() => expect(pair()).toBe('250 500 0'));
    // Both effects' cleanups run before either effect: the first new hold must not shrink the
    // inbox below what the second still shows.
    await rerender(251);
    expect(pair()).toBe('251 500 0');
  });
});

/** A full log that comes and goes, and a filtered one that stays mounted. */
function WideAndNarrow({ wide }: { wide: boolean }) {
  return (
    <>
      {wide && <WideLog />}
      <NarrowLog />
    </>
  );
}

function WideLog() {
  useServerLog({ max: 1000 });
  return null;
}

function NarrowLog() {
  const log = useServerLog({ level: 'error', max: 50 });
  return (
    <div data-testid="narrow" data-dropped={log.dropped}>
      {log.entries.map((entry) => String(entry.data)).join(' ')}
    </div>
  );
}

describe('server logs: a release next to a filtered reader', () => {
  it('the inbox shrinking after a larger `max` lets go keeps what a filtered hook still shows', async () => {
    const { proxy, rerender } = await onProxy<boolean>(
      (wide) => <WideAndNarrow wide={wide} />,
      true,
    );
    // One error, then 300 info messages: the error is the 301st newest, kept for the wide log.
    proxy.inject([
      message({ level: 'error', data: 'disk full' }),
      ...Array.from({ length: 300 }, (_, i) => message({ level: 'info', data: `i${i}` })),
    ]);
    const narrow = () => screen.getByTestId('narrow').textContent;
    await eventually(() => expect(narrow()).toBe('disk full'));
    // The wide log goes: the inbox may shrink, but not under the one entry the narrow log shows.
    await rerender(false);
    await act(async () => {
      await Promise.resolve();
    });
    expect(narrow()).toBe('disk full');
  });
});

describe('server logs: a filtered reader among messages of other levels', () => {
  it('keeps the entries it shows however many messages of other levels come after, and counts only its own levels as dropped', async () => {
    const { proxy } = await onProxy<boolean>((wide) => <WideAndNarrow wide={wide} />, false);
    // One error, then more info messages than the inbox keeps by default (200).
    proxy.inject([
      message({ level: 'error', data: 'disk full' }),
      ...Array.from({ length: 300 }, (_, i) => message({ level: 'info', data: `i${i}` })),
    ]);
    const narrow = () => screen.getByTestId('narrow');
    await eventually(() => expect(narrow().textContent).toBe('disk full'));
    expect(narrow().dataset.dropped).toBe('0');
    // 60 errors more: the 50 newest show, the other 11 errors are this reader's dropped ones.
    proxy.inject(Array.from({ length: 60 }, (_, i) => message({ level: 'error', data: `e${i}` })));
    await eventually(() => expect(narrow().textContent?.split(' ')[0]).toBe('e59'));
    expect(narrow().textContent?.split(' ')).toHaveLength(50);
    expect(narrow().dataset.dropped).toBe('11');
  });
});

describe('server logs: a `max` that is no number of entries', () => {
  it('a negative `max` shows nothing (it is 0), not all but the last few', async () => {
    const server = await serve('legacy-v2');
    const { run } = app(server.url, { level: 'error', max: -1 });
    await eventually(() => expect(supported()).toBe('true'));
    await run('burst');
    await eventually(() => expect(shown()).toBe(' (+5 dropped)'));
  });
});

describe('server logs without React', () => {
  it('serverLog(sync) keeps messages from the start of the connection', async () => {
    const server = await serve('legacy-v1');
    const queryClient = new (await import('@tanstack/query-core')).QueryClient();
    const sync = new McpCacheSync({ queryClient, url: server.url });
    atEnd(() => sync.dispose());
    const log = serverLog(sync);
    const release = log.ask('error');
    await callTool(sync, { name: 'chatty' });
    await eventually(() => expect(log.store.get().entries.map((e) => e.data)).toEqual(['bad']));
    expect(server.counters().setLevelRequests).toBe(1);
    release();
  });
});

it('useServerLog on the reference server: its simulated logging reaches the inbox', async () => {
  const server = await startEverythingServer();
  atEnd(() => server.close());
  const { run } = app(server.url, { level: 'debug' });
  await eventually(() => expect(supported()).toBe('true'));
  await eventually(() => expect(server.methods()['logging/setLevel']).toBe(1));
  // The tool sends a message at once (at a random level: all pass `debug`), then every 5 s.
  await run('toggle-simulated-logging');
  await eventually(() =>
    expect(shown()).toMatch(/-level message - SessionId |level-message - SessionId /),
  );
  await run('toggle-simulated-logging');
});

function Caller({ caller }: { caller: Caller }) {
  caller.call = useCallTool();
  return null;
}

describe.each(['modern', 'legacy-v2'] as const)('the devtools Logs tab (%s)', (kind) => {
  it('shows the server’s messages from the level chosen there', async () => {
    const server = await serve(kind);
    const queryClient = new QueryClient();
    atEnd(() => queryClient.clear());
    const caller: Caller = {};
    render(
      <QueryClientProvider client={queryClient}>
        <McpProvider url={server.url} lingerMs={20}>
          <Caller caller={caller} />
          <McpDevtools initialOpen />
        </McpProvider>
      </QueryClientProvider>,
    );
    const panel = () => screen.getByLabelText('MCP devtools').textContent;
    await eventually(() => expect(panel()).toContain('ready'));
    fireEvent.click(screen.getByRole('tab', { name: 'Logs' }));
    fireEvent.change(screen.getByLabelText(/level/), { target: { value: 'warning' } });
    if (kind !== 'modern') {
      await eventually(() => expect(server.counters().setLevelRequests).toBe(1));
    }
    await act(async () => {
      await caller.call?.mutateAsync({ name: 'chatty' });
    });
    await eventually(() => expect(panel()).toMatch(/error: bad/));
    expect(panel()).toContain('warning: {"disk":91}');
    expect(panel()).not.toContain('noise');
  });
});
