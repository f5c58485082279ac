import type { ReadResourceResult } from '@modelcontextprotocol/client';
import type { QueryKey } from '@tanstack/query-core';
import type { McpKeys } from '../core/keys';
import { checkContents } from '../core/readResult';

/** What a follower may take from the leader for a key, and which keys it holds while shown. */

/** Whether a key is a prompt or a task: held while shown, like a list. */
export function isLiveRequest(keys: McpKeys, key: QueryKey): boolean {
  const kind = keys.requestOf(key)?.kind;
  return kind === 'prompt' || kind === 'task';
}

/**
 * Resource content of that resource with something in it, a list, a prompt's messages, a completion's values, a
 * task: what a read of `key` can return.
 */
export function fitsKey(keys: McpKeys, key: QueryKey, data: unknown): boolean {
  if (keys.listOf(key) !== undefined) return Array.isArray(data);
  const value = (data ?? {}) as {
    contents?: unknown;
    messages?: unknown;
    completion?: { values?: unknown };
    task?: unknown;
  };
  switch (keys.requestOf(key)?.kind) {
    case 'prompt':
      return Array.isArray(value.messages);
    case 'completion':
      return Array.isArray(value.completion?.values);
    case 'task':
      return typeof value.task === 'object' && value.task !== null;
    case 'tasks':
      return Array.isArray(data);
  }
  // Content of that resource and no other, with something in it (rule 8).
  const uri = keys.uriOf(key);
  if (uri === undefined || typeof data !== 'object' || data === null) return false;
  try {
    checkContents(uri, data as ReadResourceResult);
    return true;
  } catch {
    return false;
  }
}
