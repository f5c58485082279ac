import type { ServerCapabilities } from '@modelcontextprotocol/client';
import type { ConnectionPhase, Era, StreamStatus } from './events';
import type { NotifiedList } from './lists';

export interface ResourceDiagnostics {
  uri: string;
  /** Observers holding this URI now (0 while lingering). */
  refs: number;
  /** We want notifications for it (held or lingering). */
  subscribed: boolean;
  /** The server is covering it right now (acknowledged / subscribed with a live stream). */
  acknowledged: boolean;
  /** Why the server is not covering it, if it declined. */
  declined: string | undefined;
  notifications: number;
  lastNotificationAt: number | undefined;
  reads: number;
  lastReadAt: number | undefined;
  lastError: string | undefined;
  lastErrorAt: number | undefined;
  /**
   * Reads that found new content although the URI was covered throughout
   * and no notification had arrived: the server changed it without telling
   * us ("subscribed but silent").
   */
  silentChanges: number;
}

export interface UnmatchedNotification {
  uri: string;
  count: number;
  lastAt: number;
  /** A subscribed URI that differs from this one only in spelling, if any. */
  nearest: string | undefined;
}

export type CheckId = 'capabilities' | 'uri-match' | 'stream' | 'silent';

export interface DiagnosticCheck {
  id: CheckId;
  ok: boolean;
  title: string;
  detail: string;
}

export interface McpDiagnostics {
  /** The same status `useMcp()` shows. */
  status: ConnectionPhase;
  era: Era | undefined;
  protocolVersion: string | undefined;
  capabilities: { subscribe: boolean; listChanged: boolean } | undefined;
  /** The 2025 path (resources/subscribe) is in use: do not retry listen against this endpoint. */
  legacy: boolean;
  stream: StreamStatus;
  /** The resource list's `list_changed` notifications are being delivered. */
  listAcknowledged: boolean;
  /** Per list: its `list_changed` notifications are being delivered. */
  lists: Record<NotifiedList, boolean>;
  /** Every wanted URI (held or lingering), sorted. */
  resources: ResourceDiagnostics[];
  /**
   * URIs still subscribed on the server although nobody wants them: kept by
   * retention in case they come back, let go once things are quiet.
   */
  retained: number;
  unmatched: UnmatchedNotification[];
  counters: {
    updated: number;
    listChanged: number;
    toolsListChanged: number;
    promptsListChanged: number;
    unmatched: number;
    malformed: number;
    reads: number;
    readErrors: number;
  };
  lastMalformed: { method: string; reason: string; at: number } | undefined;
  /** With tab sharing: whether this tab holds the connection, how many tabs share it, leader changes. */
  tabs: { leader: boolean; tabs: number; handovers: number } | undefined;
  /**
   * With `keepAlive`: the latest keep-alive's round trip (ms), when it was, and the pings
   * that failed (each made the connection reconnect). Undefined until the first ping.
   */
  health?:
    | {
        rttMs: number | undefined;
        lastPingAt: number;
        failures: number;
        lastError: string | undefined;
      }
    | undefined;
  checks: DiagnosticCheck[];
}

/** What the first check asks of the server's declared capabilities. */
export function resourceCapabilities(
  declared: ServerCapabilities | undefined,
): McpDiagnostics['capabilities'] {
  if (!declared) return undefined;
  const { subscribe, listChanged } = declared.resources ?? {};
  return { subscribe: subscribe === true, listChanged: listChanged === true };
}

/** The four field checks, from a snapshot (pure). */
export function checks(snapshot: Omit<McpDiagnostics, 'checks'>): DiagnosticCheck[] {
  const { capabilities, stream, resources, unmatched } = snapshot;
  const missing = capabilities
    ? [
        !capabilities.subscribe && 'resources.subscribe',
        !capabilities.listChanged && 'resources.listChanged',
      ].filter(Boolean)
    : [];
  const silent = resources.filter((resource) => resource.silentChanges > 0);
  return [
    {
      id: 'capabilities',
      ok: capabilities !== undefined && missing.length === 0,
      title: 'Server declares resource notifications',
      detail: !capabilities
        ? 'not connected yet'
        : missing.length === 0
          ? `resources.subscribe and resources.listChanged declared (${eraName(snapshot)})`
          : `not declared: ${missing.join(', ')} — those changes are never pushed; data follows its TTL`,
    },
    {
      id: 'uri-match',
      ok: unmatched.length === 0,
      title: 'Notifications name exactly the subscribed URIs',
      detail:
        unmatched.length === 0
          ? 'every update matched a subscribed URI'
          : unmatched
              .slice(0, 3)
              .map((entry) =>
                entry.nearest
                  ? `server sent "${entry.uri}", you subscribed "${entry.nearest}" (URIs must match exactly)`
                  : `server sent "${entry.uri}" ×${entry.count}, which nobody subscribed`,
              )
              .join('; '),
    },
    {
      id: 'stream',
      ok: stream.state === 'open' || stream.state === 'idle',
      title: 'The change stream is alive',
      detail: streamDetail(stream),
    },
    {
      id: 'silent',
      ok: silent.length === 0,
      title: 'Subscribed resources are not silent',
      detail:
        silent.length === 0
          ? 'no acknowledged resource changed without a notification'
          : silent
              .slice(0, 3)
              .map(
                (resource) =>
                  `${resource.uri} changed ${resource.silentChanges}× with no notification (last notification: ${
                    resource.lastNotificationAt
                      ? new Date(resource.lastNotificationAt).toISOString()
                      : 'never'
                  }) — is the server publishing on another process or instance?`,
              )
              .join('; '),
    },
  ];
}

function eraName({ era, protocolVersion }: { era: Era | undefined; protocolVersion?: string }) {
  return era === 'legacy'
    ? `2025 era: resources/subscribe, protocol ${protocolVersion ?? '?'}`
    : '2026-07-28 era: subscriptions/listen';
}

function streamDetail(stream: StreamStatus): string {
  const since = new Date(stream.since).toISOString();
  const parts = [`${stream.kind} stream ${stream.state} since ${since}`];
  if (stream.reopenCount > 0) parts.push(`reopened ${stream.reopenCount}×`);
  if (stream.lastCloseReason) parts.push(`last close: ${stream.lastCloseReason}`);
  if (stream.nextRetryAt) parts.push(`next attempt ${new Date(stream.nextRetryAt).toISOString()}`);
  if (stream.lastError) parts.push(`last error: ${stream.lastError}`);
  if (stream.note) parts.push(stream.note);
  return parts.join(', ');
}

/** A run of percent-escapes: matched in one pass, nothing to backtrack into. */
const ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * A URI with the usual mistakes forgiven (case, trailing slashes,
 * percent-encoding, `+` for a space): two URIs with the same loose form are
 * near-misses. Each run of escapes is decoded on its own, so a stray `%` or a
 * broken UTF-8 sequence leaves only its own run as spelled. Linear — a server
 * controls these strings, so no pattern here may backtrack.
 */
export function looseForm(uri: string): string {
  // `+` first, as form decoding does: `%2B` is how a plus is told from a space, and stays one.
  const decoded = uri.replaceAll('+', ' ').replace(ESCAPES, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run; // keep the raw spelling
    }
  });
  let end = decoded.length;
  while (end > 0 && decoded.charCodeAt(end - 1) === 47 /* / */) end -= 1;
  return decoded.slice(0, end).toLowerCase();
}
