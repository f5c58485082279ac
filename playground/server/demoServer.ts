/**
 * The playground's MCP backend: one ResourceStore behind a 2026-07-28 endpoint and a 2025 legacy
 * endpoint, plus the demo's own behaviour (a ticking clock, a counter, notes, a flaky read, and
 * tools: `rename_board` asks the user for a new title and changes `board://team`, tools.ts).
 *
 * Every change is published on both endpoints: a page may be connected to either, and an
 * endpoint only delivers to its own subscribers, so publishing on one would leave the other
 * silently stale.
 *
 * The 2026-07-28 side is one endpoint by default. In scaled mode (`scaledDemo.ts`) it is a
 * deployment of several instances behind a round-robin proxy, and a change is published on the
 * one instance that handled it (`via`), exactly like an app server announcing its own write.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AskRecord,
  createLegacyEndpoint,
  createModernEndpoint,
  type McpEndpoint,
  type ResourceStore,
} from '../../test/servers/index';
import {
  type Board,
  type DemoState,
  type EndpointId,
  type EndpointView,
  NOTE_PREFIX,
  type ScaleView,
  URIS,
} from '../shared/demo';
import { DEMO_PROMPTS, DEMO_TEMPLATES } from './catalog';
import { DemoError, sendJson } from './http';
import { badgePng } from './png';
import { PUBLIC, reportText, SEED_NOTES, seedResources } from './seed';
import { acceptedBoard, DemoStore, demoTools, INITIAL_BOARD } from './tools';

const CLOCK_INTERVAL_MS = 1000;
const MAX_NOTE_LENGTH = 2000;
const MAX_BURST = 1000;
const MAX_OUTAGE_MS = 30_000;
const FLAKY_ERROR = { code: -32603, message: 'Simulated outage: the report service is down' };

/** Where a change is announced on the 2026-07-28 side. */
export interface Publisher {
  resourceUpdated(uri: string): void;
  resourcesChanged(): void;
}

/** The 2026-07-28 side: one endpoint, or a scaled deployment behind a proxy. */
export interface ModernSide extends Publisher {
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** What the server side believes, over all instances. */
  view(): EndpointView;
  dropStreams(): void;
  close(): Promise<void>;
  /** Who announces a change no request made (a clock tick): the endpoint, or the next instance. */
  scheduled(): Publisher;
  /** Scaled mode only. */
  scaleView?(): ScaleView;
}

/** The default: one `createModernEndpoint`, as in a single-process deployment. */
function singleModern(store: ResourceStore): ModernSide {
  const endpoint = createModernEndpoint({ store, name: 'playground-modern' });
  const side: ModernSide = {
    handle: (req, res) => endpoint.handle(req, res),
    resourceUpdated: (uri) => endpoint.resourceUpdated(uri),
    resourcesChanged: () => endpoint.resourcesChanged(),
    view: () => ({
      subscribedUris: endpoint.subscribedUris(),
      openStreams: endpoint.openStreams(),
      sessions: endpoint.liveSessions(),
      reads: endpoint.counters().reads,
    }),
    dropStreams: () => endpoint.dropStreams(),
    close: () => endpoint.close(),
    scheduled: () => side,
  };
  return side;
}

export class DemoServer {
  readonly store: DemoStore;
  readonly modern: ModernSide;
  readonly legacy: McpEndpoint;
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
  /** Off: the clock stops, and a page hears nothing (its keep-alive then pings). */
  #clockRunning = true;
  #board: Board = INITIAL_BOARD;
  #closed = false;

