import type { CloseReason, StreamStatus } from './channel';
import type { ConnectionPhase } from './connection';
import type { ListKind, NotifiedList } from './lists';

/** Everything that happens between the server and the cache, as it happens. */
export type McpEvent = { at: number } & (
  | { type: 'status'; status: ConnectionPhase | 'reconnecting' }
  | { type: 'updated'; uri: string; matched: boolean }
  | { type: 'list_changed'; list: NotifiedList }
  | { type: 'malformed'; method: string; reason: string }
  | { type: 'read'; phase: 'start' | 'success' | 'error'; uri: string; error?: string }
  | {
      type: 'list';
      list: ListKind;
      phase: 'start' | 'success' | 'error';
      count?: number;
      error?: string;
    }
  | {
      type: 'stream';
      kind: StreamStatus['kind'];
      state: StreamStatus['state'];
      reason: CloseReason | undefined;
    }
  | { type: 'coverage'; acknowledged: string[]; lost: string[]; lists: NotifiedList[] }
);

type Listener = (event: McpEvent) => void;

/** Synchronous fan-out; costs nothing while nobody listens. */
export class EventHub {
  readonly #listeners = new Set<Listener>();

  get active(): boolean {
    return this.#listeners.size > 0;
  }

  subscribe = (listener: Listener): (() => void) => {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  };

  /** `make` runs only when someone listens, so a notification flood allocates nothing. */
  emit(make: () => McpEvent): void {
    if (this.#listeners.size === 0) return;
    const event = make();
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // A broken listener must not break delivery to the cache.
      }
    }
  }
}
