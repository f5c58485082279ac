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
  return misfit(keys, key, data) === undefined;
}

/**
 * Why `data` is not what a read of `key` can return (resource content: the error the read would
 * have failed with, WRONG_URI or EMPTY_CONTENTS), or undefined when it is.
 */
export function misfit(keys: McpKeys, key: QueryKey, data: unknown): Error | undefined {
  const uri = keys.uriOf(key);
  if (uri !== undefined) {
    // Content of that resource and no other, with something in it (rule 8).
    try {
      checkContents(uri, (typeof data === 'object' && data !== null ? data : {}) as never);
      return undefined;
    } catch (error) {
      return error as Error;
    }
  }
  if (fitsRequest(keys, key, data)) return undefined;
  return new Error(
    `a reply from the tab holding the connection to a read of ${JSON.stringify(key).slice(0, 200)} was of another shape, refused`,
  );
}

function fitsRequest(keys: McpKeys, key: QueryKey, data: unknown): boolean {
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
  return false;
}
