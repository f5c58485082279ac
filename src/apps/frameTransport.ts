import {
  type JSONRPCMessage,
  type MessageExtraInfo,
  parseJSONRPCMessage,
} from '@modelcontextprotocol/client';
import type { SizedTransport } from './guardedTransport';

/** The sandbox proxy's word that it removed the view (sandbox.ts): the view's connection ends. */
export const VIEW_GONE = 'ui/notifications/sandbox-view-gone';
/** The sandbox proxy's word that it dropped a message of the view (too long, or not JSON). */
export const MESSAGE_DROPPED = 'ui/notifications/sandbox-message-dropped';
/** The sandbox proxy's word of the size of the view's message it relays next (a long one). */
export const MESSAGE_SIZE = 'ui/notifications/sandbox-message-size';

/** Longer than any string a browser makes (V8: 2^29 - 24, Firefox: 2^30 - 2). */
const MAX_NOTICE_CHARS = 2 ** 30;

/** The size a notice says: a whole number of characters, none past any string's length. */
function sizeOf(params: Record<string, unknown> | undefined): number | undefined {
  const chars = params?.chars;
  return Number.isSafeInteger(chars) &&
    (chars as number) >= 0 &&
    (chars as number) <= MAX_NOTICE_CHARS
    ? (chars as number)
    : undefined;
}

const count = (n: unknown): string | undefined =>
  typeof n === 'number' && Number.isFinite(n) ? n.toLocaleString('en-US') : undefined;

/** What the view did, from the proxy's notice (only numbers from it go into the text). */
function dropped(params: Record<string, unknown> | undefined): string {
  if (params?.reason === 'not-json') {
    return 'the view sent a message that is not JSON (a cycle, a BigInt), and its sandbox dropped it';
  }
  const chars = count(params?.chars);
  const max = count(params?.max);
  const details = [chars && `${chars} characters`, max && `at most ${max}`].filter(Boolean);
  const said = details.length > 0 ? ` (${details.join(', ')})` : '';
  return `the view sent a message longer than its sandbox relays${said}, and its sandbox dropped it`;
}

/**
 * The host's end of the `postMessage` channel to one sandbox proxy frame. A message counts only
 * if it comes from that frame's window (`source`) and from the sandbox origin (`origin`): a view
 * posting to the top window directly, another frame, or another tab's page are all ignored. What
 * passes both checks must still be JSON-RPC; anything else is reported (`onerror`), which the
 * view's budget counts. Messages go out to the sandbox origin only, never `*`.
 *
 * ext-apps' `PostMessageTransport` checks the source alone and posts to `*`; hence this one.
 *
 * The proxy removes a view that navigated its frame away and says so (`VIEW_GONE`, a method the
 * proxy never relays from a view): the transport then closes, with `closeReason` saying why. A
 * message the proxy dropped (longer than its `maxMessageChars`, or not JSON: sandbox.ts) never
 * comes here; its notice (`MESSAGE_DROPPED`) is reported like a message that is not JSON-RPC.
 * Before a long message it relays, the proxy says its size (`MESSAGE_SIZE`): passed to `onsize`
 * (GuardedTransport charges it), or, when it is no whole number of characters, reported.
 *
 * No size check of its own: only the proxy frame gets here, and by the time the listener runs
 * the host has paid the clone. Measuring an object walks all of it (`JSON.stringify`: ~140 ms for
 * a 50 MB string), where the parse reads the envelope and the names in `params` (under 1 ms for
 * that one): it would cost every message more than it spares. The bound is the proxy's, paid in
 * the sandbox's process.
 */
export class FrameTransport implements SizedTransport {
  readonly #frame: HTMLIFrameElement;
  readonly #origin: string;
  #window: Window | undefined;
  /** Why the transport closed on its own, if it did. */
  closeReason: string | undefined;

  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onsize?: (chars: number) => void;

  constructor(frame: HTMLIFrameElement, sandboxOrigin: string) {
    this.#frame = frame;
    this.#origin = sandboxOrigin;
  }

  async start(): Promise<void> {
    this.#window = this.#frame.ownerDocument.defaultView ?? undefined;
    this.#window?.addEventListener('message', this.#listener);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // A frame already removed (the view is going away) has no window to post to.
    try {
      this.#frame.contentWindow?.postMessage(message, this.#origin);
    } catch {}
  }

  async close(): Promise<void> {
    if (!this.#window) return;
    this.#window.removeEventListener('message', this.#listener);
    this.#window = undefined;
    this.onclose?.();
  }

  readonly #listener = (event: MessageEvent): void => {
    const source = this.#frame.contentWindow;
    if (source === null || event.source !== source || event.origin !== this.#origin) return;
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(event.data);
    } catch {
      this.onerror?.(new Error('the view sent a message that is not JSON-RPC'));
      return;
    }
    if ('method' in message && !('id' in message) && message.method === MESSAGE_SIZE) {
      const chars = sizeOf(message.params);
      if (chars === undefined) {
        this.onerror?.(new Error('the sandbox sent a message-size notice without a valid size'));
      } else {
        this.onsize?.(chars);
      }
      return;
    }
    if ('method' in message && !('id' in message) && message.method === MESSAGE_DROPPED) {
      this.onerror?.(new Error(dropped(message.params)));
      return;
    }
    if ('method' in message && !('id' in message) && message.method === VIEW_GONE) {
      this.closeReason = 'the view navigated away from its page, and its sandbox removed it';
      void this.close();
      return;
    }
    this.onmessage?.(message);
  };
}
