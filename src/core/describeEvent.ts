import type { McpEvent } from './events';

export type McpEventTone = 'info' | 'ok' | 'warn' | 'error';

/** One event as a log line: what happened, the detail, and how alarming it is. */
export function describeEvent(event: McpEvent): {
  label: string;
  detail: string;
  tone: McpEventTone;
} {
  switch (event.type) {
    case 'connection': {
      const { phase, error, era } = event.state;
      return {
        label: `connection ${phase}`,
        detail: error?.message ?? era ?? '',
        tone:
          phase === 'ready'
            ? 'ok'
            : phase === 'error' || phase === 'unauthorized'
              ? 'error'
              : 'info',
      };
    }
    case 'status':
      return {
        label: 'status',
        detail: event.status,
        tone: event.status === 'ready' ? 'ok' : event.status === 'error' ? 'error' : 'warn',
      };
    case 'stream': {
      const { state, kind, lastCloseReason, lastError } = event.status;
      return {
        label: `stream ${state}`,
        detail: [kind, lastCloseReason && `last close: ${lastCloseReason}`, lastError]
          .filter(Boolean)
          .join(', '),
        tone: state === 'open' ? 'ok' : state === 'reopening' ? 'warn' : 'info',
      };
    }
    case 'interest':
      return {
        label: event.wanted ? 'held' : 'released',
        detail: event.wanted ? `${event.uri} (${event.refs})` : event.uri,
        tone: 'info',
      };
    case 'coverage': {
      const parts = [
        event.acknowledged.length > 0 && `acknowledged ${event.acknowledged.join(', ')}`,
        event.lost.length > 0 && `lost ${event.lost.join(', ')}`,
        `lists covered: ${event.lists.length > 0 ? event.lists.join(', ') : 'none'}`,
      ].filter(Boolean);
      return { label: 'coverage', detail: parts.join('; '), tone: 'info' };
    }
    case 'declined':
      return {
        label: 'declined',
        detail: event.changes
          .map(([uri, reason]) => (reason === null ? `${uri}: covered again` : `${uri}: ${reason}`))
          .join('; '),
        tone: event.changes.some(([, reason]) => reason !== null) ? 'warn' : 'info',
      };
    case 'updated':
      return {
        label: 'updated',
        detail: event.matched ? event.uri : `${event.uri} (unmatched: nobody subscribed)`,
        tone: event.matched ? 'info' : 'warn',
      };
    case 'list_changed':
      return { label: 'list_changed', detail: event.list, tone: 'info' };
    case 'tabs':
      return {
        label: event.leader ? 'tabs: leader' : 'tabs: follower',
        detail: `${event.tabs} tab${event.tabs === 1 ? '' : 's'} share the connection; ${event.handovers} handover${event.handovers === 1 ? '' : 's'}`,
        tone: 'info',
      };
    case 'malformed':
      return { label: 'malformed', detail: `${event.method}: ${event.reason}`, tone: 'error' };
    case 'task':
      return { label: 'task', detail: `${event.taskId} ${event.status}`, tone: 'info' };
    case 'ping':
      return event.error === undefined
        ? { label: 'ping', detail: `${event.rttMs} ms`, tone: 'ok' }
        : { label: 'ping failed', detail: event.error, tone: 'error' };
    case 'log': {
      const text = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
      return {
        label: `log ${event.level}`,
        detail: event.logger ? `${event.logger}: ${text}` : text,
        tone: ['debug', 'info', 'notice'].includes(event.level)
          ? 'info'
          : event.level === 'warning'
            ? 'warn'
            : 'error',
      };
    }
    case 'read':
      return {
        label: `read ${event.phase}`,
        detail: event.error ? `${event.uri} — ${event.error}` : event.uri,
        tone: event.phase === 'error' ? 'error' : event.phase === 'success' ? 'ok' : 'info',
      };
    case 'list':
      return {
        label: `${event.list} list ${event.phase}`,
        detail: event.error ?? (event.count === undefined ? '' : `${event.count} entries`),
        tone: event.phase === 'error' ? 'error' : event.phase === 'success' ? 'ok' : 'info',
      };
  }
}
