// The spec's fee tiers (Core .. Apex): the 30-day volume thresholds, fees, minimum notional, taker
// bonuses and every per-tier limit, as integers. Fees are in pips = 1e-6 of notional (1 bp = 100
// pips), so 0.005% = 50 pips is exact.
//
// One source of truth for the tier that governs execution: an account record's `tier` field. It is
// kept equal to effectiveTier(floor, 30-day volume) by the VIP service (vip/service.ts); clearing,
// pre-trade checks, rate limits and GET /account/vip all read that same field through TIER_INFO /
// tierFees(), so the fees /account/vip reports are the fees execution charges.

export type Tier = 'Core' | 'Select' | 'Advanced' | 'Prime' | 'Apex';
export const TIERS: readonly Tier[] = ['Core', 'Select', 'Advanced', 'Prime', 'Apex'];

export interface RestLimits {
  perMinute: number;
  perSecond: number;
  burst: number;
}

export interface WsLimits {
  msgPerSecond: number;
  connections: number;
  subscriptions: number;
}

export interface TierInfo {
  tier: Tier;
  /** 30-day notional volume that qualifies for the tier, micro-USDC */
  minVolume30dMicro: bigint;
  makerFeePips: bigint;
  takerFeePips: bigint;
  /** minimum order notional in micro-USDC */
  minNotionalMicro: bigint;
  /** share of taker fees rebated to the maker at execution, in basis points of the fee (500 = 5%) */
  instantTakerBonusBps: number;
  /** share of taker fees distributed hourly to makers, in basis points of the fee */
  hourlyTakerBonusBps: number;
  rest: RestLimits;
  ws: WsLimits;
  /** weighted trading actions per minute (placement 1.0, cancel 0.2, modify 1.2, mass quote 1.0): the Orders/min column */
  ordersPerMinute: number;
  cancelsPerMinute: number;
  /** mass quote batches per minute; null: mass quotes are not available to the tier */
  massQuotesPerMinute: number | null;
  maxOpenOrders: number;
  maxOpenPerSymbol: number;
}

const M = 1_000_000n;
export const TIER_INFO: Record<Tier, TierInfo> = {
  Core: {
    tier: 'Core', minVolume30dMicro: 0n, makerFeePips: 200n, takerFeePips: 500n, minNotionalMicro: 25n * M,
    instantTakerBonusBps: 500, hourlyTakerBonusBps: 500,
    rest: { perMinute: 60, perSecond: 2, burst: 5 }, ws: { msgPerSecond: 5, connections: 2, subscriptions: 5 },
    ordersPerMinute: 10, cancelsPerMinute: 50, massQuotesPerMinute: null, maxOpenOrders: 15, maxOpenPerSymbol: 5,
  },
  Select: {
    tier: 'Select', minVolume30dMicro: 5_000_000n * M, makerFeePips: 100n, takerFeePips: 400n, minNotionalMicro: 50n * M,
    instantTakerBonusBps: 750, hourlyTakerBonusBps: 1000,
    rest: { perMinute: 300, perSecond: 10, burst: 20 }, ws: { msgPerSecond: 20, connections: 3, subscriptions: 20 },
    ordersPerMinute: 120, cancelsPerMinute: 600, massQuotesPerMinute: null, maxOpenOrders: 80, maxOpenPerSymbol: 15,
  },
  Advanced: {
    tier: 'Advanced', minVolume30dMicro: 10_000_000n * M, makerFeePips: 0n, takerFeePips: 300n, minNotionalMicro: 75n * M,
    instantTakerBonusBps: 1000, hourlyTakerBonusBps: 1250,
    rest: { perMinute: 1200, perSecond: 40, burst: 100 }, ws: { msgPerSecond: 100, connections: 5, subscriptions: 100 },
    ordersPerMinute: 480, cancelsPerMinute: 2400, massQuotesPerMinute: null, maxOpenOrders: 300, maxOpenPerSymbol: 40,
  },
  Prime: {
    tier: 'Prime', minVolume30dMicro: 25_000_000n * M, makerFeePips: -50n, takerFeePips: 250n, minNotionalMicro: 90n * M,
    instantTakerBonusBps: 1250, hourlyTakerBonusBps: 1500,
    rest: { perMinute: 3000, perSecond: 100, burst: 200 }, ws: { msgPerSecond: 300, connections: 10, subscriptions: 300 },
    ordersPerMinute: 1200, cancelsPerMinute: 6000, massQuotesPerMinute: 120, maxOpenOrders: 1200, maxOpenPerSymbol: 100,
  },
  Apex: {
    tier: 'Apex', minVolume30dMicro: 50_000_000n * M, makerFeePips: -100n, takerFeePips: 200n, minNotionalMicro: 100n * M,
    instantTakerBonusBps: 2000, hourlyTakerBonusBps: 2500,
    rest: { perMinute: 6000, perSecond: 200, burst: 300 }, ws: { msgPerSecond: 500, connections: 15, subscriptions: 500 },
    ordersPerMinute: 2400, cancelsPerMinute: 12000, massQuotesPerMinute: 600, maxOpenOrders: 2500, maxOpenPerSymbol: 200,
  },
};

