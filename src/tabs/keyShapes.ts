import type { QueryKey } from '@tanstack/query-core';
import type { McpKeys } from '../core/keys';
import { checkContents } from '../core/readResult';
import { isObject } from '../core/shapes';

/** What a follower may take from the leader for a key, and which keys it holds while shown. */

/** Whether a key is a prompt or a task: held while shown, like a list. */
export function isLiveRequest(keys: McpKeys, key: QueryKey): boolean {
  const kind = keys.requestOf(key)?.kind;
  return kind === 'prompt' || kind === 'task';
}

/**
 * Resource content of that resource with something in it, a list of items of its kind, a
 * prompt's messages, a completion's values, a task: what a read of `key` can return.
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

const named = (field: string) => (item: unknown) =>
  isObject(item) && typeof item[field] === 'string';
const isTask = (task: unknown) => named('taskId')(task) && named('status')(task);
const isMessage = (message: unknown) =>
  isObject(message) && typeof message.role === 'string' && isObject(message.content);
const every = (data: unknown, item: (entry: unknown) => boolean) =>
  Array.isArray(data) && data.every(item);

/** What each list's items have (what components showing the list read: a name, a URI). */
const LIST_ITEMS: Record<string, (item: unknown) => boolean> = {
  tools: named('name'),
  prompts: named('name'),
  resources: named('uri'),
  resourceTemplates: named('uriTemplate'),
};

function fitsRequest(keys: McpKeys, key: QueryKey, data: unknown): boolean {
  const list = keys.listOf(key);
  if (list !== undefined) return every(data, LIST_ITEMS[list] ?? (() => false));
  const value = (isObject(data) ? data : {}) as {
    messages?: unknown;
    completion?: { values?: unknown };
    task?: unknown;
  };
  switch (keys.requestOf(key)?.kind) {
    case 'prompt':
      return every(value.messages, isMessage);
    case 'completion':
      return every(value.completion?.values, (entry) => typeof entry === 'string');
    case 'task':
      return isTask(value.task);
    case 'tasks':
      return every(data, isTask);
  }
  return false;
}
