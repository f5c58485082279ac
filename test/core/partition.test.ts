import { QueryClient, type QueryKey, QueryObserver } from '@tanstack/query-core';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpKeys, mcpKeys } from '../../src/core/keys';
import { adoptPartition, identityOf, type PartitionIdentity } from '../../src/core/partition';

const SERVER_A: PartitionIdentity = { connection: 'url:http://a.test/mcp', auth: 'alice' };
const SERVER_B: PartitionIdentity = { connection: 'url:http://b.test/mcp', auth: 'alice' };
const BOB_ON_A: PartitionIdentity = { connection: SERVER_A.connection, auth: 'bob' };

const content = (uri: string, cacheScope?: 'public' | 'private') => ({
  contents: [{ uri, text: `${uri} text` }],
  ...(cacheScope && { cacheScope }),
});

/** A read that never answers: nothing here touches a network. */
const never = () => new Promise<never>(() => {});

const unmounts: Array<() => void> = [];
let client: QueryClient;

function setup() {
  client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const cache = client.getQueryCache();
  return {
    client,
    cache,
    /** Data in the cache, with nobody showing it. */
    seed(key: QueryKey, data: unknown) {
      client.setQueryData(key, data);
    },
    /** Data in the cache with a mounted observer (what useResource does); what it was told. */
    seedObserved(key: QueryKey, data: unknown) {
      client.setQueryData(key, data);
      const observer = new QueryObserver(client, { queryKey: key, queryFn: never });
      const seen: unknown[] = [];
      unmounts.push(observer.subscribe((result) => seen.push(result.data)));
      return { observer, seen };
    },
    has: (key: QueryKey) => cache.find({ queryKey: key, exact: true }) !== undefined,
    data: (key: QueryKey) => client.getQueryData(key),
  };
}

afterEach(() => {
  for (const unmount of unmounts.splice(0)) unmount();
  client.clear();
});

