import type { ElicitRequestParams } from '@modelcontextprotocol/client';
import { isSafeElicitation } from '../core/elicitationChecks';
import { McpQueryError } from '../core/errors';
import { isObject } from '../core/shapes';
import type { WireCall } from './protocol';

/**
 * What a follower takes from the channel besides content (keyShapes.ts): a call's result, its
 * progress, the leader's questions. The leader's SDK checked each against the protocol's schema
 * before it reached the leader; on the channel any script of the origin (or a tab of an earlier
 * version) may have written it, so each is checked again here, as the app is given the types.
 */

/** A key too big for a tab message (validate.ts): what this tab reads through the leader, nothing sent. */
export function tooBigToShare(key: readonly unknown[]): McpQueryError {
  return new McpQueryError(
    'INVALID_ARGUMENTS',
    `${JSON.stringify(key).slice(0, 200)}… is too long to go to the tab holding the connection (a URI of at most 8,192 characters, arguments of at most 16,384 and 64 entries); nothing was sent`,
  );
}

/** Absent, or passing `check`. */
export const optional = (value: unknown, check: (value: unknown) => boolean) =>
  value === undefined || check(value);
export const isText = (value: unknown) => typeof value === 'string';
const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value);

/**
 * A tool's result as the SDK gives it: a list of content blocks (each of a type; a list however
 * old the server's protocol), whether it failed as a flag. Structured content the SDK checked
 * against the tool's own schema, where it has one, and passes as is where it has none.
 */
export function isToolResult(value: unknown): boolean {
  return (
    isObject(value) &&
    Array.isArray(value.content) &&
    value.content.every((block) => isObject(block) && typeof block.type === 'string') &&
    optional(value.isError, (flag) => typeof flag === 'boolean')
  );
}

/** A reply to a call: a tool's result; to a task request (`action`), a JSON-RPC result, an object. */
export function fitsCall(call: WireCall, value: unknown): boolean {
  return call.action ? isObject(value) : isToolResult(value);
}

/** A call's reply that is not a result of its kind: refused, the call may have run all the same. */
export function misshapenResult(): McpQueryError {
  return new McpQueryError(
    'CONNECTION_LOST',
    'the reply of the tab holding the connection to the call was not a result of its kind, refused; the call may or may not have run',
  );
}

/** A progress notification's numbers, and its message as text. */
export function isProgress(value: unknown): boolean {
  return (
    isObject(value) &&
    isNumber(value.progress) &&
    optional(value.total, isNumber) &&
    optional(value.message, isText)
  );
}

/**
 * A question the follower's own connection would have shown: a message, and a form's schema of
 * fields (an object of objects) or a link the app may show (https:, or http: on this machine).
 */
export function isShownElicitation(params: unknown): params is ElicitRequestParams {
  if (!isObject(params) || !isText(params.message)) return false;
  if (params.mode === 'url') {
    return isText(params.elicitationId) && isSafeElicitation(params as ElicitRequestParams);
  }
  if (params.mode !== undefined && params.mode !== 'form') return false;
  const schema = params.requestedSchema;
  return (
    isObject(schema) &&
    isObject(schema.properties) &&
    Object.values(schema.properties).every(isObject) &&
    optional(schema.required, (required) => Array.isArray(required) && required.every(isText))
  );
}
