/**
 * How much one view may ask of its host. A view is untrusted code: each of its messages costs the
 * host work, and its tool calls and subscriptions cost the server work, so they are bounded. A
 * limit that is not a number from 0 (`undefined`, `NaN`) keeps its default; `Infinity` lifts it.
 */
export interface AppLimits {
  /** Messages a view may send in one burst; past it the view is closed (default 200). */
  burst?: number;
  /** Messages per second a view may keep sending once its burst is spent (default 20). */
  perSecond?: number;
  /** Requests of one view waiting for an answer at once; more are refused (default 16). */
  inFlight?: number;
  /** Resources one view may subscribe to (default 64). */
  subscriptions?: number;
}

export const DEFAULT_LIMITS: Required<AppLimits> = {
  burst: 200,
  perSecond: 20,
  inFlight: 16,
  subscriptions: 64,
};

/**
 * The limits of one view: each given one that is a number of at least 0 (`Infinity` lifts it),
 * the default for the rest. A spread would let `{ burst: undefined }` (or `NaN`) through, and
 * every comparison with it is false: the view would be unbounded.
 */
export function limitsOf(given: AppLimits | undefined): Required<AppLimits> {
  const limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(limits) as Array<keyof AppLimits>) {
    const value = given?.[key];
    if (typeof value === 'number' && value >= 0) limits[key] = value;
  }
  return limits;
}

/**
 * A token bucket: `burst` messages at once, refilled at `perSecond`. Exceeding it is not
 * throttled but final: a view that floods its host is broken or hostile, and waiting on it would
 * only keep the host busy.
 */
export class MessageBudget {
  readonly #burst: number;
  readonly #perMs: number;
  readonly #now: () => number;
  #tokens: number;
  #at: number;

  constructor(limits: Pick<Required<AppLimits>, 'burst' | 'perSecond'>, now = Date.now) {
    this.#burst = Math.max(1, limits.burst);
    this.#perMs = Math.max(0, limits.perSecond) / 1000;
    this.#now = now;
    this.#tokens = this.#burst;
    this.#at = now();
  }

  /** Spends one message; false once the view has sent more than it may. */
  take(): boolean {
    const now = this.#now();
    // A clock set back earns nothing, and costs nothing either: a view must not be closed as a
    // flood because the system clock was corrected.
    const elapsed = Math.max(0, now - this.#at);
    this.#tokens = Math.min(this.#burst, this.#tokens + elapsed * this.#perMs);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
