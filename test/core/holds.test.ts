import { afterEach, describe, expect, it, vi } from 'vitest';
import { Holds } from '../../src/core/holds';

afterEach(() => {
  vi.useRealTimers();
});

describe('Holds (rule 11: a connection ends once nobody holds it)', () => {
  it('ends on the next macrotask after the last release, and a new hold before then keeps it (StrictMode)', () => {
    vi.useFakeTimers();
    const end = vi.fn();
    const holds = new Holds(end);
    const first = holds.take();
    const second = holds.take();
    first();
    first(); // a release counts once
    vi.runAllTimers();
    expect(end).not.toHaveBeenCalled();
    second();
    const again = holds.take(); // unmount → mount in the same task
    vi.runAllTimers();
    expect(end).not.toHaveBeenCalled();
    again();
    expect(end).not.toHaveBeenCalled();
    vi.runAllTimers();
    expect(end).toHaveBeenCalledTimes(1);
  });

  it('cancel() drops a deferred end (the thing was disposed directly)', () => {
    vi.useFakeTimers();
    const end = vi.fn();
    const holds = new Holds(end);
    holds.take()();
    holds.cancel();
    vi.runAllTimers();
    expect(end).not.toHaveBeenCalled();
  });
});
