import { McpQueryError } from './errors';

/** The longest delay a timer takes: past it, `setTimeout` fires at once. */
export const TIMER_MAX_MS = 2 ** 31 - 1;

/** Why `ms`, given, is not a number of milliseconds from `least` a timer can take, or nothing. */
export function invalidDuration(
  name: string,
  ms: unknown,
  least: number,
): McpQueryError | undefined {
  if (ms !== undefined && !(typeof ms === 'number' && ms >= least && ms <= TIMER_MAX_MS)) {
    return new McpQueryError(
      'INVALID_OPTIONS',
      `${name} must be from ${least} to ${TIMER_MAX_MS} ms, got ${String(ms)}`,
    );
  }
}
