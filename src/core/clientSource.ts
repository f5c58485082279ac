import {
  Client,
  type ClientCapabilities,
  type Implementation,
  type OAuthClientProvider,
  type Transport,
} from '@modelcontextprotocol/client';
import type { BackoffOptions } from './backoff';
import type { Clock } from './clock';
import { McpQueryError } from './errors';
import { invalidUrl, resolveUrl } from './failure';
import { createHttpTransport, type TransportObserver } from './httpTransport';

export type ProtocolChoice = 'auto' | '2026-07-28' | 'legacy';

/**
 * Runs on a fresh client before its first request: opens the session that
 * will own it, and returns what the HTTP transport should report to (when
 * the transport is ours to observe).
 */
export type Prepare = (client: Client, observed: boolean) => TransportObserver;

/**
 * Where connected clients come from. The connection does not care whether
 * the client is ours (made from a URL or a transport factory, closed when
 * done) or the host's (borrowed, never closed, never reconnected by us).
 */
export interface ClientSource {
  /** Whether a lost client can be replaced by connecting again. */
  readonly reconnectable: boolean;
  connect(prepare: Prepare, timeoutMs: number): Promise<Client>;
  /** Let go of a client this source gave out; `endSession` also ends a 2025 session on the server. */
  release(client: Client, endSession: boolean): Promise<void>;
}

/**
 * `closed` runs when the client's transport closes. Chained, not replaced: a client passed in
 * may carry the host's own handler. Returns what puts the previous handler back.
 */
export function watchClose(client: Client, closed: () => void): () => void {
  const previous = client.onclose;
  const onclose = () => {
    previous?.();
    closed();
  };
  client.onclose = onclose;
  return () => {
    if (client.onclose === onclose) client.onclose = previous;
  };
}

const negotiation = (protocol: ProtocolChoice) =>
  protocol === 'auto'
    ? { mode: 'auto' as const }
    : protocol === 'legacy'
      ? { mode: 'legacy' as const }
      : { mode: { pin: protocol } };

export interface OwnedSourceOptions {
  /** Streamable HTTP endpoint, or a factory of a fresh transport per connection. */
  target: { url: string | URL; fetch?: typeof fetch | undefined } | { transport: () => Transport };
  clientInfo: Implementation;
  protocol: ProtocolChoice;
  /** OAuth for `url` (a transport from a factory carries its own); it may refuse the URL. */
  authProvider?: (OAuthClientProvider & { refuse?(url: URL): Error | undefined }) | undefined;
  /** Delays between attempts to resume a stream that ended. */
  backoff: BackoffOptions;
  /** What the client declares it can do, and the handlers behind it. */
  capabilities: ClientCapabilities;
  install(client: Client): void;
  clock: Clock;
}

/** Clients this package makes and closes: one per connection. */
export function ownedSource(options: OwnedSourceOptions): ClientSource {
  const { target } = options;
  return {
    reconnectable: true,
    async connect(prepare, timeoutMs) {
      if ('url' in target) {
        const invalid =
          invalidUrl(target.url) ?? options.authProvider?.refuse?.(resolveUrl(target.url));
        if (invalid) throw invalid;
      }
      const client = new Client(options.clientInfo, {
        versionNegotiation: negotiation(options.protocol),
        capabilities: options.capabilities,
      });
      options.install(client);
      const observed = 'url' in target;
      const observer = prepare(client, observed);
      const transport =
        'url' in target
          ? createHttpTransport(resolveUrl(target.url), observer, {
              fetch: target.fetch,
              authProvider: options.authProvider,
              backoff: options.backoff,
              clock: options.clock,
            })
          : target.transport();
      try {
        await client.connect(transport, { timeout: timeoutMs });
      } catch (error) {
        // A handshake that got as far as a session ends it; nothing stays open.
        await release(client, true);
        throw error;
      }
      return client;
    },
    release,
  };
}

async function release(client: Client, endSession: boolean): Promise<void> {
  const transport = client.transport as { terminateSession?: () => Promise<void> } | undefined;
  if (endSession && client.getProtocolEra() !== 'modern' && transport?.terminateSession) {
    await transport.terminateSession().catch(() => {});
  }
  await client.close().catch(() => {});
}

/** A client the host connected and owns: used as is, never closed. */
export function borrowedSource(client: Client): ClientSource {
  return {
    reconnectable: false,
    async connect(prepare) {
      if (client.getProtocolEra() === undefined) {
        throw new McpQueryError(
          'NOT_CONNECTED',
          'the client passed in is not connected: call client.connect(transport) first',
        );
      }
      prepare(client, false);
      return client;
    },
    async release() {},
  };
}
