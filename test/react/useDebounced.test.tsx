/** @vitest-environment jsdom */
/**
 * The pause `useCompletion` waits for before asking: a value that keeps changing is passed on
 * once, `ms` after its last change (fake timers: nothing here waits for real time).
 */
import { act, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { useDebounced } from '../../src/react/useDebounced';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

it('passes a value on only once it has stopped changing for the delay', () => {
  const { result, rerender } = renderHook(({ value }) => useDebounced(value, 100), {
    initialProps: { value: 'a' },
  });
  expect(result.current).toBe('a');
  rerender({ value: 'al' });
  act(() => vi.advanceTimersByTime(60));
  rerender({ value: 'alb' });
  act(() => vi.advanceTimersByTime(99));
  expect(result.current).toBe('a');
  act(() => vi.advanceTimersByTime(1));
  expect(result.current).toBe('alb');
});
