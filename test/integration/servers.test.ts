/**
 * The server manager (issue 19) on real servers: a 2026-07-28 server, a 2025 one, one behind
 * OAuth and a URL where nothing listens, added and removed the way a chat host's user does.
 * "Disturbed" is measured on the wire: the handshakes each server URL is sent (a reconnect is a
 * new `server/discover` or `initialize`), and what each server holds open.
 */

import { MutationObserver, QueryObserver } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/auth';
import { callToolMutationOptions, McpCacheSync, toolListQueryOptions } from '../../src/core';
import type { McpServerManager } from '../../src/servers';
import type { TestServer } from '../servers';
import { ERA_CASES, text } from '../support/eras';
import {
  atEnd,
  authServer,
  closeAll,
  DOC,
  FAST,
  idle,
  observe,
  observeScope,
  openManager,
  serverOf,
  statusOf,
  type Tab,
  UNREACHABLE,
  wire,
} from '../support/manager';
import { eventually } from '../support/wait';

afterEach(closeAll);

const SECRET = 'secret://mine';

interface Four {
  modern: TestServer;
  legacy: TestServer;
  guarded: TestServer;
}

async function fourServers(): Promise<Four> {
  const auth = await authServer();
  const [modern, legacy, guarded] = await Promise.all([
    serverOf('modern', 'modern'),
    serverOf('legacy-v2', 'legacy'),
    serverOf('modern', 'guarded', { authServer: auth }),
  ]);
  return { modern, legacy, guarded };
}

const inputs = (four: Four) => ({
  modern: { id: 'modern', name: 'Modern', url: four.modern.url },
  legacy: { id: 'legacy', name: 'Legacy', url: four.legacy.url },
  guarded: { id: 'guarded', name: 'Guarded', url: four.guarded.url },
  down: { id: 'down', name: 'Down', url: UNREACHABLE },
});

type Id = keyof ReturnType<typeof inputs>;
const IDS: Id[] = ['modern', 'legacy', 'guarded', 'down'];

/** The status a connected server of each kind settles in. */
const SETTLED: Record<Id, string[]> = {
  modern: ['ready'],
  legacy: ['ready'],
  guarded: ['unauthorized'],
  down: ['reconnecting'],
};

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

async function settled(tab: Tab, ids: Id[]) {
  await eventually(() => {
    for (const id of ids) expect(SETTLED[id]).toContain(statusOf(tab, id));
  });
}

