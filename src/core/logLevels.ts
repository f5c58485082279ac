import type { LoggingLevel } from '@modelcontextprotocol/client';

/** The syslog severities MCP logging uses, least severe first. */
export const LOG_LEVELS: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/** The most verbose of the levels asked for (what the server is told), if any. */
export function mostVerbose(levels: Iterable<LoggingLevel | undefined>): LoggingLevel | undefined {
  let most: LoggingLevel | undefined;
  for (const level of levels) {
    if (level !== undefined && (most === undefined || severity(level) < severity(most))) {
      most = level;
    }
  }
  return most;
}

/** Where a level stands, least severe first (-1: not a level). */
export function severity(level: unknown): number {
  return LOG_LEVELS.indexOf(level as LoggingLevel);
}
