import { describe, expect, it } from 'vitest';
import { Turns } from '../../src/core/turns';
import { track } from '../support/deferred';

/** Lets pending promise continuations run (a few microtask hops). */
async function settle() {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}
const alive = () => new AbortController().signal;

/** A take that has to wait: its promise. */
function waiting(turns: Turns, signal = alive()): Promise<void> {
  const turn = turns.take(signal);
  expect(turn).toBeInstanceOf(Promise);
  return turn as Promise<void>;
}

describe('Turns', () => {
  it('gives `limit` turns at once, without waiting; the next waits until one is given back', async () => {
    const turns = new Turns(2);
    expect(turns.take(alive())).toBeUndefined();
    expect(turns.take(alive())).toBeUndefined();
    const third = track(waiting(turns));
    await settle();
    expect(third.state).toBe('pending');
    turns.giveBack();
    await settle();
    expect(third.state).toBe('resolved');
  });

  it('waiters get their turns in the order they asked', async () => {
    const turns = new Turns(1);
    turns.take(alive());
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
    turns.take(alive());
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

  it('a turn given back with nobody waiting is free for the next taker', () => {
    const turns = new Turns(1);
    turns.take(alive());
    turns.giveBack();
    expect(turns.take(alive())).toBeUndefined();
    expect(turns.take(alive())).toBeInstanceOf(Promise);
  });
});
