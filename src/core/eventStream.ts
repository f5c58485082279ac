import { UPDATED } from './dispatcher';

/** Which `updated` notifications an event stream may drop before the SDK parses them. */
export interface UpdateFilter {
  /** Whether an update of `uri` could matter (someone wants or covers it). */
  relevant(uri: string): boolean;
  /** An update nobody wants was dropped: count it as the dispatcher would have. */
  dropped(uri: string): void;
}

export interface Watch {
  /** The stream ended, errored or was cancelled (once). */
  onEnd(): void;
  /** The id of every SSE event that passes. */
  onEventId?: (id: string) => void;
  filter?: UpdateFilter;
}

/** Messages longer than this are never looked into: they go to the SDK as they came. */
const LOOK_INTO = 4096;
/** A line's end, then an empty line's (CRLF, LF or CR each, mixed as they come). */
const EVENT_END = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r|\n)/g;

export function rewrap(response: Response, watch: Watch): Response {
  return new Response(watchEvents(response.body as ReadableStream<Uint8Array>, watch), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * The same SSE bytes, plus a call when the stream ends, the id of each event
 * that passes, and, with a filter, less the `notifications/resources/updated`
 * of URIs nobody wants or covers: a flood of those costs a JSON.parse each
 * instead of the SDK's schema validation and dispatch (~80 µs). Only a small,
 * well-formed notification is dropped; anything else (a batch, a malformed
 * one, one too long to look into) passes as it came, so the dispatcher still
 * counts what is malformed.
 */
export function watchEvents(
  body: ReadableStream<Uint8Array>,
  watch: Watch,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const scans = watch.onEventId !== undefined || watch.filter !== undefined;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  /** The start of an event not complete yet; `long`: it is too long to look into, and passing. */
  let partial = '';
  let long = false;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    watch.onEnd();
  };
  /**
   * The id the SDK resumes with, as its parser reads it: the last `id:` with no NUL, of an event
   * with data, unless empty. Another one would make the resumption look like some other stream's.
   */
  const eventId = (event: string) => {
    let id = '';
    let data = false;
    for (const line of lines(event)) {
      if (/^data(:|$)/.test(line)) data = true;
      else if (/^id(:|$)/.test(line) && !line.includes('\0'))
        id = line.slice(line[3] === ' ' ? 4 : 3);
    }
    if (data && id) watch.onEventId?.(id);
  };
  /** What of `partial` + `text` passes now; the start of an incomplete event waits for more. */
  const pass = (text: string): string => {
    const all = partial + text;
    let kept = '';
    let from = 0;
    // A boundary may straddle the old and the new text: look from just before the join.
    EVENT_END.lastIndex = Math.max(0, partial.length - 3);
    for (let match = EVENT_END.exec(all); match; match = EVENT_END.exec(all)) {
      const to = match.index + match[0].length;
      const event = all.slice(from, to);
      from = to;
      if (long) long = false;
      else if (dropped(event, watch.filter)) continue;
      else eventId(event);
      kept += event;
    }
    partial = all.slice(from);
    // Too long to be dropped: it passes as it comes instead of waiting whole
    // in memory (all but its last characters, which may begin its end).
    if (partial.length > LOOK_INTO) {
      if (!long) eventId(partial);
      long = true;
      kept += partial.slice(0, -3);
      partial = partial.slice(-3);
    }
    return kept;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) {
            const rest = scans ? partial + decoder.decode() : '';
            if (rest) controller.enqueue(encoder.encode(rest));
            controller.close();
            end();
            return;
          }
          if (!scans) {
            controller.enqueue(value);
            return;
          }
          const kept = pass(decoder.decode(value, { stream: true }));
          // A chunk of nothing but dropped updates: read on, nothing to hand over.
          if (kept) {
            controller.enqueue(encoder.encode(kept));
            return;
          }
        }
      } catch (error) {
        controller.error(error);
        end();
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}

/** A plain `"uri":"…"` in an event: if someone wants it, the event passes without parsing. */
const PLAIN_URI = /"uri"\s*:\s*"([^"\\]+)"/;

/** Whether `event` is an `updated` notification the filter says nobody wants. */
function dropped(event: string, filter: UpdateFilter | undefined): boolean {
  if (!filter || event.length > LOOK_INTO || !event.includes(UPDATED)) return false;
  // Passing is always safe; only a drop needs the whole message checked.
  const plain = PLAIN_URI.exec(event)?.[1];
  if (plain !== undefined && filter.relevant(plain)) return false;
  let data = '';
  for (const line of lines(event)) {
    if (line.startsWith('data:')) data += (data ? '\n' : '') + line.slice(line[5] === ' ' ? 6 : 5);
  }
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return false;
  }
  const { jsonrpc, method, id, params } = (message ?? {}) as Record<string, unknown>;
  const uri = (params as { uri?: unknown } | null | undefined)?.uri;
  if (jsonrpc !== '2.0' || method !== UPDATED || id !== undefined) return false;
  if (typeof uri !== 'string' || uri.length === 0 || filter.relevant(uri)) return false;
  filter.dropped(uri);
  return true;
}

/** The lines of one SSE event, whatever its line ends. */
function lines(event: string): string[] {
  return event.split(/\r\n|\r|\n/);
}
