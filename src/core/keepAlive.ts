import type { Client } from '@modelcontextprotocol/client';
import type { Clock } from './clock';
import { errorMessage } from './errors';
import type { Emit, McpEventInput } from './events';
import { delay, whileAlive } from './lifetime';

export interface KeepAliveOptions {
  /** Ping when nothing was heard from the server for this long. */
  intervalMs: number;
  /** How long a ping may take before the connection counts as dead. */
  timeoutMs: number;
  emit: Emit;
  clock: Clock;
}

/** Events that say the server is there (it sent them). */
const HEARD = new Set<McpEventInput['type']>(['updated', 'list_changed', 'log', 'malformed']);

/**
 * The optional keep-alive of one session (`pingIntervalMs`): after `intervalMs` with nothing
 * heard from the server, one ping — `ping` on 2025; on 2026-07-28, which has no ping (a
 * stateless server has no connection to keep), `server/discover`, the one request every such
 * server answers without doing anything. Its round trip is an event (the diagnostics show it);
 * no answer within `timeoutMs` ends the session like any dead connection, and the connection
 * reconnects. `emit` is what the session emits through, so what it hears counts as alive.
 */
export function keepAlive(options: KeepAliveOptions): {
  emit: Emit;
  start(session: { client: Client; signal: AbortSignal }, lost: (reason: string) => void): void;
} {
  const { intervalMs, timeoutMs, emit, clock } = options;
  let heardAt = clock.now();
  return {
    emit: (event) => {
      if (HEARD.has(event.type)) heardAt = clock.now();
      emit(event);
    },
    start({ client, signal }, lost) {
      const fail = whileAlive(signal, (error: unknown) => {
        emit({ type: 'ping', error: errorMessage(error) });
        lost(`no answer to a ping: ${errorMessage(error)}`);
      });
      const next = (ms: number) => delay(signal, ms, () => void beat());
      const beat = async () => {
        const quiet = clock.now() - heardAt;
        // Not connected yet, or the server spoke since: nothing to ask.
        if (quiet < intervalMs || !client.getProtocolEra()) {
          next(Math.max(intervalMs - quiet, 1));
          return;
        }
        const sent = clock.now();
        const request = { timeout: timeoutMs, signal };
        try {
          await (client.getProtocolEra() === 'modern'
            ? client.discover(request)
            : client.ping(request));
        } catch (error) {
          fail(error);
          return;
        }
        if (signal.aborted) return;
        heardAt = clock.now();
        emit({ type: 'ping', rttMs: heardAt - sent });
        next(intervalMs);
      };
      next(intervalMs);
    },
  };
}