describe('McpServerManager: adding servers', () => {
  it('add checks at once and says why; a refused server changes nothing and connects nowhere', async () => {
    const modern = await serverOf('modern', 'modern');
    const counted = wire();
    const { manager } = openManager({ fetch: counted.fetch });
    expect(manager.add({ name: 'A', url: modern.url })).toMatchObject({ ok: true });
    const refusals = [
      manager.add({ name: 'B', url: 'not a url' }),
      manager.add({ name: 'B', url: 'ftp://127.0.0.1/mcp' }),
      manager.add({ name: 'B', url: `${modern.url}#again` }),
      manager.add({ name: 'a', url: 'http://127.0.0.1:1/other' }),
      manager.add({ name: '', url: 'http://127.0.0.1:1/other' }),
    ];
    expect(refusals.map((result) => !result.ok && result.problem)).toEqual([
      'invalid-url',
      'invalid-url',
      'duplicate-url',
      'duplicate-name',
      'invalid-name',
    ]);
    for (const result of refusals) expect(result.ok || result.message).toBeTruthy();
    expect(manager.getServers().map((server) => server.name)).toEqual(['A']);
    await eventually(() => expect(statusOf({ manager } as Tab, 'a')).toBe('ready'));
    expect(counted.handshakes(modern.url)).toBe(1);
    expect(counted.handshakes('http://127.0.0.1:1/other')).toBe(0);
  });

  it('four servers (2026-07-28, 2025, protected, unreachable): each its own connection and status', async () => {
    const four = await fourServers();
    const tab = openManager();
    for (const id of IDS) expect(tab.manager.add(inputs(four)[id]).ok).toBe(true);
    await settled(tab, IDS);
    const byId = new Map(tab.manager.getServers().map((server) => [server.id, server]));
    expect(byId.get('modern')?.era).toBe('modern');
    expect(byId.get('legacy')?.era).toBe('legacy');
    expect(byId.get('guarded')?.error?.message).toContain(four.guarded.url);
    expect(byId.get('down')?.error?.message).toContain(UNREACHABLE);
    // Each is its own scope: `{ scope: id }` reads that server's content.
    const [a, b] = [observe(tab, 'modern'), observe(tab, 'legacy')];
    await eventually(() => {
      expect(a.text()).toBe('modern doc');
      expect(b.text()).toBe('legacy doc');
    });
    await eventually(() => {
      expect(four.modern.openStreams()).toBe(1);
      expect(four.legacy.liveSessions()).toBe(1);
    });
  });

  it('adding and removing in every order never reconnects another server and leaves nothing open', async () => {
    const four = await fourServers();
    const all = inputs(four);
    const urls: Record<Id, string> = {
      modern: four.modern.url,
      legacy: four.legacy.url,
      guarded: four.guarded.url,
      down: UNREACHABLE,
    };
    const servers: Record<Exclude<Id, 'down'>, TestServer> = four;
    // Every order of removal, each after adding in the reverse order of the one before it.
    for (const order of permutations(IDS)) {
      const counted = wire();
      const tab = openManager({ fetch: counted.fetch });
      const added: Id[] = [];
      for (const id of [...order].reverse()) {
        const before = Object.fromEntries(
          added.map((other) => [other, counted.handshakes(urls[other])]),
        );
        expect(tab.manager.add(all[id]).ok).toBe(true);
        added.push(id);
        if (id === 'modern' || id === 'legacy') observe(tab, id);
        await settled(tab, added);
        for (const other of added.slice(0, -1)) {
          if (other !== 'down') expect(counted.handshakes(urls[other])).toBe(before[other]);
        }
      }
      await eventually(() => {
        expect(four.modern.openStreams()).toBe(1);
        expect(four.legacy.liveSessions()).toBe(1);
      });
      for (const id of order) {
        const rest = added.filter((other) => other !== id && tabHas(tab.manager, other));
        const before = Object.fromEntries(
          rest.map((other) => [other, counted.handshakes(urls[other])]),
        );
        expect(await tab.manager.remove(id)).toBe(true);
        // 2025: the session is DELETEd before remove() resolves; a stream's end reaches the
        // server when it reads the closed socket.
        if (id === 'legacy') expect(servers.legacy.liveSessions()).toBe(0);
        if (id !== 'down') await eventually(() => expect(idle(servers[id])).toBe(true));
        for (const other of rest) {
          if (other !== 'down') expect(counted.handshakes(urls[other])).toBe(before[other]);
          expect(SETTLED[other]).toContain(statusOf(tab, other));
        }
      }
      expect(tab.manager.getServers()).toEqual([]);
      for (const server of Object.values(servers)) expect(idle(server)).toBe(true);
      await tab.close();
    }
  }, 90_000);
});

function tabHas(manager: McpServerManager, id: string): boolean {
  return manager.getServers().some((server) => server.id === id);
}

