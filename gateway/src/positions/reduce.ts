// Closing part of an isolated position at a price, the one rule every close follows: a fill that
// reduces a position (clearing), and auto-deleveraging at a bankruptcy price (risk-monitor).
import { notionalMicro, type InstrumentSpec } from '@tenebra/config';
import { big, str, type AccountRec, type PositionRec } from '../store/records';

/**
 * Closes `close` steps (0 < close <= |size|) of pos at priceTicks: a proportional share of cost
 * basis and margin leaves the position, and that margin plus the realised PnL (floored to the
 * micro-USDC) goes to the account's balance. Mutates pos and acct; returns the realised PnL.
 */
export function reducePosition(inst: InstrumentSpec, acct: AccountRec, pos: PositionRec, close: bigint, priceTicks: bigint, nowNs: bigint): bigint {
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
  acct.balance = str(big(acct.balance) + marginOut + pnl);
  return pnl;
}