  /** Without options: one process, one modern endpoint (the default playground). */
  constructor(options: { store?: DemoStore; modern?: (store: ResourceStore) => ModernSide } = {}) {
    this.store = options.store ?? new DemoStore();
    for (const resource of seedResources(this.#image(), this.#board)) this.store.upsert(resource);
    for (const text of SEED_NOTES) this.#storeNote(text);
    this.store.setTools(demoTools(this.#board));
    this.store.setPrompts(DEMO_PROMPTS);
    this.store.setTemplates(DEMO_TEMPLATES);
    this.store.onAnswered = (record) => this.#answered(record);
    this.modern = (options.modern ?? singleModern)(this.store);
    this.legacy = createLegacyEndpoint({ store: this.store, name: 'playground-legacy' });
    // A scheduled job: in scaled mode each tick runs on the next instance in turn.
    this.#clock = setInterval(() => {
      if (this.#clockRunning) {
        this.#setText(URIS.clock, new Date().toISOString(), this.modern.scheduled());
      }
    }, CLOCK_INTERVAL_MS);
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
    return endpoint === 'modern' ? this.modern.handle(req, res) : this.legacy.handle(req, res);
  }

  /** `via`: the 2026-07-28 publisher of the change (scaled mode: the instance that handled it). */
  setConfig(text: string, via: Publisher = this.modern): void {
    try {
      JSON.parse(text);
    } catch (error) {
      throw new DemoError(400, `config must be JSON: ${(error as Error).message}`);
    }
    this.#setText(URIS.config, text, via);
  }

  addNote(text: string, via: Publisher = this.modern): string {
    const trimmed = text.trim();
    if (trimmed === '') throw new DemoError(400, 'a note needs some text');
    if (trimmed.length > MAX_NOTE_LENGTH) throw new DemoError(400, 'that note is too long');
    const uri = this.#storeNote(trimmed);
    this.#listChanged(via);
    return uri;
  }

  removeNote(uri: string, via: Publisher = this.modern): void {
    if (!uri.startsWith(NOTE_PREFIX) || !this.store.remove(uri)) {
      throw new DemoError(404, `no note ${uri}`);
    }
    this.#listChanged(via);
  }

  increment(via: Publisher = this.modern): number {
    this.#counter += 1;
    this.#setText(URIS.counter, String(this.#counter), via);
    return this.#counter;
  }

  /** `count` changes back to back, each with its own notification: the single-flight test. */
  burst(count: number, via: Publisher = this.modern): number {
    const n = Math.min(Math.max(Math.trunc(count), 1), MAX_BURST);
    for (let i = 0; i < n; i += 1) this.increment(via);
    return this.#counter;
  }

  recolor(via: Publisher = this.modern): void {
    this.#hue = (this.#hue + 67) % 360;
    const entry = this.store.get(URIS.image);
    if (!entry) return;
    this.store.upsert({ ...entry, blob: this.#image() });
    this.#updated(URIS.image, via);
  }

  /**
   * Cuts the endpoint's notification streams like a network drop. With `outageMs`, the
   * endpoint then refuses every request for that long, so the reconnect has to wait and
   * changes made meanwhile can only reach the page through the re-read after recovery.
   */
  breakStream(endpoint: EndpointId, outageMs: number): void {
    const ms = Math.min(Math.max(outageMs, 0), MAX_OUTAGE_MS);
    this.#outageUntil[endpoint] = ms > 0 ? Date.now() + ms : undefined;
    if (endpoint === 'modern') this.modern.dropStreams();
    else this.legacy.dropStreams();
  }

  /**
   * Toggling also publishes a new report, so there is something to read at once: on the way in
   * that read fails (the page keeps the old report), on the way out it succeeds.
   */
  setFailingReads(fail: boolean, via: Publisher = this.modern): void {
    this.#failingReads = fail;
    this.store.failReads(URIS.flaky, fail ? FLAKY_ERROR : null);
    this.#reportVersion += 1;
    this.#setText(URIS.flaky, reportText(this.#reportVersion), via);
  }

  setClock(running: boolean): void {
    this.#clockRunning = running;
  }

  state(): DemoState {
    const now = Date.now();
    const until = (id: EndpointId) => {
      const value = this.#outageUntil[id];
      return value !== undefined && value > now ? value : undefined;
    };
    const state: DemoState = {
      counter: this.#counter,
      failingReads: this.#failingReads,
      outageUntil: { modern: until('modern'), legacy: until('legacy') },
      endpoints: {
        modern: this.modern.view(),
        legacy: {
          subscribedUris: this.legacy.subscribedUris(),
          openStreams: this.legacy.openStreams(),
          sessions: this.legacy.liveSessions(),
          reads: this.legacy.counters().reads,
        },
      },
    };
    const scale = this.modern.scaleView?.();
    if (scale) state.scale = scale;
    return state;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#clock);
    await Promise.all([this.modern.close(), this.legacy.close()]);
  }

  /** The user accepted the rename form: the board changes, and every page showing it follows. */
  #answered(record: AskRecord): void {
    const board = acceptedBoard(record, this.#board);
    if (!board || this.#closed) return;
    this.#board = board;
    // The next form starts from the board as it is now (a tool entry, so no list_changed).
    this.store.setTools(demoTools(board));
    this.#setText(URIS.board, JSON.stringify(board, null, 2), this.modern);
  }

  #storeNote(text: string): string {
    const uri = `${NOTE_PREFIX}${this.#nextNote}`;
    this.store.upsert({
      uri,
      name: `note-${this.#nextNote}`,
      title: `Note ${this.#nextNote}`,
      mimeType: 'text/plain',
      text,
      ...PUBLIC,
    });
    this.#nextNote += 1;
    return uri;
  }

  #image(): string {
    return badgePng(this.#hue).toString('base64');
  }

  #setText(uri: string, text: string, via: Publisher): void {
    this.store.setText(uri, text);
    this.#updated(uri, via);
  }

  #updated(uri: string, via: Publisher): void {
    via.resourceUpdated(uri);
    this.legacy.resourceUpdated(uri);
  }

  #listChanged(via: Publisher): void {
    via.resourcesChanged();
    this.legacy.resourcesChanged();
  }
}
