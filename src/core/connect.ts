import type { LoggingLevel } from '@modelcontextprotocol/client';
import { type BackoffOptions, defaultBackoff } from './backoff';
import { borrowedSource, ownedSource } from './clientSource';
import type { Clock } from './clock';
import { Connection } from './connection';
import { invalidDurations } from './durations';
import { McpQueryError } from './errors';
import type { Emit } from './events';
import { DEFAULTS, type McpCacheSyncOptions } from './options';
import { Retention } from './retention';
import { type ChangeTarget, Session, type Wanted } from './session';

export interface ConnectionParts {
  emit: Emit;
  /** The log level asked for now, told to each new session. */
  logLevel(): LoggingLevel | undefined;
  /** What to subscribe to (the interest registry). */
  interest: Wanted;
  /** What to re-read (the cache bridge). */
  bridge: ChangeTarget;
  clock: Clock;
}

/**
 * The connection of an McpCacheSync: where its client comes from (made
 * here from a URL or transport, or passed in), and the session each
 * connected client lives in, which reports straight to the interest
 * registry (what to subscribe to) and the cache bridge (what to re-read).
 */
export function createConnection(
  options: McpCacheSyncOptions,
  { emit, interest, bridge, clock, logLevel }: ConnectionParts,
): Connection<Session> {
  const { client, transport, url, serverRequests: requests } = options;
  const sources = [url, client, transport].filter((s) => s !== undefined).length;
  if (sources !== 1) {
    throw new McpQueryError(
      'INVALID_OPTIONS',
      `McpCacheSync needs one of url, client or transport (got ${sources})`,
    );
  }
  // Durations no timer can take end the connection in `error` before anything is sent.
  const invalid = invalidDurations(options);
  const backoff: BackoffOptions = { ...defaultBackoff, ...options.reconnect };
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
  const lingerMs = options.lingerMs ?? DEFAULTS.lingerMs;
  const retention = new Retention();
  const source = client
    ? borrowedSource(client)
    : ownedSource({
        target: transport ? { transport } : { url: url as string | URL, fetch: options.fetch },
        clientInfo: options.clientInfo ?? DEFAULTS.clientInfo,
        protocol: options.protocol ?? 'auto',
        backoff,
        authProvider: options.authProvider,
        capabilities: requests?.capabilities() ?? {},
        install: (fresh) => requests?.install(fresh),
        clock,
      });
  const connection: Connection<Session> = new Connection<Session>({
    label: client ? 'the MCP client passed in' : transport ? 'the transport' : String(url),
    source: invalid ? { ...source, connect: () => Promise.reject(invalid) } : source,
    backoff,
    requestTimeoutMs,
    emit,
    clock,
    open: (fresh, observed, control) => {
      const { reconnects, lastLoss } = connection.state;
      const alive = options.keepAlive?.session({ timeoutMs: requestTimeoutMs, emit, clock });
      const session = new Session(
        fresh,
        { emit: alive?.emit ?? emit, wanted: interest, changes: bridge, logLevel, ...control },
        {
          backoff,
          ackTimeoutMs: options.ackTimeoutMs ?? DEFAULTS.ackTimeoutMs,
          requestTimeoutMs,
          retention,
          releaseAfterMs: 10 * lingerMs,
          history: {
            reopenCount: reconnects,
            lastCloseReason: lastLoss === undefined ? undefined : 'remote',
          },
          clock,
        },
        observed,
      );
      alive?.start(session, (reason) => control.lost(reason, true));
      return session;
    },
  });
  return connection;
}