describe('adoptPartition (rule 12)', () => {
  it('the first identity of a scope, and the same one again, reset and remove nothing', () => {
    const t = setup();
    t.seed(mcpKeys.resource('a://1'), content('a://1'));
    t.seed(mcpKeys.resources(), [{ uri: 'a://1', name: 'a' }]);
    expect(adoptPartition(t.client, mcpKeys, SERVER_A)).toEqual([]);
    expect(adoptPartition(t.client, mcpKeys, { ...SERVER_A })).toEqual([]);
    expect(t.data(mcpKeys.resource('a://1'))).toEqual(content('a://1'));
    expect(t.data(mcpKeys.resources())).toHaveLength(1);
  });

  it('another server removes every unobserved MCP entry of the scope, public ones and lists included, and nothing else', () => {
    const t = setup();
    adoptPartition(t.client, mcpKeys, SERVER_A);
    const mcp: QueryKey[] = [
      mcpKeys.resource('pub://1'),
      mcpKeys.resource('priv://2'),
      mcpKeys.resource('none://3'),
      mcpKeys.resources(),
      mcpKeys.resourceTemplates(),
      mcpKeys.tools(),
      mcpKeys.prompts(),
    ];
    t.seed(mcpKeys.resource('pub://1'), content('pub://1', 'public'));
    t.seed(mcpKeys.resource('priv://2'), content('priv://2', 'private'));
    t.seed(mcpKeys.resource('none://3'), content('none://3'));
    for (const list of mcp.slice(3)) t.seed(list, []);
    // Not MCP keys of this scope: the app's own data, and another scope's.
    const other = createMcpKeys('other');
    const untouched: QueryKey[] = [['todos'], other.resource('pub://1'), other.resources()];
    for (const key of untouched) t.seed(key, content('x://kept', 'private'));
    adoptPartition(t.client, other, SERVER_A);

    expect(adoptPartition(t.client, mcpKeys, SERVER_B)).toEqual([]);
    for (const key of mcp) expect(t.has(key), JSON.stringify(key)).toBe(false);
    for (const key of untouched) expect(t.data(key), JSON.stringify(key)).toBeDefined();
  });

  it('another server resets observed entries to pending (returned, for a fetch under the new one): their observers never see the old data again', () => {
    const t = setup();
    adoptPartition(t.client, mcpKeys, SERVER_A);
    const key = mcpKeys.resource('pub://1');
    const shown = t.seedObserved(key, content('pub://1', 'public'));
    const list = t.seedObserved(mcpKeys.resources(), [{ uri: 'pub://1', name: 'p' }]);

    const reset = adoptPartition(t.client, mcpKeys, SERVER_B);
    expect(reset.map((query) => query.queryKey)).toEqual([key, mcpKeys.resources()]);
    expect(t.has(key)).toBe(true);
    expect(t.cache.find({ queryKey: key })?.state).toMatchObject({
      status: 'pending',
      data: undefined,
      dataUpdatedAt: 0,
    });
    expect(shown.observer.getCurrentResult().data).toBeUndefined();
    expect(shown.seen.at(-1)).toBeUndefined();
    expect(list.observer.getCurrentResult().data).toBeUndefined();
  });

  it('another identity on the same server removes or resets private entries (no cacheScope counts as private) and the lists; public content stays', () => {
    const t = setup();
    adoptPartition(t.client, mcpKeys, SERVER_A);
    t.seed(mcpKeys.resource('pub://1'), content('pub://1', 'public'));
    const pubShown = t.seedObserved(mcpKeys.resource('pub://2'), content('pub://2', 'public'));
    t.seed(mcpKeys.resource('priv://3'), content('priv://3', 'private'));
    t.seed(mcpKeys.resource('none://4'), content('none://4'));
    const privShown = t.seedObserved(mcpKeys.resource('priv://5'), content('priv://5', 'private'));
    t.seed(mcpKeys.tools(), [{ name: 'alice-only' }]);
    t.seed(['todos'], 'the app’s own');

    const reset = adoptPartition(t.client, mcpKeys, BOB_ON_A);
    expect(reset.map((query) => query.queryKey)).toEqual([mcpKeys.resource('priv://5')]);
    expect(privShown.observer.getCurrentResult().data).toBeUndefined();
    expect(t.has(mcpKeys.resource('priv://3'))).toBe(false);
    expect(t.has(mcpKeys.resource('none://4'))).toBe(false);
    expect(t.has(mcpKeys.tools())).toBe(false);
    expect(t.data(mcpKeys.resource('pub://1'))).toEqual(content('pub://1', 'public'));
    expect(pubShown.observer.getCurrentResult().data).toEqual(content('pub://2', 'public'));
    expect(t.data(['todos'])).toBe('the app’s own');
  });

  it('the identity adopted is the one compared with next: data read under it stays, and going back purges again', () => {
    const t = setup();
    adoptPartition(t.client, mcpKeys, SERVER_A);
    adoptPartition(t.client, mcpKeys, SERVER_B);
    t.seed(mcpKeys.resource('b://1'), content('b://1'));
    expect(adoptPartition(t.client, mcpKeys, SERVER_B)).toEqual([]);
    expect(t.has(mcpKeys.resource('b://1'))).toBe(true);
    adoptPartition(t.client, mcpKeys, SERVER_A);
    expect(t.has(mcpKeys.resource('b://1'))).toBe(false);
  });

  it('signing out (auth to undefined) is another identity too', () => {
    const t = setup();
    adoptPartition(t.client, mcpKeys, SERVER_A);
    t.seed(mcpKeys.resource('priv://1'), content('priv://1', 'private'));
    adoptPartition(t.client, mcpKeys, { connection: SERVER_A.connection, auth: undefined });
    expect(t.has(mcpKeys.resource('priv://1'))).toBe(false);
  });

  it('a read in flight under the old identity is cancelled: its signal aborts', () => {
    const t = setup();
    adoptPartition(t.client, mcpKeys, SERVER_A);
    const signals: AbortSignal[] = [];
    const observed = new QueryObserver(t.client, {
      queryKey: mcpKeys.resource('priv://1'),
      queryFn: ({ signal }) => {
        signals.push(signal);
        return never();
      },
    });
    unmounts.push(observed.subscribe(() => {}));
    void t.client
      .fetchQuery({
        queryKey: mcpKeys.resource('priv://2'),
        queryFn: ({ signal }) => {
          signals.push(signal);
          return never();
        },
      })
      .catch(() => {});
    expect(signals).toHaveLength(2);
    expect(signals.some((signal) => signal.aborted)).toBe(false);
    adoptPartition(t.client, mcpKeys, BOB_ON_A);
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
  });

  it('scopes and QueryClients are separate partitions', () => {
    const t = setup();
    const scoped = createMcpKeys('s');
    adoptPartition(t.client, mcpKeys, SERVER_A);
    adoptPartition(t.client, scoped, SERVER_A);
    t.seed(mcpKeys.resource('a://1'), content('a://1'));
    t.seed(scoped.resource('a://1'), content('a://1'));
    // Another QueryClient's first identity is a first identity, whatever this one holds.
    const second = new QueryClient();
    second.setQueryData(mcpKeys.resource('a://1'), content('a://1'));
    expect(adoptPartition(second, mcpKeys, SERVER_B)).toEqual([]);
    expect(second.getQueryData(mcpKeys.resource('a://1'))).toBeDefined();
    second.clear();

    adoptPartition(t.client, scoped, SERVER_B);
    expect(t.has(scoped.resource('a://1'))).toBe(false);
    expect(t.data(mcpKeys.resource('a://1'))).toEqual(content('a://1'));
    // The unscoped partition still has SERVER_A as its identity: adopting it again is no change.
    expect(adoptPartition(t.client, mcpKeys, SERVER_A)).toEqual([]);
    expect(t.data(mcpKeys.resource('a://1'))).toEqual(content('a://1'));
  });
});

describe('identityOf', () => {
  it('a URL is its normalised href, so two spellings of one endpoint are one server', () => {
    expect(identityOf({ url: 'HTTP://Example.test:80/mcp' })).toEqual({
      connection: 'url:http://example.test/mcp',
      auth: undefined,
    });
    expect(identityOf({ url: new URL('http://example.test/mcp') }).connection).toBe(
      identityOf({ url: 'http://example.test:80/mcp' }).connection,
    );
    expect(identityOf({ url: 'http://example.test/other' }).connection).not.toBe(
      identityOf({ url: 'http://example.test/mcp' }).connection,
    );
  });

  it('a relative or unparsable URL is kept as written', () => {
    expect(identityOf({ url: '/mcp' }).connection).toBe('url:/mcp');
  });

  it('a client or a transport factory is its object: the same one, the same server; another, another', () => {
    const client = {};
    const otherClient = {};
    const transport = () => ({});
    const a = identityOf({ client });
    expect(a.connection).toMatch(/^client:\d+$/);
    expect(identityOf({ client }).connection).toBe(a.connection);
    expect(identityOf({ client: otherClient }).connection).not.toBe(a.connection);
    const t = identityOf({ transport });
    expect(t.connection).toMatch(/^transport:\d+$/);
    expect(identityOf({ transport }).connection).toBe(t.connection);
    expect(identityOf({ transport: () => ({}) }).connection).not.toBe(t.connection);
  });

  it('carries authContext as the identity', () => {
    expect(identityOf({ url: 'http://a.test/mcp', authContext: 'alice' })).toEqual({
      connection: 'url:http://a.test/mcp',
      auth: 'alice',
    });
  });
});
