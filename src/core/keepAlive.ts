import type { Client } from '@modelcontextprotocol/client';
import type { Clock } from './clock';
import { errorMessage } from './errors';
import type { Emit, McpEventInput } from './events';
import { delay, whileAlive } from './lifetime';
import { invalidDuration } from './timerMs';

/** What a session's keep-alive is given when the connection opens the session. */
export interface KeepAliveContext {
  /** How long a ping may take before the connection counts as dead. */
  timeoutMs: number;
  emit: Emit;
  clock: Clock;
}

/** One session's keep-alive: `emit` is what the session emits through (what it hears counts). */
export interface SessionKeepAlive {
  emit: Emit;
  start(session: { client: Client; signal: AbortSignal }, lost: (reason: string) => void): void;
}

/** The `keepAlive` option of McpCacheSync / McpProvider: `keepAlive({ pingIntervalMs })`. */
export interface KeepAlive {
  session(context: KeepAliveContext): SessionKeepAlive;
}

/** Events that say the server is there (it sent them). */
const HEARD = new Set<McpEventInput['type']>(['updated', 'list_changed', 'log', 'malformed']);

/**
 * An optional keep-alive for `<McpProvider keepAlive>`: after `pingIntervalMs` with nothing
 * heard from the server, one ping — `ping` on 2025; on 2026-07-28, which has no ping (a
 * stateless server has no connection to keep), `server/discover`, the one request every such
 * server answers without doing anything. Its round trip is an event (the diagnostics show it);
 * no answer within `requestTimeoutMs` ends the session like any dead connection, and the
 * connection reconnects. An option object, not a number, so an app without it carries none
 * of this code.
 */
export function keepAlive({ pingIntervalMs: intervalMs }: { pingIntervalMs: number }): KeepAlive {
  // Not a period a timer can take (NaN would ping in a tight loop): a clear error at once.
  const invalid = invalidDuration('pingIntervalMs', intervalMs ?? Number.NaN, 1);
  if (invalid) throw invalid;
  return { session: (context) => sessionKeepAlive(intervalMs, context) };
}

function sessionKeepAlive(
  intervalMs: number,
  { timeoutMs, emit, clock }: KeepAliveContext,
): SessionKeepAlive {
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
