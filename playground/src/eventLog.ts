import type { McpEvent } from './mcp';

export interface LoggedEvent {
  id: number;
  event: McpEvent;
}

export interface UriCounts {
  notifications: number;
  reads: number;
  readErrors: number;
}

export interface EventTotals {
  notifications: number;
  unmatched: number;
  reads: number;
  readErrors: number;
  listReads: number;
  listChanged: number;
  streamOpens: number;
  streamCloses: number;
  acks: number;
}

export interface EventLogSnapshot {
  /** Newest first, at most `MAX_ENTRIES`. */
  entries: LoggedEvent[];
  totals: EventTotals;
  perUri: ReadonlyMap<string, UriCounts>;
}

const MAX_ENTRIES = 300;
// A burst of 100 notifications arrives in one go; one render for all of them is enough.
const EMIT_EVERY_MS = 50;

const zeroTotals = (): EventTotals => ({
  notifications: 0,
  unmatched: 0,
  reads: 0,
  readErrors: 0,
  listReads: 0,
  listChanged: 0,
  streamOpens: 0,
  streamCloses: 0,
  acks: 0,
});

/** Keeps the recent events and running counts, for useSyncExternalStore. */
export class EventLog {
  #entries: LoggedEvent[] = [];
  #totals = zeroTotals();
  #perUri = new Map<string, UriCounts>();
  #nextId = 1;
  #snapshot: EventLogSnapshot | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #listeners = new Set<() => void>();

  record = (event: McpEvent): void => {
    this.#entries.unshift({ id: this.#nextId++, event });
    if (this.#entries.length > MAX_ENTRIES) this.#entries.length = MAX_ENTRIES;
    this.#count(event);
    this.#changed();
  };

  /** Zero the counters; the log itself stays. */
  reset = (): void => {
    this.#totals = zeroTotals();
    this.#perUri = new Map();
    this.#changed();
  };

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  };

  getSnapshot = (): EventLogSnapshot => {
    this.#snapshot ??= {
      entries: [...this.#entries],
      totals: { ...this.#totals },
      perUri: new Map([...this.#perUri].map(([uri, counts]) => [uri, { ...counts }])),
    };
    return this.#snapshot;
  };

  #uri(uri: string): UriCounts {
    let counts = this.#perUri.get(uri);
    if (!counts) {
      counts = { notifications: 0, reads: 0, readErrors: 0 };
      this.#perUri.set(uri, counts);
    }
    return counts;
  }

  #count(event: McpEvent): void {
    const totals = this.#totals;
    switch (event.type) {
      case 'updated':
        if (event.matched) {
          totals.notifications += 1;
          this.#uri(event.uri).notifications += 1;
        } else {
          totals.unmatched += 1;
        }
        break;
      case 'read':
        if (event.phase === 'start') {
          totals.reads += 1;
          this.#uri(event.uri).reads += 1;
        } else if (event.phase === 'error') {
          totals.readErrors += 1;
          this.#uri(event.uri).readErrors += 1;
        }
        break;
      case 'list':
        if (event.phase === 'start') totals.listReads += 1;
        break;
      case 'list_changed':
        totals.listChanged += 1;
        break;
      case 'stream':
        if (event.status.state === 'open') totals.streamOpens += 1;
        else if (event.status.state === 'reopening' || event.status.state === 'closed') {
          totals.streamCloses += 1;
        }
        break;
      case 'coverage':
        if (event.acknowledged.length > 0) totals.acks += 1;
        break;
    }
  }

  #changed(): void {
    this.#snapshot = undefined;
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      for (const listener of [...this.#listeners]) listener();
    }, EMIT_EVERY_MS);
  }
}
