/** Whether the platform says we are online (always true where it cannot tell, e.g. Node). */
export function isOnline(): boolean {
  const nav = (globalThis as { navigator?: { onLine?: boolean } }).navigator;
  return nav?.onLine !== false;
}

type Target = { addEventListener?: (type: string, fn: () => void) => void } & {
  removeEventListener?: (type: string, fn: () => void) => void;
};

/**
 * One pending retry. While the browser is offline, no attempt is wasted: the
 * retry waits for the `online` event and then runs at once.
 */
export class RetryTimer {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopWaiting: (() => void) | undefined;

  /** `signal`: the owner's lifetime; once it ends, nothing pending runs. */
  constructor(signal?: AbortSignal) {
    signal?.addEventListener('abort', () => this.cancel(), { once: true });
  }

  get pending(): boolean {
    return this.#timer !== undefined || this.#stopWaiting !== undefined;
  }

  /** Runs `run` after `delayMs`, or when the network returns if offline. Returns whether it is waiting for the network. */
  schedule(delayMs: number, run: () => void): boolean {
    this.cancel();
    if (!isOnline()) {
      const target = globalThis as Target;
      const onOnline = () => {
        this.cancel();
        run();
      };
      target.addEventListener?.('online', onOnline);
      this.#stopWaiting = () => target.removeEventListener?.('online', onOnline);
      return true;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      run();
    }, delayMs);
    return false;
  }

  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#stopWaiting?.();
    this.#stopWaiting = undefined;
  }
}
