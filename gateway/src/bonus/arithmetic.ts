// The taker-bonus arithmetic of the spec's fee table, in exact integers (docs/api.md, "Taker
// bonuses"). Money is micro-USDC; a tier's bonus share is in basis points of the taker fee.
// Every division floors: the sub-micro remainder is never paid, so it stays with the venue.

/** One hour, the bonus window (UTC hours: window w covers [w·1h, (w+1)·1h)). */
export const HOUR_MS = 3_600_000;

/** Index of the UTC hour that contains ms. */
export function hourOf(ms: number): number {
  return Math.floor(ms / HOUR_MS);
}

/** The instant bonus of one fill: floor(takerFee × bps / 10,000); none when the fee is not a charge. */
export function instantBonus(takerFeeMicro: bigint, bps: number): bigint {
  if (takerFeeMicro <= 0n || bps <= 0) return 0n;
  return (takerFeeMicro * BigInt(bps)) / 10_000n;
}

/** A maker's liquidity in a window: filled maker notional, and the same weighted by its tier's hourly bps at each fill. */
export interface MakerLiquidity {
  user_id: string;
  /** Σ maker notional, micro-USDC */
  notional: bigint;
  /** Σ maker notional × hourly bonus bps (of the tier at the fill) */
  weighted: bigint;
}

export interface HourlySplit {
  /** floor(takerFees × Σ weighted / (Σ notional × 10,000)) */
  pool: bigint;
  /** by maker, floor(takerFees × weighted_m / (Σ notional × 10,000)); makers owed 0 are left out */
  payouts: { user_id: string; amount: bigint; notional: bigint }[];
  /** pool − Σ payouts: the rounding the venue keeps (0 ≤ remainder < number of makers) */
  remainder: bigint;
}

/**
 * Splits a window's hourly bonus. Each maker is owed its share of the window's liquidity times its
 * tier's hourly share of the window's taker fees: takerFees × (notional_m / N) × bps_m / 10,000,
 * where N is all makers' notional (bps weighted by notional when the tier changed mid-window).
 * The pool is the sum of those exact amounts, floored; each payout is floored, and the difference is
 * the remainder. So Σ payouts + remainder = pool ≤ takerFees, with nothing created or lost.
 */
export function splitHourly(takerFeesMicro: bigint, makers: readonly MakerLiquidity[]): HourlySplit {
  const total = makers.reduce((s, m) => s + m.notional, 0n);
  if (takerFeesMicro <= 0n || total <= 0n) return { pool: 0n, payouts: [], remainder: 0n };
  const den = total * 10_000n;
  const weighted = makers.reduce((s, m) => s + m.weighted, 0n);
  const pool = (takerFeesMicro * weighted) / den;
  const payouts: HourlySplit['payouts'] = [];
  let paid = 0n;
  for (const m of makers) {
    const amount = (takerFeesMicro * m.weighted) / den;
    if (amount <= 0n) continue;
    payouts.push({ user_id: m.user_id, amount, notional: m.notional });
    paid += amount;
  }
  return { pool, payouts, remainder: pool - paid };
}