describe('McpServerManager: the app’s own scopes', () => {
  /** The app's own first-party server on the manager's QueryClient, as `<McpProvider scope>`. */
  function appProvider(tab: Tab, scope: string, url: string) {
    const sync = new McpCacheSync(
      { queryClient: tab.queryClient, url, scope, reconnect: FAST },
      'on-mount',
    );
    const release = sync.mount();
    atEnd(async () => {
      release();
      await sync.dispose();
    });
  }

  it('a server named like an app scope never takes it over, whichever mounts first; removing it leaves the app’s scope served', async () => {
    const [own, added, later] = await Promise.all([
      serverOf('modern', 'own'),
      serverOf('modern', 'added'),
      serverOf('legacy-v2', 'later'),
    ]);
    const tab = openManager();
    appProvider(tab, 'docs', own.url);
    const appDocs = observeScope(tab.queryClient, 'docs');
    await eventually(() => expect(appDocs.text()).toBe('own doc'));
    // The user adds "Docs": its id would be `docs`, a scope the app serves, so it gets another.
    const result = tab.manager.add({ name: 'Docs', url: added.url });
    expect(result).toMatchObject({ ok: true, server: { id: 'docs-2' } });
    expect(tab.manager.add({ id: 'docs', name: 'Docs again', url: later.url })).toMatchObject({
      ok: false,
      problem: 'duplicate-id',
      message: expect.stringContaining('"docs"'),
    });
    const userDocs = observe(tab, 'docs-2');
    await eventually(() => expect(userDocs.text()).toBe('added doc'));
    expect(appDocs.text()).toBe('own doc');

    // A server whose id the app takes as its scope later (the list was stored before): neither
    // takes the other's scope on the QueryClient.
    tab.manager.add({ id: 'notes', name: 'Notes', url: later.url });
    const userNotes = observe(tab, 'notes');
    await eventually(() => expect(userNotes.text()).toBe('later doc'));
    appProvider(tab, 'notes', own.url);
    const appNotes = observeScope(tab.queryClient, 'notes');
    await eventually(() => expect(appNotes.text()).toBe('own doc'));
    later.setText(DOC, 'later doc v2');
    await eventually(() => expect(userNotes.text()).toBe('later doc v2'));
    expect(appNotes.text()).toBe('own doc');

    // Removing them takes nothing of the app's: its scopes stay served and live.
    await tab.manager.remove('docs-2');
    await tab.manager.remove('notes');
    own.setText(DOC, 'own doc v2');
    await eventually(() => {
      expect(appDocs.text()).toBe('own doc v2');
      expect(appNotes.text()).toBe('own doc v2');
    });
    const fresh = observeScope(tab.queryClient, 'docs');
    await eventually(() => expect(fresh.text()).toBe('own doc v2'));
  });
});

describe('McpServerManager: removing one server ends it completely', () => {
  it('its entries go from the cache, the other server’s entry of the same URI stays', async () => {
    const [a, b] = await Promise.all([serverOf('modern', 'A'), serverOf('legacy-v2', 'B')]);
    const tab = openManager();
    tab.manager.add({ id: 'a', name: 'A', url: a.url });
    tab.manager.add({ id: 'b', name: 'B', url: b.url });
    const [fromA, fromB] = [observe(tab, 'a'), observe(tab, 'b')];
    await eventually(() => {
      expect(fromA.text()).toBe('A doc');
      expect(fromB.text()).toBe('B doc');
    });
    // The same URI on both servers, each kept apart, and live.
    b.setText(DOC, 'B doc v2');
    await eventually(() => expect(fromB.text()).toBe('B doc v2'));
    expect(fromA.text()).toBe('A doc');
    await tab.manager.remove('a');
    const keys = tab.queryClient
      .getQueryCache()
      .getAll()
      .map((query) => query.queryKey);
    expect(keys.filter((key) => key[1] === tab.manager.scopeOf('a'))).toEqual([]);
    expect(keys).toContainEqual(['mcp', tab.manager.scopeOf('b'), 'resource', DOC]);
    await eventually(() => expect(idle(a)).toBe(true));
    a.setText(DOC, 'A doc v2');
    b.setText(DOC, 'B doc v3');
    await eventually(() => expect(fromB.text()).toBe('B doc v3'));
  });
});

