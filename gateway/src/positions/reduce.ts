// Closing part of an isolated position at a price, the one rule every close follows: a fill that
// reduces a position (clearing), auto-deleveraging at a bankruptcy price, a liquidation tranche and
// the liquidation vault's own trades (risk-monitor). They differ only in where the proceeds go:
// reducePosition sends them to the account's balance; a tranche and the vault keep them in the
// position's margin (liquidation-ladder.ts).
import { notionalMicro, type InstrumentSpec } from '@tenebra/config';
import { big, str, type AccountRec, type PositionRec } from '../store/records';

/** What closing part of a position released. */
export interface ClosedPart {
  /** realised PnL, micro-USDC, floored */
  pnl: bigint;
  /** the proportional share of the margin that left the position (floored toward zero) */
  marginOut: bigint;
}

/**
 * Closes `close` steps (0 < close <= |size|) of pos at priceTicks: a proportional share of cost
 * basis and margin leaves the position and the PnL (floored to the micro-USDC) is added to its
 * realized_pnl. Mutates pos; the caller decides where marginOut + pnl go.
 */
export function closePart(inst: InstrumentSpec, pos: PositionRec, close: bigint, priceTicks: bigint, nowNs: bigint): ClosedPart {
  const size = big(pos.size_steps);
  const abs = size < 0n ? -size : size;
  if (close <= 0n || close > abs) throw new RangeError(`internal: closing ${close} of a position of ${size}`);
  const basis = big(pos.basis_ts);
  const margin = big(pos.margin);
  const basisOut = close === abs ? basis : (basis * close) / abs;
  const marginOut = close === abs ? margin : (margin * close) / abs;
  const pnl = notionalMicro(inst, (size > 0n ? 1n : -1n) * (close * priceTicks - basisOut), 'floor');
  pos.size_steps = str(size > 0n ? size - close : size + close);
  pos.basis_ts = str(basis - basisOut);
  pos.margin = str(margin - marginOut);
  pos.realized_pnl = str(big(pos.realized_pnl) + pnl);
  pos.updated_ns = str(nowNs);
  return { pnl, marginOut };
}

/**
 * Closes `close` steps of pos at priceTicks (closePart) and pays the released margin plus the
 * realised PnL into the account's balance. Mutates pos and acct; returns the realised PnL.
 */
export function reducePosition(inst: InstrumentSpec, acct: AccountRec, pos: PositionRec, close: bigint, priceTicks: bigint, nowNs: bigint): bigint {
  const { pnl, marginOut } = closePart(inst, pos, close, priceTicks, nowNs);
  acct.balance = str(big(acct.balance) + marginOut + pnl);
  return pnl;
}
