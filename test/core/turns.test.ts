import { afterEach, describe, expect, it, vi } from 'vitest';
import { McpQueryError } from '../../src/core/errors';
import { Turns } from '../../src/core/turns';
import { track } from '../support/deferred';

/** Lets pending promise continuations run (a few microtask hops). */
async function settle() {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}
const alive = () => new AbortController().signal;
/** Longer than any of these tests waits. */
const LONG = 60_000;

/** A take that has to wait: its promise. */
function waiting(turns: Turns, signal = alive()): Promise<void> {
  const turn = turns.take(signal, LONG);
  expect(turn).toBeInstanceOf(Promise);
  return turn as Promise<void>;
}

describe('Turns', () => {
  it('gives `limit` turns at once, without waiting; the next waits until one is given back', async () => {
    const turns = new Turns(2);
    expect(turns.take(alive(), LONG)).toBeUndefined();
    expect(turns.take(alive(), LONG)).toBeUndefined();
    const third = track(waiting(turns));
    await settle();
    expect(third.state).toBe('pending');
    turns.giveBack();
    await settle();
    expect(third.state).toBe('resolved');
  });

  it('waiters get their turns in the order they asked', async () => {
    const turns = new Turns(1);
    turns.take(alive(), LONG);
    const order: string[] = [];
    const waits = ['a', 'b', 'c'].map((name) => waiting(turns).then(() => order.push(name)));
    for (const wait of waits) {
      turns.giveBack();
      await wait;
    }
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('a waiter whose signal aborts leaves the line with its reason and takes no turn', async () => {
    const turns = new Turns(1);
    turns.take(alive(), LONG);
    const leaving = new AbortController();
    const left = track(waiting(turns, leaving.signal));
    const next = track(waiting(turns));
    leaving.abort(new Error('unmounted'));
    await settle();
    expect(left.state).toBe('rejected');
    expect(left.error).toEqual(new Error('unmounted'));
    turns.giveBack();
    await settle();
    expect(next.state).toBe('resolved');
  });

  it('a take with a signal already aborted and no turn free fails with its reason, and holds no place in line', async () => {
    const turns = new Turns(1);
    turns.take(alive(), LONG);
    const gone = new AbortController();
    gone.abort(new Error('unmounted'));
    const late = track(waiting(turns, gone.signal));
    const next = track(waiting(turns));
    await settle();
    expect(late.state).toBe('rejected');
    expect(late.error).toEqual(new Error('unmounted'));
    turns.giveBack();
    await settle();
    expect(next.state).toBe('resolved');
  });

  it('a turn given back with nobody waiting is free for the next taker', () => {
    const turns = new Turns(1);
    turns.take(alive(), LONG);
    turns.giveBack();
    expect(turns.take(alive(), LONG)).toBeUndefined();
    expect(turns.take(alive(), LONG)).toBeInstanceOf(Promise);
  });

  it('a waiter still in line after its timeout leaves with TIMEOUT and takes no turn', async () => {
    vi.useFakeTimers();
    const turns = new Turns(1);
    turns.take(alive(), LONG);
    const late = track(turns.take(alive(), 1000) as Promise<void>);
    const next = track(waiting(turns));
    await vi.advanceTimersByTimeAsync(999);
    expect(late.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(late.state).toBe('rejected');
    expect(late.error).toBeInstanceOf(McpQueryError);
    expect((late.error as McpQueryError).code).toBe('TIMEOUT');
    turns.giveBack();
    await vi.advanceTimersByTimeAsync(0);
    expect(next.state).toBe('resolved');
  });
});

afterEach(() => {
  vi.useRealTimers();
});
