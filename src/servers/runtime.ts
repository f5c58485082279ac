import type { CallToolResult } from '@modelcontextprotocol/client';
import type { Query, QueryClient } from '@tanstack/query-core';
import type { OAuthProvider } from '../auth/oauthProvider';
import { McpQueryError } from '../core/errors';
import { McpCacheSync, type McpCacheSyncOptions, type StartPolicy } from '../core/mcpCacheSync';
import { createServerRequests, type ServerRequests } from '../core/serverRequests';
import { type CallToolVariables, callTool } from '../core/tools';
import type { McpServerConfig } from './config';
import { DEFAULT_STORAGE_KEY, type ServerConnectionOptions } from './options';
import type { ServerSignIn } from './signIn';

/**
 * One configured server while it is in the list: its own McpCacheSync (on
 * its own scope, `scope`), its own server requests and, when it signs
 * in, its own OAuth provider. Made once per configuration; a change of
 * anything but the name makes a new one, so nothing of the old connection
 * (a token, a session, a header) carries over.
 */
export class ServerRuntime {
  /** Its configuration (a new name is taken as is: the connection stays). */
  config: McpServerConfig;
  readonly sync: McpCacheSync;
  readonly requests: ServerRequests | undefined;
  readonly provider: OAuthProvider | undefined;
  /** Aborted when the server ends: the calls made through the manager are cancelled. */
  readonly #calls = new AbortController();
  #started = false;

  constructor(
    config: McpServerConfig,
    readonly scope: string,
    queryClient: QueryClient,
    options: ServerConnectionOptions & {
      signIn?: Pick<ServerSignIn, 'providerFor'>;
      /** The manager's list, noted with the tokens of this add (`ServerSignIn.forgetStored`). */
      storageKey?: string;
    },
    /** 'on-render': a read that suspends a manager's render before its mount starts it. */
    policy: StartPolicy = 'on-mount',
  ) {
    const { signIn } = options;
    this.config = config;
    this.requests = options.serverRequests && createServerRequests(options.serverRequests);
    const list = options.storageKey ?? DEFAULT_STORAGE_KEY;
    this.provider = wantsOAuth(config, signIn) ? signIn?.providerFor(config, list) : undefined;
    const syncOptions: McpCacheSyncOptions = {
      ...connectionOf(options),
      queryClient,
      url: config.url,
      scope,
      ...(config.headers && { fetch: withHeaders(options.fetch, config.url, config.headers) }),
      ...(this.provider && { authProvider: this.provider }),
      ...(this.requests && { serverRequests: this.requests }),
    };
    this.sync = new McpCacheSync(syncOptions, policy);
  }

  /** A tool call on this server; ending the server cancels it (the server is told). */
  callTool(variables: CallToolVariables): Promise<CallToolResult> {
    const calls = this.#calls.signal;
    const { signal } = variables;
    return callTool(this.sync, {
      ...variables,
      signal: signal ? AbortSignal.any([signal, calls]) : calls,
    });
  }

  /** It answered 401 and nothing says it may not sign in: it signs in from now on. */
  needsSignIn(signIn: unknown): boolean {
    const { config, sync } = this;
    if (config.auth !== undefined || sync.getState().status !== 'unauthorized') return false;
    return wantsOAuth({ ...config, auth: 'oauth' }, signIn);
  }

  /**
   * Connect (or join the tab that holds the connection), held until `end()`. False once its
   * McpCacheSync has ended (`end()`, or a read started it before any mount and let go): a
   * runtime never connects twice, the manager makes a new one.
   */
  start(): boolean {
    if (this.#calls.signal.aborted) return false;
    if (this.#started) return true;
    try {
      this.sync.mount();
    } catch (error) {
      if ((error as McpQueryError).code !== 'DISPOSED') throw error;
      void this.end();
      return false;
    }
    this.#started = true;
    return true;
  }

  /**
   * End everything of this server: the calls made through the manager are
   * cancelled (the server is told), the connection closed (2025: the
   * session DELETEd), and with it every question the server still had open
   * (the SDK cancels a request's handler when its connection ends; an
   * answer sent now could not arrive before the session does). Resolves
   * once that is done on the server.
   */
  end(): Promise<void> {
    this.#calls.abort(new McpQueryError('DISPOSED', `the server "${this.config.name}" ended`));
    return this.sync.dispose();
  }
}

/** Only what a connection is made with: nothing else of the manager's options reaches it. */
function connectionOf(
  options: ServerConnectionOptions,
): Omit<ServerConnectionOptions, 'serverRequests'> {
  const { fetch, clientInfo, protocol, lingerMs, reconnect, ackTimeoutMs, requestTimeoutMs } =
    options;
  const { toolTimeoutMs, diagnosticsIntervalMs, silenceProbeMs, clock, shareAcrossTabs } = options;
  return {
    fetch,
    clientInfo,
    protocol,
    lingerMs,
    reconnect,
    ackTimeoutMs,
    requestTimeoutMs,
    toolTimeoutMs,
    diagnosticsIntervalMs,
    silenceProbeMs,
    clock,
    shareAcrossTabs,
  };
}

/**
 * Whether the server signs in with OAuth: said so, or learnt from its 401
 * (`auth` stays unset until then). One with its own `Authorization` header
 * has its credentials already.
 */
export function wantsOAuth(config: McpServerConfig, signIn: unknown): boolean {
  const ownCredentials = Object.keys(config.headers ?? {}).some(
    (name) => name.toLowerCase() === 'authorization',
  );
  return signIn !== undefined && config.auth === 'oauth' && !ownCredentials;
}

/**
 * A fetch that adds the server's headers to requests for the server's own
 * origin, and to nothing else: discovery and token requests to an
 * authorization server on another origin never carry them.
 */
export function withHeaders(
  base: typeof fetch | undefined,
  serverUrl: string,
  headers: Readonly<Record<string, string>>,
): typeof fetch {
  const origin = new URL(serverUrl).origin;
  return (input, init) => {
    const send = base ?? globalThis.fetch;
    const request = typeof Request === 'function' && input instanceof Request ? input : undefined;
    const target = new URL(request ? request.url : String(input), serverUrl);
    if (target.origin !== origin) return send(input, init);
    const merged = new Headers(init?.headers ?? request?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return send(input, { ...init, headers: merged });
  };
}

const ofScope = (scope: string) => (query: { queryKey: readonly unknown[] }) =>
  query.queryKey[0] === 'mcp' && query.queryKey[1] === scope;

/**
 * A removed server leaves nothing in the cache: every entry of its scope
 * goes, private or not, reads in flight included, and so do the tool calls
 * made on its scope (their variables and results are its data too).
 */
export function removeScope(queryClient: QueryClient, scope: string): void {
  void queryClient.cancelQueries({ predicate: ofScope(scope) }).catch(() => {});
  queryClient.removeQueries({ predicate: ofScope(scope) });
  const mutations = queryClient.getMutationCache();
  for (const mutation of mutations.getAll()) {
    if (ofScope(scope)({ queryKey: mutation.options.mutationKey ?? [] })) {
      mutations.remove(mutation);
    }
  }
}

/**
 * A server whose connection changed (another URL, other headers, other
 * sign-in) may answer for someone else: what its scope holds is reset where
 * someone shows it (they never see it again, and it loads anew once the new
 * connection starts) and removed elsewhere.
 */
export function resetScope(queryClient: QueryClient, scope: string): void {
  const cache = queryClient.getQueryCache();
  for (const query of cache.findAll({ predicate: ofScope(scope) }) as Query[]) {
    if (query.observers.length > 0) query.reset();
    else cache.remove(query);
  }
}
