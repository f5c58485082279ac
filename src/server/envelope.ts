/**
 * The wire form of one bus event in Redis: `{"v":1,"origin":"<bus id>","event":{…}}`.
 * Anything on the stream is untrusted (another app, an older deploy, a hand-typed XADD), so
 * decoding rebuilds a clean `ServerEvent` from checked fields instead of passing a parsed object
 * on to the SDK's listen router.
 */
import type { ServerEvent } from '@modelcontextprotocol/server';
import type { StreamEntry } from './streamReply';

export const ENVELOPE_VERSION = 1;
/** Longest origin id accepted; ours are UUIDs, this only keeps junk from being kept. */
const MAX_ORIGIN_LENGTH = 128;

export type Decoded =
  | { ok: true; origin: string; event: ServerEvent }
  | { ok: false; reason: string };

export type Encoded =
  | { ok: true; payload: string; event: ServerEvent }
  | { ok: false; reason: string };

/**
 * Deepest nesting accepted in `params`. JSON.parse takes any depth, but the SDK's listen stream
 * serialises each notification with JSON.stringify, which overflows the stack somewhere in the
 * thousands: a 64 kB entry of brackets would then throw at every listener of its URI.
 */
const MAX_PARAMS_DEPTH = 32;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether `value` nests deeper than `limit`; iterative, so hostile depth costs no stack. */
function tooDeep(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Checks an event field by field; returns a fresh event or why it is not one. */
export function toServerEvent(value: unknown): ServerEvent | string {
  if (!isRecord(value)) return 'event is not an object';
  const { kind, uri, params } = value;
  if (params !== undefined) {
    if (!isRecord(params)) return 'params is not an object';
    // The router spreads `_meta` into the notification it writes: a string there would
    // come out as one key per character.
    if (params._meta !== undefined && !isRecord(params._meta))
      return 'params._meta is not an object';
    if (tooDeep(params, MAX_PARAMS_DEPTH)) return `params nest deeper than ${MAX_PARAMS_DEPTH}`;
  }
  const extra = params === undefined ? {} : { params: params as ServerEvent['params'] };
  switch (kind) {
    case 'resource_updated':
      if (typeof uri !== 'string' || uri.length === 0) return 'uri is not a non-empty string';
      return { kind, uri, ...extra };
    case 'resources_list_changed':
    case 'tools_list_changed':
    case 'prompts_list_changed':
      return { kind, ...extra };
    default:
      return `unknown kind ${typeof kind === 'string' ? JSON.stringify(kind.slice(0, 64)) : typeof kind}`;
  }
}

export function encode(origin: string, candidate: unknown, maxSize: number): Encoded {
  const event = toServerEvent(candidate);
  if (typeof event === 'string') return { ok: false, reason: event };
  let payload: string;
  try {
    payload = JSON.stringify({ v: ENVELOPE_VERSION, origin, event });
  } catch (error) {
    return { ok: false, reason: `not serialisable: ${String(error)}` };
  }
  // Every other instance would drop it as oversized: refuse here, where the caller can see it.
  if (payload.length > maxSize) return { ok: false, reason: `larger than ${maxSize} characters` };
  return { ok: true, payload, event };
}

export function decode(payload: string, maxSize: number): Decoded {
  // Checked before parsing: a multi-megabyte entry must not cost a parse.
  if (payload.length > maxSize) return { ok: false, reason: `larger than ${maxSize} characters` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (!isRecord(parsed)) return { ok: false, reason: 'not an object' };
  if (parsed.v !== ENVELOPE_VERSION) return { ok: false, reason: 'unknown envelope version' };
  const origin = parsed.origin;
  if (typeof origin !== 'string' || origin.length === 0 || origin.length > MAX_ORIGIN_LENGTH) {
    return { ok: false, reason: 'origin is not a short string' };
  }
  const event = toServerEvent(parsed.event);
  if (typeof event === 'string') return { ok: false, reason: event };
  return { ok: true, origin, event };
}

/** A stream entry as read: its `m` field, missing or too long to have been decoded, or decoded. */
export function decodeEntry(entry: StreamEntry, maxSize: number): Decoded {
  if (entry.oversized !== undefined) {
    const reason = `${entry.oversized} bytes, more than ${maxSize} characters can take (not decoded)`;
    return { ok: false, reason };
  }
  if (entry.payload === undefined) return { ok: false, reason: 'no "m" field' };
  return decode(entry.payload, maxSize);
}