describe.each(ERA_CASES)('McpServerManager: a server with a question open ($kind)', ({ kind }) => {
  it('removed: its questions end, its calls are cancelled, its private data goes, nothing is left open', async () => {
    const server = await serverOf(kind, 'asking', {
      tools: [
        {
          name: 'ask',
          elicit: {
            message: 'Your name?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
          },
        },
      ],
    });
    server.store.upsert({ ...text(SECRET, 'mine'), cacheScope: 'private' });
    const other = await serverOf(kind, 'other');
    const tab = openManager({ serverRequests: { elicitation: true } });
    tab.manager.add({ id: 'asking', name: 'Asking', url: server.url });
    tab.manager.add({ id: 'other', name: 'Other', url: other.url });
    const secret = observe(tab, 'asking', SECRET);
    await eventually(() => expect(secret.text()).toBe('mine'));
    // A component answering every server's questions (useServerElicitations).
    const stop = tab.manager.subscribeElicitations(() => {});
    atEnd(stop);
    await eventually(() => expect(tab.manager.resolveTool('Asking__ask')).toBeTruthy());
    // One call through the manager (it cancels those), one made on the server's own scope
    // (`useCallTool({ scope })`), which ends with the connection.
    const call = tab.manager.callTool({ name: 'Asking__ask' });
    call.catch(() => {});
    await eventually(() => expect(tab.manager.getElicitations()).toHaveLength(1));
    // `useCallTool({ scope })`: a mutation of the server's scope in the QueryClient.
    const mutation = new MutationObserver(
      tab.queryClient,
      callToolMutationOptions(tab.manager.getSyncs().get('asking') as McpCacheSync),
    );
    const plain = mutation.mutate({ name: 'ask' });
    plain.catch(() => {});
    await eventually(() => expect(tab.manager.getElicitations()).toHaveLength(2));
    for (const question of tab.manager.getElicitations()) {
      expect(question).toMatchObject({
        serverId: 'asking',
        serverName: 'Asking',
        params: { message: 'Your name?' },
      });
    }
    const otherHandshakes = other.counters();
    await tab.manager.remove('asking');
    await expect(call).rejects.toThrow();
    await plain.catch(() => {});
    expect(tab.manager.getElicitations()).toEqual([]);
    expect(
      tab.queryClient
        .getQueryCache()
        .getAll()
        .filter((query) => query.queryKey[1] === tab.manager.scopeOf('asking')),
    ).toEqual([]);
    expect(tab.queryClient.getMutationCache().getAll()).toEqual([]);
    await eventually(() => {
      expect(idle(server)).toBe(true);
      expect(server.store.pendingAsks()).toBe(0);
    });
    if (kind !== 'modern') {
      // 2025: the server asked on the wire, and saw both questions end with the session.
      expect(server.store.asks().map((ask) => ask.outcome)).toEqual([
        { kind: 'cancelled' },
        { kind: 'cancelled' },
      ]);
    }
    expect(other.counters().toolListRequests).toBe(otherHandshakes.toolListRequests);
    expect(statusOf(tab, 'other')).toBe('ready');
  });
});

