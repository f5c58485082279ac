import type { McpEvent } from '../core/events';
import { severity } from '../core/logLevels';
import { isObject } from '../core/shapes';
import { FORWARDED } from './link';
import type { TabMessage } from './protocol';
import { isProgress, isText, optional } from './replyShapes';

/**
 * What arrives on a group's BroadcastChannel comes from any script of this
 * origin: a tab of this app, an older version of it, or something hostile
 * (SECURITY.md: same-origin is the trust boundary, and every script on the
 * origin is a full member). Nothing is acted on before its shape is checked
 * here, and the sizes are bounded, so a malformed or hostile message can
 * neither crash a tab nor grow what it keeps.
 */

/** The most keys one tab may ask the leader to hold. */
export const MAX_KEYS_PER_TAB = 10_000;
/** The most events or elicitations one message may carry. */
export const MAX_ITEMS = 1000;
/** Longer strings in keys and ids are refused (a URI is not a megabyte). */
const MAX_STRING = 8192;

type Check = (value: Record<string, unknown>) => boolean;

const isString = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= MAX_STRING;
const isId = (value: unknown): value is number => Number.isSafeInteger(value) && Number(value) >= 0;
const isCount = isId;
const isTime = (value: unknown) => typeof value === 'number' && Number.isFinite(value);
/** The most characters the strings of one key may add up to (a prompt's or completion's arguments). */
const MAX_KEY_CHARS = 16_384;
/** The most entries of an object in a key (arguments by name, a completion's context). */
const MAX_KEY_ENTRIES = 64;

/**
 * The characters of a key part, or NaN when it is not one: a string, or a small plain object
 * of strings, nested at most twice (a completion's `{ arguments: { … } }`).
 */
function partChars(value: unknown, depth: number): number {
  if (typeof value === 'string') return value.length;
  if (!isObject(value) || depth > 1) return Number.NaN;
  const entries = Object.entries(value);
  if (entries.length > MAX_KEY_ENTRIES) return Number.NaN;
  let chars = 0;
  for (const [name, entry] of entries) chars += name.length + partChars(entry, depth + 1);
  return chars;
}

/**
 * A query key: a short array of non-empty strings and small objects (an MCP key is at most
 * ['mcp', scope, 'completion', ref, argument, context]), bounded in size; the scope may be ''
 * (the app's choice: ['mcp', ''] is a scope of its own). A follower sends no other
 * (follower.ts): the leader would refuse the whole message.
 */
export const isKey = (value: unknown) => {
  if (!Array.isArray(value) || value.length === 0 || value.length > 6) return false;
  let chars = 0;
  for (const [at, part] of value.entries()) {
    const scope = at === 1 && value[0] === 'mcp' && part === '';
    if (typeof part === 'string' && !isString(part) && !scope) return false;
    chars += partChars(part, 0);
  }
  return chars <= MAX_KEY_CHARS;
};
const isList = <T>(value: unknown, max: number, item: (entry: unknown) => entry is T) =>
  Array.isArray(value) && value.length <= max && value.every(item);

/**
 * A log message's data, as JSON, is cut at 8,000 characters where it is received (serverLog.ts):
 * data whose JSON is longer arrives as that JSON, cut, a string (which as JSON again can be
 * twice as long: every quote in it escaped).
 */
const MAX_LOG_CHARS = 8192;

