// Protection of the market from one trader's order (issue 26, item 12): a price band per instrument
// and the loss an order books at the mark the moment it fills. An order priced worse than the mark
// (a buy above it, a sell below it) fills at once into a loss; with isolated margin that loss comes
// out of the margin the fill brings, and a fill far enough from the mark leaves a position beyond
// bankruptcy whose deficit the insurance fund, the other traders and finally a halt must cover.
//   band      limit prices within mark ± (initial − maintenance margin ratio) / 2: an order at the
//             band's edge at the instrument's maximum leverage fills at 150% of maintenance
//   fill loss the order's own margin minus its loss at the mark must stay above the first tranche
//             (110% of maintenance of the part it opens; >= 0 for the part it closes)
// Exact integers: ticks, steps, micro-USDC; roundings go against the order.
import { divRound, fromUnits, microPerTickStep, microToUsdc, notionalMicro, parseDecimal, type InstrumentSpec } from '@tenebra/config';
import { fail } from '../errors';
import { big, type PositionRec, type Side } from '../store/records';
import { initialMargin } from './margin';

/** A fill may not leave the part it opens at or below this margin ratio (percent): the first tranche's line. */
export const FILL_FLOOR_PERCENT = 110n;

const BPS = 10_000n;

/** Decimal ratio ("0.05") in basis points, floored. */
function ratioBps(text: string): bigint {
  const d = parseDecimal(text);
  if (!d) throw new Error(`not a decimal ratio: ${text}`);
  return (d.units * BPS) / 10n ** BigInt(d.scale);
}

/**
 * The instrument's default price band (basis points): half the gap between its initial margin ratio
 * (1 / max_leverage) and its maintenance ratio, so a limit order at the band's edge at maximum
 * leverage fills at 150% of maintenance, the Healthy line. Catalogue: 10x / 5% -> 250 bps (2.5%),
 * 8x / 5% -> 375 bps, 5x / 10% -> 500 bps; at least 1 bps.
 */
export function instrumentBandBps(inst: Pick<InstrumentSpec, 'initial_margin_ratio' | 'maintenance_margin_ratio'>): number {
  const gap = ratioBps(inst.initial_margin_ratio) - ratioBps(inst.maintenance_margin_ratio);
  const half = gap / 2n;
  return Number(half < 1n ? 1n : half);
}

/**
 * The band in force for an instrument: `configured` basis points when it is a number above 0, the
 * instrument's default when 'instrument', none (0) when 0.
 */
export function bandFor(inst: InstrumentSpec, configured: number | 'instrument'): number {
  return configured === 'instrument' ? instrumentBandBps(inst) : configured;
}

/**
 * The implicit cap of a market order sent without one (ticks): the mark moved by the band (the
 * configured one, else the instrument's) against the order: a buy pays at most mark × (1 + band),
 * a sell receives at least mark × (1 − band). Never below 1 tick.
 */
export function marketCapTicks(inst: InstrumentSpec, side: Side, markTicks: bigint, configured: number | 'instrument'): bigint {
  const b = BigInt(configured === 'instrument' || configured <= 0 ? instrumentBandBps(inst) : configured);
  if (side === 'buy') return divRound(markTicks * (BPS + b), BPS, 'floor');
  const lo = divRound(markTicks * (BPS - (b > BPS ? BPS : b)), BPS, 'ceil');
  return lo < 1n ? 1n : lo;
}

/** What a fill of qtySteps at worstTicks would do at markTicks, for the message and the monitor. */
export interface FillLoss {
  /** micro-USDC lost against the mark at the fill (0 when priced at or better than the mark) */
  lossMicro: bigint;
  /** margin behind the fill: initial margin of the opening part + the position's equity share of the closing part */
  creditMicro: bigint;
  /** what must stay after the loss: 110% of the maintenance of the opening part at the mark */
  floorMicro: bigint;
}

/**
 * The loss a fill of qtySteps at worstTicks books at the mark, and what backs it. An order that
 * closes part of an opposite position is backed by that part's share of the position's equity at
 * the mark (margin + unrealised PnL); the part that opens brings its initial margin at leverage.
 */
export function fillLoss(
  inst: InstrumentSpec, pos: Pick<PositionRec, 'size_steps' | 'basis_ts' | 'margin'> | undefined, side: Side,
  qtySteps: bigint, worstTicks: bigint, markTicks: bigint, leverage: number,
): FillLoss {
  const perStep = side === 'buy' ? worstTicks - markTicks : markTicks - worstTicks;
  const lossMicro = perStep > 0n ? notionalMicro(inst, qtySteps * perStep, 'ceil') : 0n;
  const size = pos ? big(pos.size_steps) : 0n;
  const opposite = size !== 0n && (size > 0n) !== (side === 'buy');
  const absSize = size < 0n ? -size : size;
  const closeQty = opposite ? (qtySteps < absSize ? qtySteps : absSize) : 0n;
  const openQty = qtySteps - closeQty;
  let creditMicro = initialMargin(inst, openQty * worstTicks, leverage);
  if (closeQty > 0n) {
    const value = absSize * markTicks;
    const basis = big(pos!.basis_ts);
    const upnl = notionalMicro(inst, size > 0n ? value - basis : basis - value, 'floor');
    creditMicro += divRound((big(pos!.margin) + upnl) * closeQty, absSize, 'floor');
  }
  // 110% of maintenance (size x mark x maintenance ratio), rounded up.
  const { num, den } = microPerTickStep(inst);
  const mmr = parseDecimal(inst.maintenance_margin_ratio)!;
  const floorMicro = divRound(openQty * markTicks * num * mmr.units * FILL_FLOOR_PERCENT, den * 10n ** BigInt(mmr.scale) * 100n, 'ceil');
  return { lossMicro, creditMicro, floorMicro };
}

/** True when a fill would leave too little margin: priced worse than the mark and credit − loss below the floor. */
export function breaches(f: FillLoss): boolean {
  return f.lossMicro > 0n && f.creditMicro - f.lossMicro < f.floorMicro;
}

/**
 * Throws MARGIN_INSUFFICIENT when filling the order at worstTicks (its limit, cap or peg price)
 * would book a loss at the mark that leaves its margin at or below the first tranche's line.
 */
export function checkFillLoss(
  inst: InstrumentSpec, pos: PositionRec | undefined, side: Side, qtySteps: bigint, worstTicks: bigint, markTicks: bigint, leverage: number,
): void {
  const f = fillLoss(inst, pos, side, qtySteps, worstTicks, markTicks, leverage);
  if (!breaches(f)) return;
  const px = (t: bigint): string => fromUnits(t, inst.tick_size);
  fail('MARGIN_INSUFFICIENT',
    `filled at ${px(worstTicks)} the order would lose ${microToUsdc(f.lossMicro)} USDC at the mark ${px(markTicks)}, leaving ${microToUsdc(f.creditMicro - f.lossMicro)} USDC of its ${microToUsdc(f.creditMicro)} USDC margin, ` +
    `at or below ${FILL_FLOOR_PERCENT}% of maintenance (${microToUsdc(f.floorMicro)} USDC): price it nearer the mark or use a lower leverage (${leverage}x)`);
}
