import type { Client, McpSubscription } from '@modelcontextprotocol/client';
import { connectClient, textOf } from './impls';

/**
 * The raw-SDK floor: one client, one subscription, and for each notification
 * exactly one read. No React, no cache. Nothing that shows fresh data after a
 * notification can be faster than notification → read → result.
 */
export class RawFloor {
  readonly #client: Client;
  readonly #subscription: McpSubscription | undefined;
  readonly #waiters: Map<string, (at: number) => void>;

  private constructor(
    client: Client,
    subscription: McpSubscription | undefined,
    waiters: Map<string, (at: number) => void>,
  ) {
    this.#client = client;
    this.#subscription = subscription;
    this.#waiters = waiters;
  }

  static async start(url: string, uri: string, fetch?: typeof globalThis.fetch): Promise<RawFloor> {
    const client = await connectClient(url, fetch);
    const waiters = new Map<string, (at: number) => void>();
    client.setNotificationHandler('notifications/resources/updated', async (notification) => {
      if (notification.params.uri !== uri) return;
      const result = await client.readResource({ uri }, { cacheMode: 'bypass' });
      const at = performance.now();
      const text = textOf(result);
      if (text === undefined) return;
      waiters.get(text)?.(at);
      waiters.delete(text);
    });
    let subscription: McpSubscription | undefined;
    if (client.getProtocolEra() === 'modern') {
      subscription = await client.listen({ resourceSubscriptions: [uri] });
    } else {
      await client.subscribeResource({ uri });
    }
    return new RawFloor(client, subscription, waiters);
  }

  /** Resolves with the time the read returning `text` completed. */
  waitFor(text: string): Promise<number> {
    return new Promise((resolve) => this.#waiters.set(text, resolve));
  }

  async close(): Promise<void> {
    await this.#subscription?.close().catch(() => {});
    await this.#client.close().catch(() => {});
  }
}
