// Funding (docs/risk.md): a configured rate per instrument, in pips (1e-6) of the position's notional
// at the mark, settled every funding interval (default 1 hour, aligned to multiples of the interval
// on the gateway clock). A positive rate makes longs pay and shorts receive; a negative one the
// reverse. There is no independent index price (the dark pool's book is secret and the oracle's mid
// IS the mark), so a premium-based rate would always be 0: a configured rate is the honest model.
//
// Exactness: a payer pays ceil(notional × rate), a receiver gets floor(notional × rate), in micro-USDC;
// the (non-negative) difference goes to the insurance fund, so no micro-USDC is created. Every
// position is charged, the liquidation vault's too, so longs and shorts balance.
//
// Booking: the amount is settled into the position's margin (equity) and added to funding_accrued AND
// realized_pnl (settlement commits collateral as realised PnL − fees − margin change, so funding
// moved into the margin nets to zero there, as it should: the balance does not move). A payment larger
// than the margin left takes the margin to 0 and the rest is a deficit (insurance fund).
import { divRound, microPerTickStep, type InstrumentSpec } from '@tenebra/config';
import { big, str, type PositionRec } from '../store/records';

/** Default rate: 10 pips (0.001%) of notional per interval, longs pay (about 8.8% a year at hourly funding). */
export const DEFAULT_FUNDING_RATE_PIPS = 10n;
export const DEFAULT_FUNDING_INTERVAL_MS = 3_600_000;

/** Signed funding (micro-USDC) credited to a position of sizeSteps at markTicks: negative when it pays. */
export function fundingPaymentMicro(sizeSteps: bigint, markTicks: bigint, ratePips: bigint, inst: InstrumentSpec): bigint {
  if (sizeSteps === 0n || ratePips === 0n) return 0n;
  const { num, den } = microPerTickStep(inst);
  const absSize = sizeSteps < 0n ? -sizeSteps : sizeSteps;
  const absRate = ratePips < 0n ? -ratePips : ratePips;
  const pays = (sizeSteps > 0n) === (ratePips > 0n);
  const amount = divRound(absSize * markTicks * num * absRate, den * 1_000_000n, pays ? 'ceil' : 'floor');
  return pays ? -amount : amount;
}

export interface FundingApplied {
  position: PositionRec;
  /** what the position actually received (negative: paid) */
  settledMicro: bigint;
  /** payment the margin could not cover (>= 0) */
  deficitMicro: bigint;
}

/** A copy of the position with funding `amountMicro` settled into margin, funding_accrued and realized_pnl. */
export function settleFunding(pos: PositionRec, amountMicro: bigint, nowNs: bigint, allowNegativeMargin = false): FundingApplied {
  const p = { ...pos };
  let settled = amountMicro;
  let deficit = 0n;
  const margin = big(p.margin);
  if (!allowNegativeMargin && margin + settled < 0n) {
    deficit = -(margin + settled);
    settled = -margin;
  }
  p.margin = str(margin + settled);
  p.funding_accrued = str(big(p.funding_accrued ?? '0') + settled);
  p.realized_pnl = str(big(p.realized_pnl) + settled);
  p.updated_ns = str(nowNs);
  return { position: p, settledMicro: settled, deficitMicro: deficit };
}

/** The start (ms) of the funding interval containing nowMs. */
export function fundingBoundary(nowMs: number, intervalMs: number): number {
  return Math.floor(nowMs / intervalMs) * intervalMs;
}
