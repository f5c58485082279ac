/** What a view reports from its commit (layout) effect: the text it now shows. */
export type Track = (id: number, text: string | undefined) => void;

interface Shown {
  text: string | undefined;
  /** performance.now() of the commit that put `text` on screen. */
  at: number;
}

interface Waiter {
  id: number;
  text: string;
  resolve: (at: number) => void;
}

/**
 * Every view reports each text it commits to the DOM, with the time. That is
 * "the component shows the content": the layout effect runs right after React
 * has written the DOM, before the browser could paint.
 */
export class Tracker {
  readonly #shown = new Map<number, Shown>();
  readonly #waiters = new Set<Waiter>();
  commits = 0;

  readonly report: Track = (id, text) => {
    const at = performance.now();
    this.commits += 1;
    this.#shown.set(id, { text, at });
    for (const waiter of this.#waiters) {
      if (waiter.id === id && waiter.text === text) {
        this.#waiters.delete(waiter);
        waiter.resolve(at);
      }
    }
  };

  text(id: number): string | undefined {
    return this.#shown.get(id)?.text;
  }

  /** When `id` started showing its current text. */
  since(id: number): number | undefined {
    return this.#shown.get(id)?.at;
  }

  forget(id: number): void {
    this.#shown.delete(id);
  }

  /** Resolves with the commit time once `id` shows `text` (now, if it already does). */
  waitFor(id: number, text: string): Promise<number> {
    const shown = this.#shown.get(id);
    if (shown?.text === text) return Promise.resolve(shown.at);
    return new Promise((resolve) => this.#waiters.add({ id, text, resolve }));
  }
}
