import { afterEach, describe, expect, it, vi } from 'vitest';
import { delay, onEnd, within } from '../../src/core/lifetime';

/** A lifetime whose `abort` listeners are counted as they are added and removed. */
function countedLifetime() {
  const life = new AbortController();
  let listeners = 0;
  const add = life.signal.addEventListener.bind(life.signal);
  const remove = life.signal.removeEventListener.bind(life.signal);
  life.signal.addEventListener = ((...args: Parameters<typeof add>) => {
    if (args[0] === 'abort') listeners += 1;
    add(...args);
  }) as typeof add;
  life.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    if (args[0] === 'abort') listeners -= 1;
    remove(...args);
  }) as typeof remove;
  return { life, listeners: () => listeners };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('lifetimes (rule 11: nothing outlives what it belongs to)', () => {
  it('hundreds of timers, children and endings on one lifetime add one listener to it, and all end with it', () => {
    vi.useFakeTimers();
    const { life, listeners } = countedLifetime();
    const fired: string[] = [];
    const children = Array.from({ length: 300 }, () => within(life.signal));
    for (let i = 0; i < 300; i++) delay(life.signal, 1000, () => fired.push(`timer ${i}`));
    for (let i = 0; i < 300; i++) onEnd(life.signal, () => fired.push(`end ${i}`));
    expect(listeners()).toBe(1);

    life.abort();
    vi.advanceTimersByTime(2000);
    expect(children.every((child) => child.signal.aborted)).toBe(true);
    expect(fired.filter((f) => f.startsWith('timer'))).toEqual([]);
    expect(fired.filter((f) => f.startsWith('end'))).toHaveLength(300);
  });

  it('work that ends first is forgotten by its lifetime: a fired timer, an ended child, a forgotten ending', () => {
    vi.useFakeTimers();
    const { life } = countedLifetime();
    const ended: string[] = [];
    delay(life.signal, 10, () => ended.push('timer'));
    const child = within(life.signal);
    child.abort();
    const forget = onEnd(life.signal, () => ended.push('forgotten'));
    forget();
    vi.advanceTimersByTime(10);
    expect(ended).toEqual(['timer']);

    life.abort();
    expect(ended).toEqual(['timer']);
  });

  it('an ended lifetime ends what is bound to it at once', () => {
    const life = new AbortController();
    life.abort();
    const ended: string[] = [];
    onEnd(life.signal, () => ended.push('end'));
    expect(within(life.signal).signal.aborted).toBe(true);
    expect(ended).toEqual(['end']);
  });

  it('an ending that throws is reported, and the endings after it still run', () => {
    const reported: Array<() => void> = [];
    vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((task) => reported.push(task));
    const life = new AbortController();
    const ended: string[] = [];
    onEnd(life.signal, () => {
      throw new Error('a broken ending');
    });
    onEnd(life.signal, () => ended.push('next'));
    life.abort();
    vi.restoreAllMocks();
    expect(ended).toEqual(['next']);
    expect(reported).toHaveLength(1);
    expect(() => reported[0]?.()).toThrow('a broken ending');
  });
});
