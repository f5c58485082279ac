import type { Client } from '@modelcontextprotocol/client';
import type { McpEventInput } from './events';
import { listChangedMethod, NOTIFIED_LISTS, type NotifiedList } from './lists';
import { notificationParser } from './requests';
import { anything } from './shapes';

export interface NotificationSink {
  updated(uri: string): void;
  listChanged(list: NotifiedList): void;
  /** A notification a registered parser made an event of (a log message, a task's status). */
  event(event: McpEventInput): void;
  /** A notification we could not use: missing or non-string uri, unknown method. */
  malformed(method: string, reason: string): void;
}

export const UPDATED = 'notifications/resources/updated';

/**
 * Spec notifications that are not ours to handle (not malformed) unless a module registered a
 * parser (`defineNotification`: `notifications/message` with `useServerLog`, task status).
 */
const KNOWN_METHODS = new Set([
  'notifications/cancelled',
  'notifications/progress',
  'notifications/message',
  'notifications/roots/list_changed',
  'notifications/tasks/status',
  'notifications/elicitation/complete',
  'notifications/subscriptions/acknowledged',
]);

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
  // Any params are accepted: validation is ours, so a malformed notification is counted and
  // shown in diagnostics instead of disappearing into the SDK's error channel.
  client.setNotificationHandler(UPDATED, { params: anything }, (params) => {
    const uri = (params as { uri?: unknown } | undefined)?.uri;
    if (typeof uri !== 'string' || uri.length === 0) {
      route.sink.malformed(UPDATED, uri === undefined ? 'no uri' : `uri is ${describe(uri)}`);
      return;
    }
    route.sink.updated(uri);
  });
  for (const list of NOTIFIED_LISTS) {
    client.setNotificationHandler(listChangedMethod[list], { params: anything }, () => {
      route.sink.listChanged(list);
    });
  }
  const previous = client.fallbackNotificationHandler;
  client.fallbackNotificationHandler = async (notification) => {
    const method = String(notification.method);
    // Looked up as each arrives: a module loaded after this client connected still gets its own.
    const parse = notificationParser(method);
    if (parse) {
      const params = notification.params;
      const parsed = parse(typeof params === 'object' && params !== null ? params : {});
      if (typeof parsed === 'string') route.sink.malformed(method, parsed);
      else route.sink.event(parsed);
    } else if (!KNOWN_METHODS.has(method)) route.sink.malformed(method, 'unknown method');
    await previous?.(notification);
  };
}

function describe(value: unknown): string {
  if (typeof value === 'string') return 'an empty string';
  if (value === null) return 'null';
  return `a ${typeof value}`;
}
