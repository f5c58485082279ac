export interface BackoffOptions {
  /** Upper bound of the first delay. */
  initialDelayMs: number;
  /** Cap of every delay. */
  maxDelayMs: number;
}

export const defaultBackoff: BackoffOptions = { initialDelayMs: 500, maxDelayMs: 15_000 };

/**
 * Capped exponential backoff with full jitter: a uniformly random delay in
 * [0, min(max, initial·2^attempt)]. Full jitter spreads the reconnects of many
 * tabs after a server restart instead of synchronising them into waves.
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}
