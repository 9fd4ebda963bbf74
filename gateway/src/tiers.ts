// The spec's fee tiers (Core .. Apex): fees, minimum notional and rate limits per tier, as integers.
// Fees are in pips = 1e-6 of notional (1 bp = 100 pips), so 0.005% = 50 pips is exact.

export type Tier = 'Core' | 'Select' | 'Advanced' | 'Prime' | 'Apex';
export const TIERS: readonly Tier[] = ['Core', 'Select', 'Advanced', 'Prime', 'Apex'];

export interface RestLimits {
  perMinute: number;
  perSecond: number;
  burst: number;
}

export interface TierInfo {
  tier: Tier;
  makerFeePips: bigint;
  takerFeePips: bigint;
  /** minimum order notional in micro-USDC */
  minNotionalMicro: bigint;
  rest: RestLimits;
  /** weighted trading actions per minute (placement 1.0, cancel 0.2, modify 1.2): the Orders/min column */
  ordersPerMinute: number;
  cancelsPerMinute: number;
  maxOpenOrders: number;
  maxOpenPerSymbol: number;
}

const M = 1_000_000n;
export const TIER_INFO: Record<Tier, TierInfo> = {
  Core: { tier: 'Core', makerFeePips: 200n, takerFeePips: 500n, minNotionalMicro: 25n * M, rest: { perMinute: 60, perSecond: 2, burst: 5 }, ordersPerMinute: 10, cancelsPerMinute: 50, maxOpenOrders: 15, maxOpenPerSymbol: 5 },
  Select: { tier: 'Select', makerFeePips: 100n, takerFeePips: 400n, minNotionalMicro: 50n * M, rest: { perMinute: 300, perSecond: 10, burst: 20 }, ordersPerMinute: 120, cancelsPerMinute: 600, maxOpenOrders: 80, maxOpenPerSymbol: 15 },
  Advanced: { tier: 'Advanced', makerFeePips: 0n, takerFeePips: 300n, minNotionalMicro: 75n * M, rest: { perMinute: 1200, perSecond: 40, burst: 100 }, ordersPerMinute: 480, cancelsPerMinute: 2400, maxOpenOrders: 300, maxOpenPerSymbol: 40 },
  Prime: { tier: 'Prime', makerFeePips: -50n, takerFeePips: 250n, minNotionalMicro: 90n * M, rest: { perMinute: 3000, perSecond: 100, burst: 200 }, ordersPerMinute: 1200, cancelsPerMinute: 6000, maxOpenOrders: 1200, maxOpenPerSymbol: 100 },
  Apex: { tier: 'Apex', makerFeePips: -100n, takerFeePips: 200n, minNotionalMicro: 100n * M, rest: { perMinute: 6000, perSecond: 200, burst: 300 }, ordersPerMinute: 2400, cancelsPerMinute: 12000, maxOpenOrders: 2500, maxOpenPerSymbol: 200 },
};

/** Budget for requests without a valid token, per client IP (the spec leaves it open; see README). */
export const PUBLIC_REST_LIMITS: RestLimits = { perMinute: 1200, perSecond: 40, burst: 100 };

/** Weighted action costs in milli-actions (spec: Limits / Weighted action costs). */
export const ACTION_WEIGHT_MILLI = { place: 1000, cancel: 200, modify: 1200, massQuote: 1000 } as const;

/** True iff s names a tier. */
export function isTier(s: unknown): s is Tier {
  return typeof s === 'string' && (TIERS as readonly string[]).includes(s);
}
