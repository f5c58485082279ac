/** A promise the test settles by hand. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Where a promise stands, observed without settling it: read `state` after
 * letting microtasks run (e.g. `await vi.advanceTimersByTimeAsync(0)`).
 */
export function track<T>(promise: Promise<T>): {
  readonly state: 'pending' | 'resolved' | 'rejected';
  readonly value: T | undefined;
  readonly error: unknown;
} {
  const seen: { state: 'pending' | 'resolved' | 'rejected'; value: T | undefined; error: unknown } =
    { state: 'pending', value: undefined, error: undefined };
  promise.then(
    (value) => {
      seen.state = 'resolved';
      seen.value = value;
    },
    (error: unknown) => {
      seen.state = 'rejected';
      seen.error = error;
    },
  );
  return seen;
}
