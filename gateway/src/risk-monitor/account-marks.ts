// Account-level view of the marks: the sum of the open positions' unrealized PnL at the monitor's
// current marks (GET /account and account.info add it to equity; isolated margin keeps it out of
// free collateral: a position's PnL backs that position only).
import type { InstrumentSpec } from '@tenebra/config';
import type { PositionRec } from '../store/records';
import type { MarkSource } from './mark-book';
import { unrealizedPnlMicro } from './position-marks';

/** Σ unrealized PnL (micro-USDC) of the positions that have a mark; positions without one count 0. */
export function accountUnrealizedMicro(positions: readonly PositionRec[], instrument: (symbol: string) => InstrumentSpec | undefined, marks: MarkSource | null | undefined): bigint {
  if (!marks) return 0n;
  let sum = 0n;
  for (const p of positions) {
    if (p.size_steps === '0') continue;
    const inst = instrument(p.symbol);
    const mark = marks.markTicks(p.symbol);
    if (inst && mark !== null) sum += unrealizedPnlMicro(p, inst, mark);
  }
  return sum;
}
