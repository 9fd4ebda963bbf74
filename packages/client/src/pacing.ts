// Client-side pacing from the spec's tier table: token buckets that hold a request back until the
// gateway would admit it, so a client spends its budget evenly instead of collecting 429s, and a
// jittered backoff so many clients refused together do not return together.
import type { TierName } from './types';

/** The spec's tier table, as far as pacing needs it (REST requests, weighted trading actions, WebSocket frames). */
export const TIER_LIMITS: Record<TierName, { restPerMinute: number; restPerSecond: number; restBurst: number; actionsPerMinute: number; wsFramesPerSecond: number }> = {
  Core: { restPerMinute: 60, restPerSecond: 2, restBurst: 5, actionsPerMinute: 10, wsFramesPerSecond: 5 },
  Select: { restPerMinute: 300, restPerSecond: 10, restBurst: 20, actionsPerMinute: 120, wsFramesPerSecond: 20 },
  Advanced: { restPerMinute: 1200, restPerSecond: 40, restBurst: 100, actionsPerMinute: 480, wsFramesPerSecond: 100 },
  Prime: { restPerMinute: 3000, restPerSecond: 100, restBurst: 200, actionsPerMinute: 1200, wsFramesPerSecond: 300 },
  Apex: { restPerMinute: 6000, restPerSecond: 200, restBurst: 300, actionsPerMinute: 2400, wsFramesPerSecond: 500 },
};

/** Weight of a trading action against the tier's actions per minute (spec: placement 1.0, cancel 0.2, modify 1.2, mass quote 1.0). */
export const ACTION_WEIGHT = { place: 1, cancel: 0.2, modify: 1.2, massQuote: 1 } as const;
export type TradingAction = keyof typeof ACTION_WEIGHT;

/** A token bucket: `capacity` tokens, refilled at `perMs` tokens per millisecond. */
export class TokenBucket {
  #tokens: number;
  #at: number;
  constructor(
    readonly capacity: number,
    readonly perMs: number,
    private readonly now: () => number,
  ) {
    this.#tokens = capacity;
    this.#at = now();
  }

  /** Milliseconds until `cost` tokens are there (0: now). Takes nothing. */
  waitMs(cost = 1): number {
    this.#refill();
    return this.#tokens >= cost ? 0 : Math.ceil((cost - this.#tokens) / this.perMs);
  }

  /** Takes `cost` tokens (the balance may go negative: a later waitMs accounts for it). */
  take(cost = 1): void {
    this.#refill();
    this.#tokens -= cost;
  }

  #refill(): void {
    const t = this.now();
    this.#tokens = Math.min(this.capacity, this.#tokens + (t - this.#at) * this.perMs);
    this.#at = t;
  }
}

/** The buckets of one account's tier: REST requests (second and minute) and weighted trading actions. */
export class RestPacer {
  readonly #second: TokenBucket;
  readonly #minute: TokenBucket;
  readonly #actions: TokenBucket;
  constructor(readonly tier: TierName, now: () => number) {
    const l = TIER_LIMITS[tier];
    this.#second = new TokenBucket(l.restBurst, l.restPerSecond / 1000, now);
    this.#minute = new TokenBucket(l.restPerMinute, l.restPerMinute / 60_000, now);
    this.#actions = new TokenBucket(l.actionsPerMinute, l.actionsPerMinute / 60_000, now);
  }

  /** How long a request (and its trading action, if any) must wait before it is sent. */
  waitMs(action?: TradingAction): number {
    return Math.max(this.#second.waitMs(), this.#minute.waitMs(), action ? this.#actions.waitMs(ACTION_WEIGHT[action]) : 0);
  }

  take(action?: TradingAction): void {
    this.#second.take();
    this.#minute.take();
    if (action) this.#actions.take(ACTION_WEIGHT[action]);
  }
}

/** A delay drawn uniformly from [base, base × 3/2): spreads clients refused together, never retries sooner than base. */
export function jittered(baseMs: number, random: () => number = Math.random): number {
  return Math.round(baseMs * (1 + random() * 0.5));
}
