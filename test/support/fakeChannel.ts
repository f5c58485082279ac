import { vi } from 'vitest';
import type { ChannelLike } from '../../src/tabs';

type Listener = (event: { data: unknown }) => void;

interface Endpoint {
  name: string;
  /** The tab (or script) that opened it. */
  owner: string;
  listeners: Listener[];
  closed: boolean;
}

/**
 * The BroadcastChannels of one browser profile, in memory and driven by (fake) timers. A
 * message posted on a channel reaches every other open channel of the same name, never the
 * one that posted it, as a structured clone (what cannot be cloned throws at the sender, as
 * in a browser), on a later timer tick (or at `deliver()`), in the order posted. Posting on a closed channel
 * throws; a channel closed before delivery gets nothing. A listener that throws does not stop
 * delivery: the error is kept in `errors` (a browser reports it to that page, not the sender).
 */
export class FakeBroadcast {
  readonly #endpoints = new Set<Endpoint>();
  /** Every message posted: who posted it, on which channel, what. */
  readonly posted: Array<{ from: string; name: string; data: unknown }> = [];
  /** What listeners threw. */
  readonly errors: unknown[] = [];
  readonly #queue: Array<{ targets: Endpoint[]; data: unknown }> = [];
  #tick = false;

  /** The channels of one tab: `shareAcrossTabs({ channel: tab.open })`, and its crash. */
  tab(owner: string): { open(name: string): ChannelLike; closeAll(): void } {
    const opened: Endpoint[] = [];
    return {
      open: (name) => {
        const endpoint: Endpoint = { name, owner, listeners: [], closed: false };
        this.#endpoints.add(endpoint);
        opened.push(endpoint);
        return {
          postMessage: (message) => this.#post(endpoint, message),
          addEventListener: (_type, listener) => {
            endpoint.listeners.push(listener);
          },
          close: () => this.#close(endpoint),
        };
      },
      closeAll: () => {
        for (const endpoint of opened) this.#close(endpoint);
      },
    };
  }

  /** Another script of the origin posts on `name` (it listens to nothing). */
  inject(name: string, data: unknown, from = 'script'): void {
    this.#post({ name, owner: from, listeners: [], closed: false }, data);
  }

  /** Messages posted and not yet delivered. */
  get inFlight(): number {
    return this.#queue.length;
  }

  /** What `owner` posted (optionally of one `type`). */
  sent(owner: string, type?: string): unknown[] {
    return this.posted
      .filter((message) => message.from === owner)
      .map((message) => message.data)
      .filter((data) => type === undefined || (data as { type?: unknown }).type === type);
  }

  /**
   * Delivers every message on its way now, in the order posted (what the timer tick would
   * do): fake timers give a 0 ms timer set during a tick the next millisecond, so waiting for
   * the tick would move the clock.
   */
  deliver(): void {
    for (let next = this.#queue.shift(); next; next = this.#queue.shift()) {
      for (const target of next.targets) {
        if (target.closed) continue;
        for (const listener of target.listeners) {
          try {
            listener({ data: structuredClone(next.data) });
          } catch (error) {
            this.errors.push(error);
          }
        }
      }
    }
  }

  #post(from: Endpoint, message: unknown): void {
    if (from.closed) throw new DOMException('BroadcastChannel is closed', 'InvalidStateError');
    const data = structuredClone(message);
    this.posted.push({ from: from.owner, name: from.name, data });
    const targets = [...this.#endpoints].filter(
      (endpoint) => endpoint !== from && endpoint.name === from.name && !endpoint.closed,
    );
    this.#queue.push({ targets, data });
    // One timer for all the messages on their way (each timer a fake clock runs costs a real
    // macrotask): a storm of thousands is delivered in one tick, still in order.
    if (this.#tick) return;
    this.#tick = true;
    setTimeout(() => {
      this.#tick = false;
      this.deliver();
    }, 0);
  }

  #close(endpoint: Endpoint): void {
    endpoint.closed = true;
    this.#endpoints.delete(endpoint);
  }
}

/**
 * Delivers the messages on their way, and lets the promise chains they start run, until the
 * tabs are quiet: three rounds in a row with nothing posted. Timers due now run too; the
 * clock does not move. Fails if the tabs never go quiet.
 */
export async function deliverAll(hub: FakeBroadcast, maxRounds = 1000): Promise<void> {
  let quiet = 0;
  for (let round = 0; round < maxRounds; round++) {
    const before = hub.posted.length;
    hub.deliver();
    await vi.advanceTimersByTimeAsync(0);
    quiet = hub.posted.length === before && hub.inFlight === 0 ? quiet + 1 : 0;
    if (quiet >= 3) return;
  }
  throw new Error(`the tabs still talk after ${maxRounds} rounds`);
}
