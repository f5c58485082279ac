export type { McpEventTone as Tone } from './mcp';

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
