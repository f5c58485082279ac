import type { SyncInternals } from './internals';
import type { McpKeys } from './keys';
import { isName, isObject } from './shapes';
import { Store } from './store';

/** The most tasks kept per server and identity (the oldest are forgotten first). */
const MAX_STORED = 100;
/** The longest task id or tool name kept. */
const MAX_ID = 256;

/** A task this app started, as storage keeps it. */
export interface StoredTask {
  taskId: string;
  /** The tool it runs. */
  name: string;
  startedAt: number;
}

/** Where the tasks an app started are kept: `localStorage` by default. */
export type TaskStorage = Pick<Storage, 'getItem' | 'setItem'>;

/**
 * The tasks this app started on one server (and scope, and identity), in storage: every tab,
 * and the page after a reload, sees them. Checked when read (storage is the origin's, and
 * any script of it can write there), bounded, the oldest forgotten first.
 */
export class TaskBook {
  readonly #internals: SyncInternals;
  readonly #keys: McpKeys;
  readonly #storage: TaskStorage | undefined;
  readonly #store = new Store<readonly StoredTask[]>([]);
  #read: string | null | undefined;

  constructor(internals: SyncInternals, keys: McpKeys, storage: TaskStorage | undefined) {
    this.#internals = internals;
    this.#keys = keys;
    this.#storage = storage;
  }

  /** The stored tasks, oldest first (the same array until they change). */
  list = (): readonly StoredTask[] => {
    let raw: string | null = null;
    try {
      raw = this.#storage?.getItem(this.#name()) ?? null;
    } catch {
      // Storage that refuses to be read (a privacy mode): nothing kept.
    }
    if (raw !== this.#read) {
      this.#read = raw;
      this.#store.set(parse(raw));
    }
    return this.#store.get();
  };

  subscribe = (listener: () => void): (() => void) => {
    const stop = this.#store.subscribe(listener);
    // Another tab wrote: read again (the event names no key we could trust).
    const onStorage = () => this.list();
    const page = globalThis as { addEventListener?: Window['addEventListener'] };
    page.addEventListener?.('storage', onStorage);
    return () => {
      stop();
      (globalThis as { removeEventListener?: Window['removeEventListener'] }).removeEventListener?.(
        'storage',
        onStorage,
      );
    };
  };

  add(entry: StoredTask): void {
    this.#write([...this.list().filter((task) => task.taskId !== entry.taskId), entry]);
  }

  remove(taskId: string): void {
    this.#write(this.list().filter((task) => task.taskId !== taskId));
  }

  #write(tasks: StoredTask[]): void {
    const raw = JSON.stringify(tasks.slice(-MAX_STORED));
    try {
      this.#storage?.setItem(this.#name(), raw);
    } catch {
      // Full or refused: this page still knows them.
    }
    this.#read = raw;
    this.#store.set(parse(raw));
  }

  /**
   * Per server, scope and signed-in identity: another user's tasks are not this one's. The parts
   * as JSON, so no spelling of one runs into the next, and scope `""` is not the absence of one.
   */
  #name(): string {
    const { connection, auth } = this.#internals.identity();
    const parts = [connection, this.#keys.scope ?? null, auth ?? null];
    return `mcp-react-query:tasks:${JSON.stringify(parts)}`;
  }
}

function parse(raw: string | null): StoredTask[] {
  let value: unknown;
  try {
    value = raw === null ? [] : JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  return value
    .filter(
      (entry): entry is StoredTask =>
        isObject(entry) &&
        isName(entry.taskId) &&
        entry.taskId.length <= MAX_ID &&
        typeof entry.name === 'string' &&
        entry.name.length <= MAX_ID &&
        Number.isFinite(entry.startedAt),
    )
    .slice(-MAX_STORED);
}
