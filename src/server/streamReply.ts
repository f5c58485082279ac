/**
 * Raw `sendCommand` replies of the stream commands, in whichever shape the client hands them
 * over: RESP2 arrays, RESP3 maps as plain objects or `Map`s, strings or Buffers (a client with
 * a type mapping). The bus duplicates the caller's client, so it cannot choose the shape.
 */

export interface StreamEntry {
  id: string;
  /** The `m` field, or undefined when the entry has none (someone else's XADD) or is `oversized`. */
  payload: string | undefined;
  /** Bytes of an `m` field longer than the reader takes, left undecoded. */
  oversized?: number;
}

/** The `m` field's name, as bytes. */
const M = 0x6d;

const decoder = new TextDecoder();

export function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return decoder.decode(value);
  return undefined;
}

/** The values of a RESP3 map (object or Map) or the pairs of a RESP2 flat/nested array. */
function mapEntries(reply: unknown): Array<[unknown, unknown]> {
  if (reply instanceof Map) return [...reply.entries()];
  if (Array.isArray(reply)) {
    // XREAD in RESP2: [[key, entries]]; XINFO in RESP2: [k1, v1, k2, v2, …].
    if (reply.every((item) => Array.isArray(item) && item.length === 2)) {
      return reply.map((item) => [item[0], item[1]] as [unknown, unknown]);
    }
    const pairs: Array<[unknown, unknown]> = [];
    for (let i = 0; i + 1 < reply.length; i += 2) pairs.push([reply[i], reply[i + 1]]);
    return pairs;
  }
  if (typeof reply === 'object' && reply !== null) return Object.entries(reply);
  return [];
}

/** Whether a field name is `m`; compared as bytes, so a huge name is never decoded. */
function isM(name: unknown): boolean {
  if (typeof name === 'string') return name === 'm';
  return name instanceof Uint8Array && name.byteLength === 1 && name[0] === M;
}

/** The `m` field of an entry's fields, decoded only if it has at most `maxBytes` bytes. */
function payloadOf(fields: unknown, maxBytes: number): Omit<StreamEntry, 'id'> {
  if (!Array.isArray(fields)) return { payload: undefined };
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (!isM(fields[i])) continue;
    const value: unknown = fields[i + 1];
    if (value instanceof Uint8Array && value.byteLength > maxBytes) {
      return { payload: undefined, oversized: value.byteLength };
    }
    return { payload: text(value) };
  }
  return { payload: undefined };
}

/**
 * Entries of the one stream an `XREAD … STREAMS key id` asked for; none on a timeout (null).
 * A payload read as bytes and longer than `maxBytes` is not decoded (`oversized`).
 */
export function xreadEntries(reply: unknown, maxBytes = Number.POSITIVE_INFINITY): StreamEntry[] {
  const entries: StreamEntry[] = [];
  for (const [, list] of mapEntries(reply)) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      if (!Array.isArray(item)) continue;
      const id = text(item[0]);
      if (id !== undefined) entries.push({ id, ...payloadOf(item[1], maxBytes) });
    }
  }
  return entries;
}

export interface StreamInfo {
  lastGeneratedId: string;
  /** Entries ever added (Redis 7.0+). */
  entriesAdded: number | undefined;
  length: number;
  /** Oldest entry still in the stream; undefined when empty. */
  firstId: string | undefined;
}

/** The fields of an `XINFO STREAM` reply the reader needs. */
export function streamInfo(reply: unknown): StreamInfo | undefined {
  const fields = new Map<string, unknown>();
  for (const [key, value] of mapEntries(reply)) {
    const name = text(key);
    if (name !== undefined) fields.set(name, value);
  }
  const lastGeneratedId = text(fields.get('last-generated-id'));
  const length = Number(fields.get('length'));
  if (lastGeneratedId === undefined || !Number.isFinite(length)) return undefined;
  const added = fields.get('entries-added');
  const first = fields.get('first-entry');
  return {
    lastGeneratedId,
    entriesAdded: added === undefined ? undefined : Number(added),
    length,
    firstId: length > 0 && Array.isArray(first) ? text(first[0]) : undefined,
  };
}

/** Orders stream ids (`<ms>-<seq>`); malformed ids sort first. */
export function compareIds(a: string, b: string): number {
  const [am = 0n, as = 0n] = parseId(a);
  const [bm = 0n, bs = 0n] = parseId(b);
  if (am !== bm) return am < bm ? -1 : 1;
  if (as !== bs) return as < bs ? -1 : 1;
  return 0;
}

function parseId(id: string): bigint[] {
  const match = /^(\d+)-(\d+)$/.exec(id);
  return match ? [BigInt(match[1] as string), BigInt(match[2] as string)] : [];
}