/** Budget for requests without a valid token, per client IP (the spec leaves it open; see README). */
export const PUBLIC_REST_LIMITS: RestLimits = { perMinute: 1200, perSecond: 40, burst: 100 };

/** Weighted action costs in milli-actions (spec: Limits / Weighted action costs). */
export const ACTION_WEIGHT_MILLI = { place: 1000, cancel: 200, modify: 1200, massQuote: 1000 } as const;
export type TradingAction = keyof typeof ACTION_WEIGHT_MILLI;

/** Minimum spacing per account and symbol between two actions of a kind, in nanoseconds (spec: per-symbol, per-account rules). */
export const ACTION_SPACING_NS: Record<TradingAction, bigint> = { place: 1_000_000n, cancel: 200_000n, modify: 1_000_000n, massQuote: 1_000_000n };

/** System-wide caps in weighted milli-actions per second (spec: Limits / System-wide caps). */
export const SYSTEM_CAPS = { globalMilliPerSecond: 10_000_000, perSymbolMilliPerSecond: 5_000_000 } as const;

/** Days in the rolling volume window that sets the tier. */
export const VOLUME_WINDOW_DAYS = 30;

/** True iff s names a tier. */
export function isTier(s: unknown): s is Tier {
  return typeof s === 'string' && (TIERS as readonly string[]).includes(s);
}

/** Rank of a tier: Core 0 .. Apex 4. */
export function tierRank(t: Tier): number {
  return TIERS.indexOf(t);
}

/** The highest tier whose 30-day volume threshold volumeMicro reaches. */
export function tierForVolume(volumeMicro: bigint): Tier {
  let best: Tier = 'Core';
  for (const t of TIERS) if (volumeMicro >= TIER_INFO[t].minVolume30dMicro) best = t;
  return best;
}

/** The tier that governs an account: the higher of its assigned floor and what its 30-day volume earns. */
export function effectiveTier(floor: Tier, volume30dMicro: bigint): Tier {
  const byVolume = tierForVolume(volume30dMicro);
  return tierRank(byVolume) > tierRank(floor) ? byVolume : floor;
}

/** The next tier above t and the volume it needs, or null at Apex. */
export function nextTier(t: Tier): TierInfo | null {
  const i = tierRank(t);
  return i + 1 < TIERS.length ? TIER_INFO[TIERS[i + 1]!] : null;
}

/** Maker and taker fees (pips) that execution charges an account of tier t: the one fee function clearing and /account/vip share. */
export function tierFees(t: Tier): { makerPips: bigint; takerPips: bigint } {
  const i = TIER_INFO[t];
  return { makerPips: i.makerFeePips, takerPips: i.takerFeePips };
}

/** Pips as basis-point decimal text (-50 -> "-0.5"). */
export function pipsToBps(pips: bigint): string {
  const neg = pips < 0n;
  const a = neg ? -pips : pips;
  const whole = a / 100n;
  const frac = (a % 100n).toString().padStart(2, '0').replace(/0+$/, '');
  const text = frac ? `${whole}.${frac}` : `${whole}`;
  return neg && text !== '0' ? `-${text}` : text;
}

/** Basis points (of a fee) as percent decimal text (750 -> "7.5"). */
export function bpsToPercent(bps: number): string {
  return pipsToBps(BigInt(bps));
}
