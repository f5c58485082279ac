import type { QueryClient } from '@tanstack/query-core';
import type { KeyValueStorage } from '../auth/storage';
import { McpQueryError } from '../core/errors';
import type { McpCacheSyncOptions } from '../core/options';
import type { ServerRequestOptions } from '../core/serverRequests';
import type { ChannelLike } from '../tabs/protocol';
import { DEFAULT_SEPARATOR } from './qualify';
import type { ServerSignIn } from './signIn';

/** What every server's connection is made with (each server gets its own copy of each). */
export interface ServerConnectionOptions
  extends Pick<
    McpCacheSyncOptions,
    | 'fetch'
    | 'clientInfo'
    | 'protocol'
    | 'lingerMs'
    | 'reconnect'
    | 'ackTimeoutMs'
    | 'requestTimeoutMs'
    | 'toolTimeoutMs'
    | 'diagnosticsIntervalMs'
    | 'silenceProbeMs'
    | 'clock'
    | 'shareAcrossTabs'
  > {
  /**
   * Let servers ask things of the user or the app (elicitation, sampling,
   * roots). Options, not a `ServerRequests`: each server gets its own, so
   * `useServerElicitations()` can say which server asks.
   */
  serverRequests?: ServerRequestOptions;
}

export interface McpServerManagerOptions extends ServerConnectionOptions {
  queryClient: QueryClient;
  /**
   * Where the list of servers is kept (configuration only: OAuth tokens live
   * in each server's provider). Default `localStorage`; `null`: not kept (a
   * reload starts empty; the tabs open now still hear of changes).
   */
  storage?: KeyValueStorage | null;
  /** The storage key, and the name the tabs share changes under. Default `mcp-react-query:servers`. */
  storageKey?: string;
  /** How the other tabs hear of a change. Default a BroadcastChannel; `null`: they do not. */
  channel?: ((name: string) => ChannelLike) | null;
  /**
   * OAuth for the servers that need it: `createServerSignIn({ redirectUrl })`.
   * Without it, a server that answers 401 stays `unauthorized`.
   */
  signIn?: ServerSignIn;
  /**
   * Between a server's prefix and an item's name in qualified names (default
   * `__`). Not empty; a server's prefix never holds it.
   */
  separator?: string;
}

export const DEFAULT_STORAGE_KEY = 'mcp-react-query:servers';

/** The separator of qualified names: an empty one would let a name split anywhere. */
export function separatorOf(options: Pick<McpServerManagerOptions, 'separator'>): string {
  const { separator = DEFAULT_SEPARATOR } = options;
  if (separator !== '') return separator;
  throw new McpQueryError('INVALID_OPTIONS', 'the separator of qualified names cannot be empty');
}
