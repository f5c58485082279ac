import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../src/core/backoff';

describe('backoff', () => {
  const options = { initialDelayMs: 500, maxDelayMs: 15_000 };

  it('grows exponentially under full jitter and is capped', () => {
    expect(backoffDelay(0, options, () => 0.999)).toBe(499);
    expect(backoffDelay(3, options, () => 0.999)).toBe(3996);
    expect(backoffDelay(50, options, () => 0.999)).toBe(14_985);
    expect(backoffDelay(5, options, () => 0)).toBe(0);
  });
});
