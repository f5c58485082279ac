import { describe, expect, it } from 'vitest';
import { Turns } from '../../src/core/turns';
import { track } from '../support/deferred';

/** Lets pending promise continuations run (a few microtask hops). */
async function settle() {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}
const alive = () => new AbortController().signal;

describe('Turns', () => {
  it('gives `limit` turns at once; the next waits until one is given back', async () => {
    const turns = new Turns(2);
    await turns.take(alive());
    await turns.take(alive());
    const third = track(turns.take(alive()));
    await settle();
    expect(third.state).toBe('pending');
    turns.giveBack();
    await settle();
    expect(third.state).toBe('resolved');
  });

  it('waiters get their turns in the order they asked', async () => {
    const turns = new Turns(1);
    await turns.take(alive());
    const order: string[] = [];
    const waits = ['a', 'b', 'c'].map((name) => turns.take(alive()).then(() => order.push(name)));
    for (const wait of waits) {
      turns.giveBack();
      await wait;
    }
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('a waiter whose signal aborts leaves the line with its reason and takes no turn', async () => {
    const turns = new Turns(1);
    await turns.take(alive());
    const leaving = new AbortController();
    const left = track(turns.take(leaving.signal));
    const next = track(turns.take(alive()));
    leaving.abort(new Error('unmounted'));
    await settle();
    expect(left.state).toBe('rejected');
    expect(left.error).toEqual(new Error('unmounted'));
    turns.giveBack();
    await settle();
    expect(next.state).toBe('resolved');
  });

  it('a turn given back with nobody waiting is free for the next taker', async () => {
    const turns = new Turns(1);
    await turns.take(alive());
    turns.giveBack();
    await turns.take(alive());
    const waiting = track(turns.take(alive()));
    await settle();
    expect(waiting.state).toBe('pending');
  });
});
