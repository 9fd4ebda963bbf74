// Margin and fee arithmetic in integers: notionals in tick×step units, money in micro-USDC.
// Initial margin = ceil(size × price / leverage) (spec: Margin model).
import { divRound, microPerTickStep, type InstrumentSpec } from '@tenebra/config';
import type { AccountRec } from '../store/records';

/** The leverage an order of this account uses on this instrument: its choice for the symbol, else its configured leverage, capped by max_leverage. */
export function effectiveLeverage(acct: Pick<AccountRec, 'leverage' | 'leverage_by_symbol'>, inst: Pick<InstrumentSpec, 'symbol' | 'max_leverage'>): number {
  return Math.max(1, Math.min(acct.leverage_by_symbol?.[inst.symbol] ?? acct.leverage, inst.max_leverage));
}

/** ceil(notional / leverage) in micro-USDC, for a notional of tickSteps (price_ticks × qty_steps). */
export function initialMargin(inst: InstrumentSpec, tickSteps: bigint, leverage: number): bigint {
  const { num, den } = microPerTickStep(inst);
  return divRound(tickSteps * num, den * BigInt(leverage), 'ceil');
}

/** Fee in micro-USDC at `pips` (1e-6 of notional): charges round up, rebates (negative) round toward zero. */
export function feeMicro(inst: InstrumentSpec, tickSteps: bigint, pips: bigint): bigint {
  const { num, den } = microPerTickStep(inst);
  if (pips >= 0n) return divRound(tickSteps * num * pips, den * 1_000_000n, 'ceil');
  return -divRound(tickSteps * num * -pips, den * 1_000_000n, 'floor');
}

/** What a live order reserves: initial margin plus the worst-case (taker) fee of its remaining size at its limit price. */
export function reservation(inst: InstrumentSpec, remainingSteps: bigint, priceTicks: bigint, leverage: number, takerPips: bigint): bigint {
  if (remainingSteps <= 0n) return 0n;
  const ts = remainingSteps * priceTicks;
  const fee = feeMicro(inst, ts, takerPips);
  return initialMargin(inst, ts, leverage) + (fee > 0n ? fee : 0n);
}
