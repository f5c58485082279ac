import type { Era } from '../core/events';
import type { McpStatus } from '../core/state';
import type { McpServerInput, ServerAuth, ServerConfigResult } from './config';
import type { ServerRuntime } from './runtime';

/** One server as the list shows it: its configuration and its connection now. */
export interface McpServer {
  /** How every hook names it: `useResource(uri, { scope: server.id })`. */
  readonly id: string;
  /**
   * Its scope on the QueryClient, which nothing else uses (the storage key
   * and the id): for query options outside React, `resourceQueryOptions(uri, { scope })`.
   */
  readonly scope: string;
  readonly name: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly auth: ServerAuth | undefined;
  /**
   * Which add of the server this is (`McpServerConfig.nonce`; undefined in a list stored before
   * nonces): with `id` and `url`, what `ServerSignIn.providerFor` takes.
   */
  readonly nonce: string | undefined;
  readonly status: McpStatus;
  readonly era: Era | undefined;
  readonly error: Error | undefined;
  /** `none`: the server does not sign in here; else whether its OAuth provider holds a token. */
  readonly signIn: 'none' | 'signed-out' | 'signed-in';
  /** Sign in to this server (from a click: it may leave the page or open a popup). */
  readonly authorize: () => void;
  /** Forget this server's tokens; its connection starts again without them. */
  readonly signOut: () => Promise<void>;
  readonly reconnect: () => void;
}

export type AddServerResult =
  | { ok: true; server: McpServer }
  | { ok: false; problem: Exclude<ServerConfigResult, { ok: true }>['problem']; message: string };

/** What `update()` may change; `undefined` for `headers` or `auth` unsets them. */
export type McpServerPatch = Partial<Omit<McpServerInput, 'id'>>;

/**
 * A server's list entry from its runtime: `previous` (the same object) while
 * nothing it shows changed, so a list of them re-renders only what moved.
 */
export function serverEntry(runtime: ServerRuntime, previous: McpServer | undefined): McpServer {
  const { config, sync, provider } = runtime;
  const state = sync.getState();
  const signIn = !provider ? 'none' : provider.tokens() ? 'signed-in' : 'signed-out';
  if (
    previous &&
    previous.name === config.name &&
    previous.status === state.status &&
    previous.era === state.era &&
    previous.error === state.error &&
    previous.signIn === signIn
  ) {
    return previous;
  }
  return {
    id: config.id,
    scope: runtime.scope,
    name: config.name,
    url: config.url,
    headers: config.headers,
    auth: config.auth,
    nonce: config.nonce,
    status: state.status,
    era: state.era,
    error: state.error,
    signIn,
    authorize: previous?.authorize ?? (() => sync.authorize()),
    signOut: previous?.signOut ?? (async () => void (await provider?.signOut())),
    reconnect: sync.reconnect,
  };
}
