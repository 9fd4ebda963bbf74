// Stored position -> the spec's Position object (GET /positions), with exact JSON numbers. The
// same definitions as the positions channel (gateway/src/ws/views.ts) so REST and the channel agree:
// the mark is the one the risk monitor last accepted (risk-monitor/mark-book.ts; the entry price
// before the first), unrealized PnL is marked at it (risk-monitor/position-marks.ts), funding is what
// was settled into the position; the liquidation price is the spec's formula with the instrument's
// maintenance ratio and the position's margin (which includes settled funding).
import { createHash } from 'node:crypto';
import { fromUnits, microPerTickStep, microToUsdc, parseDecimal, ratioToDecimal, type InstrumentSpec } from '@tenebra/config';
import { RawNumber } from '../json';
import { big, type PositionRec } from '../store/records';
import { averagePrice, AVERAGE_EXTRA_DIGITS } from '../orders/view';
import type { GatewayDb } from '../store/db';
import { unrealizedPnlMicro } from '../risk-monitor/position-marks';

/** A stable public id of a position (account, symbol): a hash, so it reveals neither. */
export function positionId(userId: string, symbol: string): string {
  return createHash('sha256').update(`position\n${userId}\n${symbol}`).digest('hex').slice(0, 24);
}

/** The spec's Position object (without update_reason) for a stored position, marked at markTicks (null: no mark yet). */
export function positionView(p: PositionRec, inst: InstrumentSpec, markTicks: bigint | null = null): Record<string, unknown> {
  const size = big(p.size_steps);
  const abs = size < 0n ? -size : size;
  const entry = abs === 0n ? '0' : averagePrice(big(p.basis_ts), abs, inst);
  const marked = markTicks !== null && abs !== 0n;
  return {
    position_id: positionId(p.user_id, p.symbol),
    symbol: p.symbol,
    side: size > 0n ? 'long' : size < 0n ? 'short' : 'flat',
    size: new RawNumber(fromUnits(abs, inst.step_size)),
    entry_price: new RawNumber(entry),
    mark_price: new RawNumber(marked ? fromUnits(markTicks, inst.tick_size) : entry),
    margin: new RawNumber(microToUsdc(big(p.margin))),
    leverage: p.leverage,
    unrealized_pnl: new RawNumber(marked ? microToUsdc(unrealizedPnlMicro(p, inst, markTicks)) : '0'),
    realized_pnl: new RawNumber(microToUsdc(big(p.realized_pnl))),
    funding_accrued: new RawNumber(microToUsdc(big(p.funding_accrued ?? '0'))),
    liquidation_price: new RawNumber(liquidationPrice(p, inst)),
    status: abs === 0n ? 'CLOSED' : 'OPEN',
    updated_at: new Date(Number(big(p.updated_ns) / 1_000_000n)).toISOString(),
  };
}

/**
 * The liquidation price: the mark at which the first tranche fires, margin ratio 110% (issue 26:
 * the spec's Position table calls it "the boundary between Critical120 and T1", which is 110% in its
 * tier table, while its formula gives the 100% point a trader would never reach before the ladder
 * starts). The spec's formula with the maintenance rate raised by that 10%, in exact integers:
 * long = (size×entry − collateral) / (size×(1 − 1.1×mmr)); short = (collateral + size×entry) / (size×(1 + 1.1×mmr)),
 * rounded half up to four digits beyond the tick; "0" when flat or not positive. A mark at or past it
 * (by the position's side) puts the position in T1 (docs/risk.md).
 */
export function liquidationPrice(p: PositionRec, inst: InstrumentSpec): string {
  const size = big(p.size_steps);
  if (size === 0n) return '0';
  const abs = size < 0n ? -size : size;
  const { num, den } = microPerTickStep(inst);
  const step = parseDecimal(inst.step_size)!;
  const tick = parseDecimal(inst.tick_size)!;
  const mmr = parseDecimal(inst.maintenance_margin_ratio)!;
  const one = 10n ** BigInt(mmr.scale) * 100n; // 100% in units of mmr / 100
  const floorRate = mmr.units * FIRST_TRANCHE_PERCENT; // 1.1 × mmr in the same units
  const basis = big(p.basis_ts) * num; // size×entry in micro-USDC, times den
  const collateral = big(p.margin) * den;
  const top = size > 0n ? basis - collateral : basis + collateral;
  const factor = size > 0n ? one - floorRate : one + floorRate;
  if (top <= 0n || factor <= 0n) return '0';
  return ratioToDecimal(top * 10n ** BigInt(step.scale) * one, den * 1_000_000n * abs * step.units * factor, tick.scale + AVERAGE_EXTRA_DIGITS);
}

/** The margin ratio (percent) at which the first tranche fires; the liquidation price is that point. */
export const FIRST_TRANCHE_PERCENT = 110n;

/** The account's stored positions (open and closed), in symbol order. */
export function positionsOf(db: GatewayDb, userId: string): PositionRec[] {
  const out: PositionRec[] = [];
  for (const { value } of db.positions.getRange({ start: `${userId}\n`, end: `${userId}\u000b` })) out.push(value);
  return out;
}
