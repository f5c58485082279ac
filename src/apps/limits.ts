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
  /**
   * Characters of JSON one message of `burst` and `perSecond` stands for (default 64 KiB,
   * 65,536): a longer message costs one per 65,536 characters begun, so what a view sends is
   * bounded in bytes too (1.25 MiB a second by default, after a burst of 12.5 MiB). One message
   * of the sandbox's largest (8 MiB, its default `maxMessageChars`) costs 128 of the 200. The
   * sandbox proxy says the size of a message longer than 64 KiB only: a shorter one costs one
   * whatever this is. `Infinity`: every message costs one.
   */
  charsPerMessage?: number;
  /** Requests of one view waiting for an answer at once; more are refused (default 16). */
  inFlight?: number;
  /** Resources one view may subscribe to (default 64). */
  subscriptions?: number;
}

export const DEFAULT_LIMITS: Required<AppLimits> = {
  burst: 200,
  perSecond: 20,
  charsPerMessage: 64 * 1024,
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

  /** Spends `cost` messages (one by default); false once the view has sent more than it may. */
  take(cost = 1): boolean {
    const now = this.#now();
    // A clock set back earns nothing, and costs nothing either: a view must not be closed as a
    // flood because the system clock was corrected.
    const elapsed = Math.max(0, now - this.#at);
    this.#tokens = Math.min(this.#burst, this.#tokens + elapsed * this.#perMs);
    this.#at = now;
    if (this.#tokens < cost) return false;
    this.#tokens -= cost;
    return true;
  }
}

/**
 * What a message of `chars` characters of JSON costs beyond the one it costs as a message: one
 * more per `charsPerMessage` begun past the first (none when that is `Infinity`).
 */
export function extraCostOf(chars: number, charsPerMessage: number): number {
  return Math.max(0, Math.ceil(chars / Math.max(1, charsPerMessage)) - 1);
}

/** The `FLOOD` error's text: `sized` when a long message's size was what the budget lacked. */
export function floodMessage(
  limits: Pick<Required<AppLimits>, 'burst' | 'charsPerMessage'>,
  sized: boolean,
): string {
  const per = sized
    ? ` (a long message counting once per ${limits.charsPerMessage.toLocaleString('en-US')} characters of its JSON)`
    : '';
  return `the view sent more than ${limits.burst} messages at once${per} and was closed`;
}
