import type { BackoffOptions } from './backoff';
import type { CacheBridge } from './cacheBridge';
import { borrowedSource, ownedSource } from './clientSource';
import { Connection } from './connection';
import { McpQueryError } from './errors';
import type { Emit } from './events';
import type { InterestRegistry } from './interest';
import { DEFAULTS, type McpCacheSyncOptions } from './options';
import { Retention } from './retention';
import { Session } from './session';

export interface ConnectionParts {
  emit: Emit;
  interest: InterestRegistry;
  bridge: CacheBridge;
  backoff: BackoffOptions;
  timeoutMs: number;
  lingerMs: number;
}

/**
 * The connection of an McpCacheSync: where its client comes from (made
 * here from a URL or transport, or passed in), and the session each
 * connected client lives in — wired to the interest registry (what to
 * subscribe to) and the cache bridge (what to re-read).
 */
export function createConnection(
  options: McpCacheSyncOptions,
  { emit, interest, bridge, backoff, timeoutMs, lingerMs }: ConnectionParts,
): Connection<Session> {
  const { client, transport, url, serverRequests: requests } = options;
  const sources = [url, client, transport].filter((s) => s !== undefined).length;
  if (sources !== 1) {
    throw new McpQueryError(
      'INVALID_OPTIONS',
      `McpCacheSync needs one of url, client or transport (got ${sources})`,
    );
  }
  const retention = new Retention();
  const host = {
    emit,
    desire: () => interest.desire(),
    wants: (uri: string) => interest.wants(uri),
    wantsList: interest.wantsList.bind(interest),
    changed: bridge.changed.bind(bridge),
    listChanged: bridge.listChanged.bind(bridge),
    coverageChanged: bridge.coverageChanged.bind(bridge),
    lost: (lost: Session, reason: string, end: boolean) => connection.lost(lost, reason, end),
  };
  const connection: Connection<Session> = new Connection<Session>({
    label: client ? 'the MCP client passed in' : transport ? 'the transport' : String(url),
    source: client
      ? borrowedSource(client)
      : ownedSource({
          target: transport ? { transport } : { url: url as string | URL, fetch: options.fetch },
          clientInfo: options.clientInfo ?? DEFAULTS.clientInfo,
          protocol: options.protocol ?? 'auto',
          backoff,
          authProvider: options.authProvider,
          capabilities: requests?.capabilities() ?? {},
          install: (fresh) => requests?.install(fresh),
        }),
    backoff,
    requestTimeoutMs: timeoutMs,
    emit,
    open: (fresh, observed) => {
      const { reconnects, lastLoss } = connection.state;
      const history = {
        reopenCount: reconnects,
        lastCloseReason: lastLoss === undefined ? undefined : ('remote' as const),
      };
      const ackTimeoutMs = options.ackTimeoutMs ?? DEFAULTS.ackTimeoutMs;
      const settings = { backoff, ackTimeoutMs, requestTimeoutMs: timeoutMs, retention };
      return new Session(
        fresh,
        host,
        { ...settings, releaseAfterMs: 10 * lingerMs, history },
        observed,
      );
    },
  });
  return connection;
}
