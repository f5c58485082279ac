import type { LoggingLevel } from '@modelcontextprotocol/client';
import type { QueryKey } from '@tanstack/query-core';
import type { McpEvent } from '../core/events';
import type { McpKeys } from '../core/keys';
import type { PartitionIdentity } from '../core/partition';
import type { LocalUpstreamControl, TabContext } from '../core/upstream';
import type { ChannelLike, LocksLike, TabMessage } from './protocol';

export interface Settings {
  locks: LocksLike;
  open(name: string): ChannelLike;
  livenessMs: number;
}

/** What a tab's two roles share: who it is, its connection, its McpCacheSync's context, the channel. */
export interface GroupLink {
  /** This tab's id in the group. */
  readonly tab: string;
  /** The group's name: its channel, and the prefix of its locks. */
  readonly name: string;
  /** This tab's own connection (it serves the group while this tab leads). */
  readonly local: LocalUpstreamControl;
  readonly context: TabContext;
  readonly settings: Settings;
  send(message: TabMessage): void;
  /** The log level this tab's `useServerLog` asks for, if any. */
  logLevel(): LoggingLevel | undefined;
}

/**
 * The name of the group of one server, scope and signed-in identity: its channel, and the prefix
 * of its locks (`<name>|leader`, `<name>|tab|<tab>`). Each part may hold any character (an Auth0
 * subject is `auth0|…`, a URL may have a '|' in its query), so the parts go in as a JSON array: no
 * two groups share a name, and no name with a lock's suffix is another group's (the array ends
 * where it ends). No scope and the scope '' are two groups, as their keys differ; so are no
 * identity and the identity ''.
 */
export function groupName(identity: PartitionIdentity, scope: string | undefined): string {
  const parts = [identity.connection, scope ?? null, identity.auth ?? null];
  return `mcp-react-query|${JSON.stringify(parts)}`;
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
  'log',
  'ping',
  'task',
]);

/** Whether `key` is an MCP key of this group's scope: a resource, a list, a prompt, a completion, a task. */
export function isGroupKey(keys: McpKeys, key: unknown): key is QueryKey {
  return Array.isArray(key) && keys.owns(key);
}