describe('McpServerManager: editing a server', () => {
  it('a new URL replaces that server only: the old connection ends, its content is never shown again', async () => {
    const [a, b, c] = await Promise.all([
      serverOf('legacy-v2', 'A'),
      serverOf('modern', 'B'),
      serverOf('modern', 'C'),
    ]);
    const counted = wire();
    const tab = openManager({ fetch: counted.fetch });
    tab.manager.add({ id: 'edited', name: 'Edited', url: a.url });
    tab.manager.add({ id: 'c', name: 'C', url: c.url });
    const edited = observe(tab, 'edited');
    const untouched = observe(tab, 'c');
    await eventually(() => {
      expect(edited.text()).toBe('A doc');
      expect(untouched.text()).toBe('C doc');
    });
    const syncOfC = tab.manager.getSyncs().get('c');
    const shown: Array<string | undefined> = [];
    const result = tab.manager.update('edited', { url: b.url });
    expect(result).toMatchObject({ ok: true, server: { id: 'edited', url: b.url } });
    shown.push(edited.text());
    await eventually(() => expect(edited.text()).toBe('B doc'));
    expect(shown).toEqual([undefined]);
    await eventually(() => expect(idle(a)).toBe(true));
    expect(tab.manager.getSyncs().get('c')).toBe(syncOfC);
    expect(counted.handshakes(c.url)).toBe(1);
    expect(untouched.text()).toBe('C doc');
  });

  it('a new name keeps the connection; an update that would clash is refused and changes nothing', async () => {
    const [a, b] = await Promise.all([serverOf('modern', 'A'), serverOf('legacy-v2', 'B')]);
    const counted = wire();
    const tab = openManager({ fetch: counted.fetch });
    tab.manager.add({ id: 'a', name: 'A', url: a.url });
    tab.manager.add({ id: 'b', name: 'B', url: b.url });
    await eventually(() => expect(statusOf(tab, 'b')).toBe('ready'));
    const sync = tab.manager.getSyncs().get('b');
    const handshakes = counted.handshakes(b.url);
    expect(tab.manager.update('b', { name: 'Bee' })).toMatchObject({ ok: true });
    expect(tab.manager.getServers().map((server) => server.name)).toEqual(['A', 'Bee']);
    expect(tab.manager.getSyncs().get('b')).toBe(sync);
    expect(tab.manager.update('b', { url: a.url })).toMatchObject({ problem: 'duplicate-url' });
    expect(tab.manager.update('b', { name: 'a' })).toMatchObject({ problem: 'duplicate-name' });
    expect(tab.manager.update('zzz', { name: 'Z' })).toMatchObject({ problem: 'unknown-server' });
    expect(tab.manager.getSyncs().get('b')).toBe(sync);
    expect(counted.handshakes(b.url)).toBe(handshakes);
    expect(b.liveSessions()).toBe(1);
  });

  it('new headers are a new connection, and every handshake of it carries them', async () => {
    const server = await serverOf('modern', 'A');
    const handshakes: Array<string | null> = [];
    const spying: typeof fetch = (input, init) => {
      if (String(init?.body).includes('"server/discover"')) {
        handshakes.push(new Headers(init?.headers).get('x-tenant'));
      }
      return fetch(input, init);
    };
    const tab = openManager({ fetch: spying });
    tab.manager.add({ id: 'a', name: 'A', url: server.url });
    await eventually(() => expect(statusOf(tab, 'a')).toBe('ready'));
    expect(handshakes).toEqual([null]);
    const sync = tab.manager.getSyncs().get('a');
    tab.manager.update('a', { headers: { 'x-tenant': 'acme' } });
    expect(tab.manager.getSyncs().get('a')).not.toBe(sync);
    await eventually(() => expect(statusOf(tab, 'a')).toBe('ready'));
    expect(handshakes).toEqual([null, 'acme']);
  });
});

