import type { McpEvent } from './mcp';

export type Tone = 'info' | 'ok' | 'warn' | 'error';

export function clockTime(at: number): string {
  const date = new Date(at);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/** "0.4 s ago", "3 min ago", or "never". */
export function ago(at: number | undefined, now: number): string {
  if (at === undefined) return 'never';
  const seconds = Math.max(0, now - at) / 1000;
  if (seconds < 10) return `${seconds.toFixed(1)} s ago`;
  if (seconds < 90) return `${Math.round(seconds)} s ago`;
  return `${Math.round(seconds / 60)} min ago`;
}

export function describeEvent(event: McpEvent): { label: string; detail: string; tone: Tone } {
  switch (event.type) {
    case 'status':
      return {
        label: 'status',
        detail: event.status,
        tone: event.status === 'ready' ? 'ok' : event.status === 'error' ? 'error' : 'warn',
      };
    case 'updated':
      return {
        label: 'updated',
        detail: event.matched ? event.uri : `${event.uri} (unmatched: nobody subscribed)`,
        tone: event.matched ? 'info' : 'warn',
      };
    case 'list_changed':
      return { label: 'list_changed', detail: '', tone: 'info' };
    case 'malformed':
      return { label: 'malformed', detail: `${event.method}: ${event.reason}`, tone: 'error' };
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
    case 'stream':
      return {
        label: `stream ${event.state}`,
        detail: `${event.kind}${event.reason ? ` (closed: ${event.reason})` : ''}`,
        tone: event.state === 'open' ? 'ok' : event.state === 'reopening' ? 'warn' : 'info',
      };
    case 'coverage': {
      const parts = [
        event.acknowledged.length > 0 && `acknowledged ${event.acknowledged.join(', ')}`,
        event.lost.length > 0 && `lost ${event.lost.join(', ')}`,
        `lists covered: ${event.lists.length > 0 ? event.lists.join(', ') : 'none'}`,
      ].filter(Boolean);
      return { label: 'coverage', detail: parts.join('; '), tone: 'info' };
    }
  }
}
