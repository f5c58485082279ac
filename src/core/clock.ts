/**
 * The one source of time and of randomness in the package: injected, so
 * that tests can drive both (`McpCacheSyncOptions.clock`), and nothing else
 * calls `Date.now()` or `Math.random()`.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Uniform in [0, 1): backoff jitter, ids. */
  random(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  random: () => Math.random(),
};
