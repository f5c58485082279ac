/**
 * The playground's MCP backend: one ResourceStore behind a 2026-07-28 endpoint and a 2025 legacy
 * endpoint, plus the demo's own behaviour (a ticking clock, a counter, notes, a flaky read).
 *
 * Every change is published on both endpoints: a page may be connected to either, and an
 * endpoint only delivers to its own subscribers, so publishing on one would leave the other
 * silently stale.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createLegacyEndpoint,
  createModernEndpoint,
  type McpEndpoint,
  ResourceStore,
} from '../../test/servers/index';
import { type DemoState, ENDPOINT_IDS, type EndpointId, NOTE_PREFIX, URIS } from '../shared/demo';
import { DemoError, sendJson } from './http';
import { badgePng } from './png';
import { reportText, SEED_NOTES, seedResources } from './seed';

const CLOCK_INTERVAL_MS = 1000;
const MAX_NOTE_LENGTH = 2000;
const MAX_BURST = 1000;
const MAX_OUTAGE_MS = 30_000;
const FLAKY_ERROR = { code: -32603, message: 'Simulated outage: the report service is down' };

export class DemoServer {
  readonly store = new ResourceStore();
  readonly endpoints: Record<EndpointId, McpEndpoint>;
  readonly #outageUntil: Record<EndpointId, number | undefined> = {
    modern: undefined,
    legacy: undefined,
  };
  readonly #clock: NodeJS.Timeout;
  #counter = 0;
  #nextNote = 1;
  #hue = 210;
  #reportVersion = 1;
  #failingReads = false;
  #closed = false;

  constructor() {
    for (const resource of seedResources(this.#image())) this.store.upsert(resource);
    for (const text of SEED_NOTES) this.#storeNote(text);
    this.endpoints = {
      modern: createModernEndpoint({ store: this.store, name: 'playground-modern' }),
      legacy: createLegacyEndpoint({ store: this.store, name: 'playground-legacy' }),
    };
    this.#clock = setInterval(
      () => this.#setText(URIS.clock, new Date().toISOString()),
      CLOCK_INTERVAL_MS,
    );
  }

  /** Serves one MCP exchange, unless the endpoint is in a simulated outage. */
  handle(endpoint: EndpointId, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const until = this.#outageUntil[endpoint];
    if (until !== undefined && Date.now() < until) {
      // What a restarting server or a proxy with no upstream answers.
      req.resume();
      sendJson(res, 503, {
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Demo outage: the server is unavailable' },
        id: null,
      });
      return Promise.resolve();
    }
    return this.endpoints[endpoint].handle(req, res);
  }

  setConfig(text: string): void {
    try {
      JSON.parse(text);
    } catch (error) {
      throw new DemoError(400, `config must be JSON: ${(error as Error).message}`);
    }
    this.#setText(URIS.config, text);
  }

  addNote(text: string): string {
    const trimmed = text.trim();
    if (trimmed === '') throw new DemoError(400, 'a note needs some text');
    if (trimmed.length > MAX_NOTE_LENGTH) throw new DemoError(400, 'that note is too long');
    const uri = this.#storeNote(trimmed);
    this.#listChanged();
    return uri;
  }

  removeNote(uri: string): void {
    if (!uri.startsWith(NOTE_PREFIX) || !this.store.remove(uri)) {
      throw new DemoError(404, `no note ${uri}`);
    }
    this.#listChanged();
  }

  increment(): number {
    this.#counter += 1;
    this.#setText(URIS.counter, String(this.#counter));
    return this.#counter;
  }

  /** `count` changes back to back, each with its own notification: the single-flight test. */
  burst(count: number): number {
    const n = Math.min(Math.max(Math.trunc(count), 1), MAX_BURST);
    for (let i = 0; i < n; i += 1) this.increment();
    return this.#counter;
  }

  recolor(): void {
    this.#hue = (this.#hue + 67) % 360;
    const entry = this.store.get(URIS.image);
    if (!entry) return;
    this.store.upsert({ ...entry, blob: this.#image() });
    this.#updated(URIS.image);
  }

  /**
   * Cuts the endpoint's notification streams like a network drop. With `outageMs`, the
   * endpoint then refuses every request for that long, so the reconnect has to wait and
   * changes made meanwhile can only reach the page through the re-read after recovery.
   */
  breakStream(endpoint: EndpointId, outageMs: number): void {
    const ms = Math.min(Math.max(outageMs, 0), MAX_OUTAGE_MS);
    this.#outageUntil[endpoint] = ms > 0 ? Date.now() + ms : undefined;
    this.endpoints[endpoint].dropStreams();
  }

  /**
   * Toggling also publishes a new report, so there is something to read at once: on the way in
   * that read fails (the page keeps the old report), on the way out it succeeds.
   */
  setFailingReads(fail: boolean): void {
    this.#failingReads = fail;
    this.store.failReads(URIS.flaky, fail ? FLAKY_ERROR : null);
    this.#reportVersion += 1;
    this.#setText(URIS.flaky, reportText(this.#reportVersion));
  }

  state(): DemoState {
    const now = Date.now();
    const view = (id: EndpointId) => {
      const endpoint = this.endpoints[id];
      return {
        subscribedUris: endpoint.subscribedUris(),
        openStreams: endpoint.openStreams(),
        reads: endpoint.counters().reads,
      };
    };
    const until = (id: EndpointId) => {
      const value = this.#outageUntil[id];
      return value !== undefined && value > now ? value : undefined;
    };
    return {
      counter: this.#counter,
      failingReads: this.#failingReads,
      outageUntil: { modern: until('modern'), legacy: until('legacy') },
      endpoints: { modern: view('modern'), legacy: view('legacy') },
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#clock);
    await Promise.all(ENDPOINT_IDS.map((id) => this.endpoints[id].close()));
  }

  #storeNote(text: string): string {
    const uri = `${NOTE_PREFIX}${this.#nextNote}`;
    this.store.upsert({
      uri,
      name: `note-${this.#nextNote}`,
      title: `Note ${this.#nextNote}`,
      mimeType: 'text/plain',
      text,
    });
    this.#nextNote += 1;
    return uri;
  }

  #image(): string {
    return badgePng(this.#hue).toString('base64');
  }

  #setText(uri: string, text: string): void {
    this.store.setText(uri, text);
    this.#updated(uri);
  }

  #updated(uri: string): void {
    for (const id of ENDPOINT_IDS) this.endpoints[id].resourceUpdated(uri);
  }

  #listChanged(): void {
    for (const id of ENDPOINT_IDS) this.endpoints[id].resourcesChanged();
  }
}
