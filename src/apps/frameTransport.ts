import {
  type JSONRPCMessage,
  type MessageExtraInfo,
  parseJSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/client';

/** The sandbox proxy's word that it removed the view (sandbox.ts): the view's connection ends. */
export const VIEW_GONE = 'ui/notifications/sandbox-view-gone';

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
 * proxy never relays from a view): the transport then closes, with `closeReason` saying why.
 */
export class FrameTransport implements Transport {
  readonly #frame: HTMLIFrameElement;
  readonly #origin: string;
  #window: Window | undefined;
  /** Why the transport closed on its own, if it did. */
  closeReason: string | undefined;

  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

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
    if ('method' in message && !('id' in message) && message.method === VIEW_GONE) {
      this.closeReason = 'the view navigated away from its page, and its sandbox removed it';
      void this.close();
      return;
    }
    this.onmessage?.(message);
  };
}
