import type {
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/client';
import { extraCostOf, type MessageBudget } from './limits';

/** A JSON-RPC "server error" code: refused by the host's limits, not by the server. */
export const REFUSED_CODE = -32000;

/** A transport that learns the size of a message before it (FrameTransport). */
export interface SizedTransport extends Transport {
  /** A whole number of characters of JSON, from the sandbox proxy, for the message to come. */
  onsize?: (chars: number) => void;
}

/**
 * The view's side of a transport, with its limits applied before the bridge sees a message: past
 * the burst the view is reported (`onFlood`) and nothing more of it is read; past the in-flight
 * cap a request is answered with an error at once, and so is a request whose id is still in
 * flight. A request leaves the count when the host answers it, or, once the view cancelled it
 * (`notifications/cancelled`, which the SDK answers with nothing), when the host's work for it
 * ends: a handler given by `hold` keeps its request's slot until it returns, so a view cannot
 * free slots by cancelling while reads or calls it started still run. Sits between the bridge
 * and the frame (or, in tests, an in-memory pair), so every message a view can send is counted.
 *
 * A long message costs more, by its size: its sandbox proxy says the size before it relays one
 * longer than 64 KiB (`onsize`, from that proxy only: frameTransport.ts), and that notice is
 * charged one message per `charsPerMessage` begun past the first; the message then costs its one.
 */
export class GuardedTransport implements Transport {
  readonly #inner: SizedTransport;
  readonly #budget: MessageBudget;
  readonly #maxInFlight: number;
  readonly #charsPerMessage: number;
  /** `sized`: the budget ran out on a long message's size. */
  readonly #onFlood: (sized: boolean) => void;
  /** The view's requests in flight, by id: their methods. */
  readonly #pending = new Map<RequestId, string>();
  /** Methods whose handlers say when they end (`hold`): a cancel alone does not free their slot. */
  readonly #held = new Set<string>();
  #flooded = false;
  /** The size of the message to come was charged (its notice came just before). */
  #sizedNext = false;

  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  constructor(
    inner: SizedTransport,
    options: {
      budget: MessageBudget;
      inFlight: number;
      charsPerMessage: number;
      onFlood: (sized: boolean) => void;
    },
  ) {
    this.#inner = inner;
    this.#budget = options.budget;
    this.#maxInFlight = options.inFlight;
    this.#charsPerMessage = options.charsPerMessage;
    this.#onFlood = options.onFlood;
  }

  /** Wired on start, once the bridge listens: what came earlier waits in the inner transport. */
  start(): Promise<void> {
    const inner = this.#inner;
    inner.onclose = () => this.onclose?.();
    // A message the frame could not parse is still a message the view sent.
    inner.onerror = (error) => {
      this.#sizedNext = false;
      if (this.#charge()) this.onerror?.(error);
    };
    inner.onmessage = (message, extra) => this.#received(message, extra);
    inner.onsize = (chars) => {
      const extra = extraCostOf(chars, this.#charsPerMessage);
      if (extra > 0 && this.#charge(extra, true)) this.#sizedNext = true;
    };
    return inner.start();
  }

  /**
   * The host's handler for `method`, whose request keeps its slot until the handler has ended,
   * answered or not: the SDK answers a cancelled request with nothing, and the work it started
   * (a read, a tool call, the host's own callback) may still be running.
   */
  hold<Q, C extends { mcpReq: { id: RequestId } }, R>(
    method: string,
    handler: (request: Q, ctx: C) => R | Promise<R>,
  ): (request: Q, ctx: C) => Promise<R> {
    this.#held.add(method);
    return async (request, ctx) => {
      try {
        return await handler(request, ctx);
      } finally {
        this.#pending.delete(ctx.mcpReq.id);
      }
    };
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // An answer (result or error) to one of the view's requests: it is no longer in flight.
    if (!('method' in message) && 'id' in message && message.id !== undefined) {
      this.#pending.delete(message.id);
    }
    return this.#inner.send(message, options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #charge(cost = 1, sized = false): boolean {
    if (this.#flooded) return false;
    if (this.#budget.take(cost)) return true;
    this.#flooded = true;
    this.#onFlood(sized);
    return false;
  }

  #received(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    // The long message whose size was just charged: if its own one is what is lacking, the
    // flood is still its size's.
    const sized = this.#sizedNext;
    this.#sizedNext = false;
    if (!this.#charge(1, sized)) return;
    if ('method' in message && 'id' in message) {
      // The SDK runs two requests of one id side by side, and the first answer would free the
      // slot of both: an id already in flight is refused, not counted again.
      const refusal = this.#pending.has(message.id)
        ? `request id ${JSON.stringify(message.id)} is already in flight`
        : this.#pending.size >= this.#maxInFlight
          ? `too many requests in flight (at most ${this.#maxInFlight} per view)`
          : undefined;
      if (refusal !== undefined) {
        this.#refuse(message.id, refusal);
        return;
      }
      this.#pending.set(message.id, message.method);
    } else if ('method' in message && message.method === 'notifications/cancelled') {
      // The SDK sends no answer to a request the view cancelled. One whose handler says when it
      // ends is freed then (`hold`); the others (ping, initialize) end at once: freed here.
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof id === 'string' || typeof id === 'number') {
        const method = this.#pending.get(id);
        if (method !== undefined && !this.#held.has(method)) this.#pending.delete(id);
      }
    }
    this.onmessage?.(message, extra);
  }

  #refuse(id: RequestId, message: string): void {
    void this.#inner
      .send({ jsonrpc: '2.0', id, error: { code: REFUSED_CODE, message } })
      .catch(() => {});
  }
}
