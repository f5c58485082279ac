/**
 * Ref-counted holds on something that ends once nobody holds it: the last
 * release ends it on the next macrotask, so React StrictMode's
 * mount → unmount → mount keeps it (one connection, one stream).
 */
export class Holds {
  readonly #end: () => void;
  #count = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(end: () => void) {
    this.#end = end;
  }

  /** One more holder; the returned function lets go (once, however often called). */
  take(): () => void {
    this.#count += 1;
    clearTimeout(this.#timer);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#count -= 1;
      if (this.#count === 0) this.#timer = setTimeout(this.#end, 0);
    };
  }

  /** The end came another way (disposed directly): no deferred end is left waiting. */
  cancel(): void {
    clearTimeout(this.#timer);
  }
}