/** How long `value` is as JSON (infinite when it is not JSON). */
function jsonChars(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** What a follower may ask the leader to send besides tool calls (`Upstream.request`). */
const ACTIONS = new Set(['tools/call', 'tasks/cancel']);

const LIST_NAMES = new Set(['resources', 'tools', 'prompts']);
const LIST_KINDS = new Set(['resources', 'resourceTemplates', 'tools', 'prompts']);
const PHASES = new Set(['start', 'success', 'error']);

const PHASES_OF_CONNECTION = new Set([
  'connecting',
  'ready',
  'reconnecting',
  'unauthorized',
  'error',
  'closed',
]);

/**
 * The leader's connection, as useMcp() shows it to the app (status, error, era, counts): each
 * field of its type, the error one with a text message (structured cloning keeps an Error's).
 */
function isConnection(state: unknown): boolean {
  return (
    isObject(state) &&
    PHASES_OF_CONNECTION.has(state.phase as string) &&
    optional(state.era, (era) => era === 'modern' || era === 'legacy') &&
    optional(state.protocolVersion, (version) => typeof version === 'string') &&
    optional(state.capabilities, isObject) &&
    optional(state.error, (error) => isObject(error) && typeof error.message === 'string') &&
    isCount(state.attempt) &&
    optional(state.nextRetryAt, isTime) &&
    isCount(state.reconnects) &&
    optional(state.lastLoss, (loss) => typeof loss === 'string')
  );
}

const STREAM_KINDS = new Set(['listen', 'legacy', 'none']);
const STREAM_STATES = new Set(['idle', 'opening', 'open', 'reopening', 'unsupported', 'closed']);
const CLOSE_REASONS = new Set(['local', 'graceful', 'remote', 'error']);

/** The leader's change stream, as useMcp() (while reconnecting) and the diagnostics show it. */
function isStream(status: unknown): boolean {
  return (
    isObject(status) &&
    STREAM_KINDS.has(status.kind as string) &&
    STREAM_STATES.has(status.state as string) &&
    isTime(status.since) &&
    isCount(status.reopenCount) &&
    optional(status.lastCloseReason, (reason) => CLOSE_REASONS.has(reason as string)) &&
    isCount(status.attempt) &&
    optional(status.nextRetryAt, isTime) &&
    optional(status.lastError, isText) &&
    optional(status.note, isText)
  );
}

/** The fields each forwarded event's folds read (state, diagnostics), checked before dispatch. */
const EVENT_SHAPES: Partial<Record<McpEvent['type'], Check>> = {
  connection: (e) => isConnection(e.state),
  status: (e) => PHASES_OF_CONNECTION.has(e.status as string),
  stream: (e) => isStream(e.status),
  coverage: (e) =>
    isList(e.acknowledged, Number.POSITIVE_INFINITY, isString) &&
    isList(e.lost, Number.POSITIVE_INFINITY, isString) &&
    isList(e.lists, 3, (list): list is string => LIST_NAMES.has(list as string)),
  declined: (e) =>
    isList(
      e.changes,
      Number.POSITIVE_INFINITY,
      (change): change is [string, string | null] =>
        Array.isArray(change) &&
        isString(change[0]) &&
        (change[1] === null || typeof change[1] === 'string'),
    ),
  updated: (e) => isString(e.uri) && typeof e.matched === 'boolean',
  list_changed: (e) => LIST_NAMES.has(e.list as string),
  malformed: (e) => typeof e.method === 'string' && typeof e.reason === 'string',
  read: (e) =>
    isString(e.uri) &&
    PHASES.has(e.phase as string) &&
    optional(e.error, isText) &&
    optional(e.digest, isText),
  list: (e) =>
    LIST_KINDS.has(e.list as string) &&
    PHASES.has(e.phase as string) &&
    optional(e.count, isCount) &&
    optional(e.error, isText),
  task: (e) => isString(e.taskId) && isString(e.status),
  ping: (e) =>
    (e.rttMs === undefined || (isTime(e.rttMs) && Number(e.rttMs) >= 0)) &&
    (e.error === undefined || typeof e.error === 'string'),
  log: (e) =>
    severity(e.level) >= 0 &&
    (e.logger === undefined || (typeof e.logger === 'string' && e.logger.length <= 256)) &&
    (typeof e.data === 'string' ? e.data.length : jsonChars(e.data)) <= MAX_LOG_CHARS,
};

const isEvent = (value: unknown): value is McpEvent => {
  if (!isObject(value) || !isTime(value.at) || !FORWARDED.has(value.type as McpEvent['type'])) {
    return false;
  }
  return EVENT_SHAPES[value.type as McpEvent['type']]?.(value) === true;
};

const isElicitation = (value: unknown) =>
  isObject(value) && isId(value.id) && isObject(value.params);

const ANSWERS = new Set(['accept', 'decline', 'cancel']);

const SHAPES: Record<TabMessage['type'], Check> = {
  hello: (m) => isString(m.tab),
  bye: (m) => isString(m.tab),
  leader: (m) => isString(m.tab) && isCount(m.handovers),
  group: (m) => isCount(m.tabs) && isCount(m.handovers),
  interest: (m) =>
    isString(m.tab) &&
    isList(m.keys, MAX_KEYS_PER_TAB, (key): key is string[] => isKey(key)) &&
    (m.answering === undefined || typeof m.answering === 'boolean') &&
    (m.logLevel === undefined || severity(m.logLevel) >= 0),
  read: (m) => isString(m.tab) && isId(m.id) && isKey(m.key) && typeof m.fresh === 'boolean',
  call: (m) =>
    isString(m.tab) &&
    isId(m.id) &&
    isObject(m.variables) &&
    isString(m.variables.name) &&
    (m.variables.arguments === undefined || isObject(m.variables.arguments)) &&
    // Any number: callFor (serving.ts) answers one no timer can take with INVALID_OPTIONS,
    // rather than leave the tab that sent it waiting for a reply.
    (m.variables.timeoutMs === undefined || typeof m.variables.timeoutMs === 'number') &&
    (m.variables.maxTotalTimeoutMs === undefined ||
      typeof m.variables.maxTotalTimeoutMs === 'number') &&
    typeof m.variables.progress === 'boolean' &&
    (m.variables.action === undefined ||
      (m.variables.action === true && ACTIONS.has(m.variables.name as string))),
  cancel: (m) => isString(m.tab) && isId(m.id),
  waiting: (m) => isString(m.tab) && isList(m.ids, MAX_ITEMS, isId),
  working: (m) => isString(m.to) && isList(m.ids, MAX_ITEMS, isId),
  answer: (m) =>
    isString(m.tab) &&
    isId(m.id) &&
    isObject(m.result) &&
    ANSWERS.has(m.result.action as string) &&
    (m.result.content === undefined || isObject(m.result.content)),
  elicitations: (m) =>
    (m.to === undefined || isString(m.to)) &&
    isList(m.items, MAX_ITEMS, (item): item is object => isElicitation(item)),
  progress: (m) => isString(m.to) && isId(m.id) && isProgress(m.progress),
  reply: (m) =>
    isString(m.to) &&
    isId(m.id) &&
    (m.updatedAt === undefined || isTime(m.updatedAt)) &&
    (m.stranger === undefined || m.stranger === true) &&
    (m.error === undefined ||
      (isObject(m.error) &&
        typeof m.error.name === 'string' &&
        typeof m.error.message === 'string' &&
        optional(m.error.code, (code) => isText(code) || Number.isFinite(code)))),
  data: (m) => isKey(m.key) && isTime(m.updatedAt),
  // Each event is checked on its own (parseTabMessage): one a server made too long to cross
  // (an update for a URI of 10,000 characters) does not keep the others from a tab.
  events: (m) =>
    (m.to === undefined || isString(m.to)) &&
    Array.isArray(m.events) &&
    m.events.length <= MAX_ITEMS,
};

/** The message, if it is one of the group's messages in the right shape; otherwise undefined. */
export function parseTabMessage(data: unknown): TabMessage | undefined {
  if (!isObject(data) || typeof data.type !== 'string' || !Object.hasOwn(SHAPES, data.type)) {
    return undefined;
  }
  if (!SHAPES[data.type as TabMessage['type']](data)) return undefined;
  if (data.type !== 'events') return data as TabMessage;
  // Events none of which is one are no message of the group's.
  const sent = data.events as unknown[];
  const events = sent.filter(isEvent);
  if (events.length === 0 && sent.length > 0) return undefined;
  return (events.length === sent.length ? data : { ...data, events }) as TabMessage;
}
