import type { Client } from '@modelcontextprotocol/client';
import { clip } from './errors';
import type { McpEventOf } from './events';
import { listChangedMethod, NOTIFIED_LISTS, type NotifiedList } from './lists';
import { severity } from './logLevels';

export type LogEntry = Omit<McpEventOf<'log'>, 'at' | 'type'>;

export interface NotificationSink {
  updated(uri: string): void;
  listChanged(list: NotifiedList): void;
  /** A server's log message, checked and bounded. */
  message(entry: LogEntry): void;
  /** A notification we could not use: missing or non-string uri, unknown method. */
  malformed(method: string, reason: string): void;
}

export const UPDATED = 'notifications/resources/updated';
const MESSAGE = 'notifications/message';
/** The most characters of a log message's data kept (as JSON). */
const MAX_LOG_DATA = 8000;

/** Spec notifications that are simply not ours to handle (not malformed). */
const KNOWN_METHODS = new Set([
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'notifications/tasks/status',
  'notifications/elicitation/complete',
  'notifications/subscriptions/acknowledged',
]);

/**
 * Accepts any params: validation is ours, so a malformed notification is
 * counted and shown in diagnostics instead of disappearing into the SDK's
 * error channel.
 */
const anyParams = {
  '~standard': {
    version: 1 as const,
    vendor: 'mcp-react-query',
    validate: (value: unknown) => ({ value }),
  },
};

const installed = new WeakMap<Client, { sink: NotificationSink }>();

/**
 * Installs this package's one dispatcher on a client (again: swaps its sink,
 * which makes the previous session's sink unreachable). The SDK keeps one
 * handler per method, so there must be exactly one per client, installed
 * before any subscribe or listen request is sent (docs/design.md, rule 1: an
 * update arriving right after the acknowledgement finds its handler).
 */
export function installDispatcher(client: Client, sink: NotificationSink): void {
  const existing = installed.get(client);
  if (existing) {
    existing.sink = sink;
    return;
  }
  const route = { sink };
  installed.set(client, route);
  client.setNotificationHandler(UPDATED, { params: anyParams }, (params) => {
    const uri = (params as { uri?: unknown } | undefined)?.uri;
    if (typeof uri !== 'string' || uri.length === 0) {
      route.sink.malformed(UPDATED, uri === undefined ? 'no uri' : `uri is ${describe(uri)}`);
      return;
    }
    route.sink.updated(uri);
  });
  client.setNotificationHandler(MESSAGE, { params: anyParams }, (params) => {
    const { level, logger, data } = (params ?? {}) as Record<string, unknown>;
    if (severity(level) < 0) {
      route.sink.malformed(
        MESSAGE,
        level === undefined ? 'no level' : `level is ${describe(level)}`,
      );
      return;
    }
    const json = JSON.stringify(data) ?? '';
    route.sink.message({
      level: level as LogEntry['level'],
      ...(typeof logger === 'string' && { logger: clip(logger, 200) }),
      data: json.length > MAX_LOG_DATA ? clip(json, MAX_LOG_DATA) : data,
    });
  });
  for (const list of NOTIFIED_LISTS) {
    client.setNotificationHandler(listChangedMethod[list], { params: anyParams }, () => {
      route.sink.listChanged(list);
    });
  }
  const previous = client.fallbackNotificationHandler;
  client.fallbackNotificationHandler = async (notification) => {
    const method = String(notification.method);
    if (!KNOWN_METHODS.has(method)) route.sink.malformed(method, 'unknown method');
    await previous?.(notification);
  };
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value ? JSON.stringify(clip(value, 40)) : 'an empty string';
  if (value === null) return 'null';
  return `a ${typeof value}`;
}
