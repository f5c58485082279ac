import type { QueryKey } from '@tanstack/query-core';
import type { McpEvent } from '../core/events';
import type { SyncInternals } from '../core/internals';
import type { ChannelLike, LocksLike, TabMessage } from './protocol';

export interface Settings {
  locks: LocksLike;
  open(name: string): ChannelLike;
  livenessMs: number;
}

/** What a tab's two roles share: who it is, its McpCacheSync and the group's channel. */
export interface GroupLink {
  /** This tab's id in the group. */
  readonly tab: string;
  /** The group's name: its channel, and the prefix of its locks. */
  readonly name: string;
  /** The McpCacheSync, for `callTool`. */
  readonly owner: object;
  readonly internals: SyncInternals;
  readonly settings: Settings;
  send(message: TabMessage): void;
}

/** Events that describe the leader's connection (what every tab of the group shows). */
export const FORWARDED = new Set<McpEvent['type']>([
  'connection',
  'status',
  'stream',
  'coverage',
  'declined',
  'updated',
  'list_changed',
  'malformed',
  'read',
  'list',
]);

/** Whether `key` is an MCP resource or list key of this group's scope. */
export function isGroupKey(internals: SyncInternals, key: unknown): key is QueryKey {
  if (!Array.isArray(key)) return false;
  const { keys } = internals;
  return keys.uriOf(key) !== undefined || keys.listOf(key) !== undefined;
}