describe('McpServerManager: qualified tool names', () => {
  it('a name keeps the server and tool it was issued for when another server adds a tool named like it', async () => {
    const [first, second] = await Promise.all([
      serverOf('modern', 'first', { tools: [{ name: 'whoami' }] }),
      serverOf('legacy-v2', 'second', { tools: [{ name: 'c' }] }),
    ]);
    const tab = openManager();
    tab.manager.add({ id: 'a', name: 'a', url: first.url });
    tab.manager.add({ id: 'ab', name: 'a__b', url: second.url });
    for (const id of ['a', 'ab']) {
      const lists = new QueryObserver(
        tab.queryClient,
        toolListQueryOptions({ scope: tab.manager.scopeOf(id) }),
      );
      atEnd(lists.subscribe(() => {}));
    }
    // A server's prefix never holds the separator: "a__b" is "a_b", so a name splits one way.
    await eventually(() =>
      expect(tab.manager.qualified('tools').map((tool) => tool.qualifiedName)).toEqual([
        'a__whoami',
        'a_b__c',
      ]),
    );
    const issued = 'a_b__c';
    expect(tab.manager.resolveTool(issued)).toEqual({ serverId: 'ab', name: 'c' });
    // Server "a", added first, adds "b__c" and says its list changed.
    first.setTools([{ name: 'whoami' }, { name: 'b__c' }]);
    await eventually(() =>
      expect(tab.manager.qualified('tools').map((tool) => tool.qualifiedName)).toEqual([
        'a__whoami',
        'a__b__c',
        'a_b__c',
      ]),
    );
    expect(tab.manager.resolveTool(issued)).toEqual({ serverId: 'ab', name: 'c' });
    expect(tab.manager.resolveTool('a__b__c')).toEqual({ serverId: 'a', name: 'b__c' });
    const calls = [first.counters().toolCalls, second.counters().toolCalls];
    await tab.manager.callTool({ name: issued });
    expect([first.counters().toolCalls, second.counters().toolCalls]).toEqual([
      calls[0],
      (calls[1] ?? 0) + 1,
    ]);
  });

  it('a name two tools of one server could be is called on neither, and says why', async () => {
    const server = await serverOf('modern', 'files', {
      tools: [{ name: 'read.file' }, { name: 'read file' }, { name: 'write' }],
    });
    const tab = openManager();
    tab.manager.add({ id: 'files', name: 'Files', url: server.url });
    const lists = new QueryObserver(
      tab.queryClient,
      toolListQueryOptions({ scope: tab.manager.scopeOf('files') }),
    );
    atEnd(lists.subscribe(() => {}));
    await eventually(() =>
      expect(tab.manager.qualified('tools').map((tool) => tool.qualifiedName)).toEqual([
        'Files__write',
      ]),
    );
    const before = server.counters().toolCalls;
    expect(tab.manager.resolveTool('Files__read_file')).toBeUndefined();
    await expect(tab.manager.callTool({ name: 'Files__read_file' })).rejects.toMatchObject({
      code: 'UNKNOWN_SERVER',
      message: expect.stringMatching(/"read\.file".*"read file"/),
    });
    expect(server.counters().toolCalls).toBe(before);
  });

  it('an empty separator, which would let a name split anywhere, is refused', () => {
    expect(() => openManager({ separator: '' })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });
});

describe('McpServerManager: the stored list', () => {
  it('a reload restores the servers and connects them; the storage holds no token', async () => {
    const [a, b] = await Promise.all([serverOf('modern', 'A'), serverOf('legacy-v2', 'B')]);
    const storage = memoryStorage();
    const first = openManager({ storage });
    first.manager.add({ name: 'Server A', url: a.url, headers: { 'x-key': 'k' } });
    first.manager.add({ name: 'Server B', url: b.url });
    await first.close();
    expect(idle(b)).toBe(true);
    const second = openManager({ storage });
    expect(
      second.manager.getServers().map(({ id, name, url, headers }) => ({ id, name, url, headers })),
    ).toEqual([
      { id: 'server-a', name: 'Server A', url: a.url, headers: { 'x-key': 'k' } },
      { id: 'server-b', name: 'Server B', url: b.url, headers: undefined },
    ]);
    const doc = observe(second, 'server-b');
    await eventually(() => expect(doc.text()).toBe('B doc'));
    const stored = storage.getItem('mcp-react-query:servers') ?? '';
    expect(stored).not.toMatch(/token/i);
  });

  it('what the storage holds is checked: a tampered entry is dropped, never connected to', async () => {
    const a = await serverOf('modern', 'A');
    const storage = memoryStorage();
    const counted = wire();
    storage.setItem(
      'mcp-react-query:servers',
      JSON.stringify({
        rev: 3,
        servers: [
          { id: 'a', name: 'A', url: a.url },
          { id: 'evil', name: 'Evil', url: 'javascript:alert(1)' },
          { id: 'dup', name: 'Dup', url: a.url },
          { id: '../x', name: 'X', url: 'http://127.0.0.1:1/mcp' },
          { id: 'h', name: 'H', url: 'http://127.0.0.1:2/mcp', headers: { 'x-k': 'a\r\nb' } },
          'junk',
          null,
        ],
      }),
    );
    const tab = openManager({ storage, fetch: counted.fetch });
    expect(tab.manager.getServers().map((server) => server.id)).toEqual(['a']);
    await eventually(() => expect(statusOf(tab, 'a')).toBe('ready'));
    expect(counted.handshakes('http://127.0.0.1:1/mcp')).toBe(0);
    storage.setItem('mcp-react-query:servers', '{not json');
    expect(openManager({ storage }).manager.getServers()).toEqual([]);
  });
});
