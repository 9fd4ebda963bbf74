// A trader's leverage per symbol and the isolated margin of its position (docs/api.md "Leverage and
// isolated margin"). Leverage is a whole number from 1 to the instrument's max_leverage: asking for
// more is LEVERAGE_EXCEEDED (the spec's "requested leverage above instrument maximum"). The choice
// prices new orders' initial margin (notional / leverage) and becomes the position's leverage; a lower
// leverage on an open position tops its margin up to the new initial margin from free collateral,
// a higher one leaves the margin where it is (the surplus can be removed). Margin can be added from
// free collateral and removed while what stays covers the initial margin plus any loss at the mark.
import { divRound, formatDecimal, microPerTickStep, microToUsdc, type Dec, type InstrumentSpec } from '@tenebra/config';
import { fail } from '../errors';
import { decimalField } from '../orders/validate';
import { big, str, type AccountRec, type PositionRec } from '../store/records';
import { unrealizedPnlMicro } from '../risk-monitor/position-marks';

/**
 * A requested leverage (JSON number or decimal string) as a whole number within 1..max_leverage.
 * Above the maximum: LEVERAGE_EXCEEDED; otherwise malformed: `malformed` (invalid_request on the
 * leverage route, INVALID_ORDER on an order).
 */
export function leverageField(v: unknown, inst: InstrumentSpec, malformed: 'invalid_request' | 'INVALID_ORDER'): number {
  if (v === undefined || v === null) fail(malformed, "'leverage' is required");
  let d: Dec;
  try {
    d = decimalField(v, 'leverage', 'invalid_request');
  } catch {
    fail(malformed, `'leverage' must be a whole number from 1 to ${inst.max_leverage} (the maximum for ${inst.symbol})`);
  }
  const one = 10n ** BigInt(d.scale);
  // compare exactly: 20.5 on a 20x instrument is above the maximum, not merely fractional
  if (d.units > BigInt(inst.max_leverage) * one) {
    fail('LEVERAGE_EXCEEDED', `requested leverage ${formatDecimal(d)}x is above the maximum of ${inst.max_leverage}x for ${inst.symbol}`);
  }
  if (d.units % one !== 0n || d.units < one) fail(malformed, `'leverage' must be a whole number from 1 to ${inst.max_leverage} (the maximum for ${inst.symbol})`);
  return Number(d.units / one);
}

/** ceil(|size| × entry / leverage) in micro-USDC: the spec's initial margin of an open position (cost basis over leverage). */
export function positionInitialMargin(inst: InstrumentSpec, pos: PositionRec, leverage: number): bigint {
  const { num, den } = microPerTickStep(inst);
  return divRound(big(pos.basis_ts) * num, den * BigInt(leverage), 'ceil');
}

/**
 * The most margin that can leave the position: margin − initial margin − any unrealised loss at the
 * mark (an unrealised gain is not withdrawable before it is realised). Negative: nothing.
 */
export function removableMargin(inst: InstrumentSpec, pos: PositionRec, markTicks: bigint | null): bigint {
  const upnl = markTicks === null ? 0n : unrealizedPnlMicro(pos, inst, markTicks);
  return big(pos.margin) - positionInitialMargin(inst, pos, pos.leverage) + (upnl < 0n ? upnl : 0n);
}

/** What a leverage change moves: the top-up taken from the account's balance into the position (>= 0). */
export function leverageTopUp(inst: InstrumentSpec, pos: PositionRec | undefined, leverage: number): bigint {
  if (!pos || big(pos.size_steps) === 0n) return 0n;
  const need = positionInitialMargin(inst, pos, leverage) - big(pos.margin);
  return need > 0n ? need : 0n;
}

/** Free collateral of an account: balance not reserved by live orders (micro-USDC). */
export function freeCollateral(a: AccountRec): bigint {
  return big(a.balance) - big(a.reserved);
}

/**
 * Applies `add` or `remove` of `amount` micro-USDC to pos and acct (mutating both); throws the
 * spec's codes: MARGIN_INSUFFICIENT (add above free collateral, remove below initial margin),
 * ACCOUNT_IN_LIQUIDATION (remove while the position or account is being liquidated).
 */
export function moveMargin(inst: InstrumentSpec, acct: AccountRec, pos: PositionRec, action: 'add' | 'remove', amount: bigint, markTicks: bigint | null, nowNs: bigint): void {
  if (action === 'add') {
    const free = freeCollateral(acct);
    if (amount > free) fail('MARGIN_INSUFFICIENT', `adding ${microToUsdc(amount)} USDC exceeds free collateral of ${microToUsdc(free > 0n ? free : 0n)} USDC`);
    acct.balance = str(big(acct.balance) - amount);
    pos.margin = str(big(pos.margin) + amount);
  } else {
    if (acct.in_liquidation || pos.liquidation) fail('ACCOUNT_IN_LIQUIDATION', `the position on ${inst.symbol} is being liquidated; margin cannot be removed`);
    const most = removableMargin(inst, pos, markTicks);
    if (amount > most) {
      fail('MARGIN_INSUFFICIENT', `removing ${microToUsdc(amount)} USDC would leave the position below its initial margin at ${pos.leverage}x; at most ${microToUsdc(most > 0n ? most : 0n)} USDC can be removed`);
    }
    acct.balance = str(big(acct.balance) + amount);
    pos.margin = str(big(pos.margin) - amount);
  }
  pos.updated_ns = str(nowNs);
}
