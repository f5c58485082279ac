import type { Emit } from './events';

/**
 * How long a change found by a read may still be announced before it counts
 * as silent: a notification can be slower than a read (a busy bus, events
 * queued during a Redis blip).
 */
const SILENCE_GRACE_MS = 2000;

/** Where a read started, to judge later whether a change came unannounced. */
export interface ReadMarker {
  epoch: number;
  notifications: number;
}

/** Per covered URI: what the silence check needs. Dropped when coverage ends. */
interface Record {
  epoch: number;
  notifications: number;
  lastActivity: number;
  lastReadStart: ReadMarker | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

let epochs = 0;

/**
 * "Subscribed but silent", judged on the read path: a read that finds new
 * content although its URI was covered throughout since the previous read
 * and no notification came meanwhile means the server changed it without
 * telling us. It keeps something only for URIs covered now.
 */
export class SilenceWatch {
  readonly #records = new Map<string, Record>();
  readonly #emit: Emit;

  constructor(emit: Emit) {
    this.#emit = emit;
  }

  covered(gained: readonly string[], lost: readonly string[]): void {
    for (const uri of lost) {
      clearTimeout(this.#records.get(uri)?.timer);
      this.#records.delete(uri);
    }
    const now = Date.now();
    for (const uri of gained) {
      epochs += 1;
      this.#records.set(uri, {
        epoch: epochs,
        notifications: 0,
        lastActivity: now,
        lastReadStart: undefined,
        timer: undefined,
      });
    }
  }

  notified(uri: string): void {
    const record = this.#records.get(uri);
    if (!record) return;
    record.notifications += 1;
    record.lastActivity = Date.now();
  }

  /** A read of `uri` starts: the marker of the read before it, for `readSucceeded`. */
  beginRead(uri: string): ReadMarker | undefined {
    const record = this.#records.get(uri);
    if (!record) return undefined;
    const previous = record.lastReadStart;
    record.lastReadStart = { epoch: record.epoch, notifications: record.notifications };
    record.lastActivity = Date.now();
    return previous;
  }

  /**
   * A read succeeded. `changed` (comparing contents) is asked only when the
   * change would count as silent, so the common path — a read that follows a
   * notification — costs nothing. A notification within the grace period
   * still announces it.
   */
  readSucceeded(uri: string, previous: ReadMarker | undefined, changed: () => boolean): void {
    const record = this.#records.get(uri);
    if (
      !record ||
      !previous ||
      record.timer !== undefined ||
      previous.epoch !== record.epoch ||
      previous.notifications !== record.notifications ||
      !changed()
    ) {
      return;
    }
    const announced = record.notifications;
    record.timer = setTimeout(() => {
      record.timer = undefined;
      if (this.#records.get(uri) === record && record.notifications === announced) {
        this.#emit({ type: 'silent', uri });
      }
    }, SILENCE_GRACE_MS);
    (record.timer as { unref?: () => void }).unref?.();
  }

  /** Covered URIs with no notification and no read for `quietMs`. */
  quiet(quietMs: number): string[] {
    const now = Date.now();
    const quiet: string[] = [];
    for (const [uri, record] of this.#records) {
      if (now - record.lastActivity >= quietMs) quiet.push(uri);
    }
    return quiet;
  }

  dispose(): void {
    for (const record of this.#records.values()) clearTimeout(record.timer);
    this.#records.clear();
  }
}
