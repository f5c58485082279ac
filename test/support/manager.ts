/**
 * Shared by the server-manager suites: the real servers a chat host would add (2026-07-28, 2025,
 * one behind OAuth, one that is not there), a fetch that counts handshakes per server on the
 * wire, and managers ("tabs") that are all closed by `closeAll()`.
 */
import { QueryClient, QueryObserver } from '@tanstack/query-core';
import type { KeyValueStorage } from '../../src/auth';
import { memoryStorage } from '../../src/auth';
import { resourceQueryOptions } from '../../src/core';
import { McpServerManager, type McpServerManagerOptions } from '../../src/servers';
import {
  type AuthServer,
  ResourceStore,
  type ServerCapabilityOptions,
  type ServerKind,
  type StoredTool,
  startAuthServer,
  startServer,
  type TestServer,
} from '../servers';
import { text } from './eras';

export const FAST = { initialDelayMs: 20, maxDelayMs: 100 };
/** Nothing listens on the discard port: connecting is refused at once. */
export const UNREACHABLE = 'http://127.0.0.1:9/mcp';
export const DOC = 'doc://shared';

const cleanups: Array<() => unknown> = [];

export async function closeAll(): Promise<void> {
  for (const close of cleanups.splice(0).reverse()) await close();
}

export function atEnd(close: () => unknown): void {
  cleanups.push(close);
}

/** A server whose `doc://shared` says who it is, and with tools of its own. */
export async function serverOf(
  kind: ServerKind,
  label: string,
  options: {
    tools?: StoredTool[];
    authServer?: AuthServer;
    capabilities?: ServerCapabilityOptions;
  } = {},
): Promise<TestServer> {
  const store = new ResourceStore([text(DOC, `${label} doc`)]);
  store.setTools(options.tools ?? [{ name: 'whoami' }, { name: `${label}_only` }]);
  const server = await startServer(kind, {
    store,
    ...(options.authServer && { auth: { authServer: options.authServer } }),
    ...(options.capabilities && { capabilities: options.capabilities }),
  });
  atEnd(() => server.close());
  return server;
}

export async function authServer(): Promise<AuthServer> {
  const server = await startAuthServer();
  atEnd(() => server.close());
  return server;
}

/**
 * Counts the handshakes (`initialize`, `server/discover`) each server URL is sent: a connection
 * made again shows here, whoever's it is.
 */
export function wire() {
  const counts = new Map<string, number>();
  const countingFetch: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const body = typeof init?.body === 'string' ? init.body : undefined;
    if (body && /"method":"(initialize|server\/discover)"/.test(body)) {
      const key = new URL(url).href;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return fetch(input, init);
  };
  return { fetch: countingFetch, handshakes: (url: string) => counts.get(new URL(url).href) ?? 0 };
}

export interface Tab {
  manager: McpServerManager;
  queryClient: QueryClient;
  /** Unmount: the manager's connections end (its list stays stored). */
  close(): Promise<void>;
}

/** A manager as one page has it: its own QueryClient, mounted, closed at the end. */
export function openManager(
  options: Partial<McpServerManagerOptions> & { storage?: KeyValueStorage | null } = {},
): Tab {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retryDelay: 10 } } });
  const manager = new McpServerManager({
    queryClient,
    storage: memoryStorage(),
    channel: null,
    reconnect: FAST,
    lingerMs: 10,
    requestTimeoutMs: 3000,
    ...options,
  });
  const release = manager.mount();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    release();
    await manager.dispose();
    queryClient.clear();
  };
  atEnd(close);
  return { manager, queryClient, close };
}

/** `useResource(uri, { scope: id })` without React: a mounted observer of the server's resource. */
export function observe(tab: Tab, id: string, uri = DOC) {
  return observeScope(tab.queryClient, tab.manager.scopeOf(id), uri);
}

/** `useResource(uri, { scope })` of any scope of the QueryClient (an app's own provider's, say). */
export function observeScope(queryClient: QueryClient, scope: string, uri = DOC) {
  const observer = new QueryObserver(queryClient, resourceQueryOptions(uri, { scope }));
  const stop = observer.subscribe(() => {});
  atEnd(stop);
  return {
    text(): string | undefined {
      const content = observer.getCurrentResult().data?.contents[0];
      return content && 'text' in content ? content.text : undefined;
    },
    result: () => observer.getCurrentResult(),
    stop,
  };
}

export const statusOf = (tab: Tab, id: string) =>
  tab.manager.getServers().find((server) => server.id === id)?.status;

/** Nothing open on the server: no stream, and (2025) no session. */
export function idle(server: TestServer): boolean {
  return server.openStreams() === 0 && server.liveSessions() === 0;
}
