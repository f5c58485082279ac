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

/**
 * The raw-SDK floor for many URIs (storm): one client, one subscription set
 * (modern: one listen stream with every URI; legacy: a subscribe per URI), no
 * React, no cache. Per URI the minimal correct policy: one read in flight at a
 * time, and notifications that arrive while it is in flight cost exactly one
 * more read when it settles (single flight, one trailing read). Every read's
 * text goes to `onText`, which timestamps it.
 */
export class RawResourceSet {
  readonly #client: Client;
  readonly #onText: (uri: string, text: string | undefined) => void;
  readonly #inFlight = new Set<string>();
  readonly #again = new Set<string>();
  readonly #texts = new Map<string, string | undefined>();
  #subscription: McpSubscription | undefined;
  #closed = false;
  reads = 0;
  readonly failures: Record<string, number> = {};

  private constructor(client: Client, onText: (uri: string, text: string | undefined) => void) {
    this.#client = client;
    this.#onText = onText;
  }

  /** Subscribed to every URI of `uris`, each read once after that. */
  static async start(
    url: string,
    uris: readonly string[],
    onText: (uri: string, text: string | undefined) => void,
  ): Promise<RawResourceSet> {
    const client = await connectClient(url);
    const set = new RawResourceSet(client, onText);
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      set.#changed(notification.params.uri);
    });
    if (client.getProtocolEra() === 'modern') {
      set.#subscription = await client.listen({ resourceSubscriptions: [...uris] });
    } else {
      await Promise.all(uris.map((uri) => client.subscribeResource({ uri })));
    }
    for (const uri of uris) set.#changed(uri);
    return set;
  }

  /** The text the last completed read of `uri` returned. */
  text(uri: string): string | undefined {
    return this.#texts.get(uri);
  }

  #changed(uri: string): void {
    if (this.#closed) return;
    if (this.#inFlight.has(uri)) {
      this.#again.add(uri);
      return;
    }
    this.#inFlight.add(uri);
    void this.#read(uri);
  }

  async #read(uri: string): Promise<void> {
    this.reads += 1;
    try {
      const result = await this.#client.readResource({ uri }, { cacheMode: 'bypass' });
      const text = textOf(result);
      this.#texts.set(uri, text);
      this.#onText(uri, text);
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).slice(0, 120);
      this.failures[message] = (this.failures[message] ?? 0) + 1;
    } finally {
      this.#inFlight.delete(uri);
      if (this.#again.delete(uri)) this.#changed(uri);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#subscription?.close().catch(() => {});
    await this.#client.close().catch(() => {});
  }
}
