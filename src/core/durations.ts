import type { McpQueryError } from './errors';
import type { McpCacheSyncOptions } from './options';
import { invalidDuration } from './timerMs';

/**
 * Why the durations given (every option named `…Ms`, `reconnect`'s too) make no sense (rule 8),
 * or nothing. A tab with such options joins no sharing group (mcpCacheSync.ts): as a follower it
 * would connect nothing of its own, show the leader's state and send through it; as the leader,
 * end every tab's connection in error.
 */
export function invalidDurations(options: McpCacheSyncOptions): McpQueryError | undefined {
  return invalidDurationsOf({ ...options, ...options.reconnect });
}

/**
 * Why one of the durations among `values` (each entry named `…Ms`) makes no sense, or nothing:
 * each is a number of milliseconds a timer can take; a timeout (`…timeout…Ms`, any case) is more
 * than nothing; the reconnect cap is at least 100 ms, or a server that refuses at once would be
 * asked again in a tight loop (full jitter draws each delay from 0 up to the cap), and so is a
 * silence probe that is on. The provider's
 * options, and a tool call's own `timeoutMs` and `maxTotalTimeoutMs` (tools.ts).
 */
export function invalidDurationsOf(values: { [name: string]: unknown }): McpQueryError | undefined {
  for (const [name, ms] of Object.entries<unknown>(values)) {
    // A silence probe (0: off) of less would read every quiet resource every few ms.
    const least =
      name === 'maxDelayMs' || (name === 'silenceProbeMs' && ms !== 0)
        ? 100
        : /timeout/i.test(name)
          ? 1
          : 0;
    const invalid = /Ms$/.test(name) ? invalidDuration(name, ms, least) : undefined;
    if (invalid) return invalid;
  }
}
