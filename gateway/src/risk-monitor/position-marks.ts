// Mark-to-market of one isolated position in exact integers (spec: States, "Margin model"):
//   unrealized PnL = side × (size × mark − cost basis)            floored to the micro-USDC
//   equity         = margin (initial + extra + settled funding) + unrealized PnL
//   maintenance    = size × mark × maintenance_margin_ratio       rounded up to the micro-USDC
//   margin ratio   = equity / maintenance
// Both roundings go against the position, so a ratio is never reported better than it is.
import { divRound, microPerTickStep, notionalMicro, parseDecimal, ratioToDecimal, type InstrumentSpec } from '@tenebra/config';
import { big, type PositionRec } from '../store/records';

export interface PositionMarks {
  markTicks: bigint;
  /** micro-USDC, signed */
  unrealizedMicro: bigint;
  equityMicro: bigint;
  maintenanceMicro: bigint;
}

const abs = (x: bigint): bigint => (x < 0n ? -x : x);

/** Unrealized PnL (micro-USDC, floored) of a stored position at markTicks; 0 when flat. */
export function unrealizedPnlMicro(p: Pick<PositionRec, 'size_steps' | 'basis_ts'>, inst: InstrumentSpec, markTicks: bigint): bigint {
  const size = big(p.size_steps);
  if (size === 0n) return 0n;
  const valueTs = abs(size) * markTicks;
  const basis = big(p.basis_ts);
  return notionalMicro(inst, size > 0n ? valueTs - basis : basis - valueTs, 'floor');
}

/** Maintenance margin (micro-USDC, rounded up) of sizeSteps (absolute) at markTicks. */
export function maintenanceMarginMicro(sizeSteps: bigint, markTicks: bigint, inst: InstrumentSpec): bigint {
  const { num, den } = microPerTickStep(inst);
  const mmr = parseDecimal(inst.maintenance_margin_ratio)!;
  return divRound(abs(sizeSteps) * markTicks * num * mmr.units, den * 10n ** BigInt(mmr.scale), 'ceil');
}

/** Everything the monitor and the views need of a position at a mark. */
export function markPosition(p: PositionRec, inst: InstrumentSpec, markTicks: bigint): PositionMarks {
  const unrealizedMicro = unrealizedPnlMicro(p, inst, markTicks);
  return {
    markTicks,
    unrealizedMicro,
    equityMicro: big(p.margin) + unrealizedMicro,
    maintenanceMicro: maintenanceMarginMicro(big(p.size_steps), markTicks, inst),
  };
}

/** equity / maintenance as a decimal string with 4 digits ("1.3512"); "0" when there is no maintenance requirement. */
export function marginRatioText(m: Pick<PositionMarks, 'equityMicro' | 'maintenanceMicro'>): string {
  return m.maintenanceMicro <= 0n ? '0' : ratioToDecimal(m.equityMicro, m.maintenanceMicro, 4);
}
