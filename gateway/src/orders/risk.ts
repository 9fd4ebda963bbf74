// Pre-trade pricing and risk checks, in integers (ticks, steps, micro-USDC). Pure functions over the
// records a transaction read; each throws the ApiError the spec's reject_reason maps to.
//   pricing     peg price from the oracle reference; the worst-case price of an uncapped market order
//   position    |position + same-side live orders + this order| <= the instrument's position limit
//   leverage    an order that adds exposure may not leave the position more than 10% above
//               max_leverage at the mark: MARGIN_INSUFFICIENT (the position's margin no longer
//               carries it; LEVERAGE_EXCEEDED is a requested leverage above max, validate.ts)
//   margin      initial margin + worst-case fee of what stays live <= free collateral (margin.ts)
import { MAX_BOOK_UNITS, maxPriceTicks, microPerTickStep, divRound, fromUnits, type InstrumentSpec } from '@tenebra/config';
import { fail } from '../errors';
import type { AccountRec, PositionRec, Side } from '../store/records';
import { big } from '../store/records';
import type { PriceOracle } from './oracle';
import type { OrderIntent } from './validate';
import { initialMargin } from './margin';
import { bandFor, marketCapTicks } from './fill-loss';

/** A market sell sent without a cap reserves margin as if it filled this far (bps) above the mark (a sell's margin grows with its price). */
export const MARKET_RISK_BAND_BPS = 1_000n;
/**
 * Band around the mark a limit price must lie in: the spec's INVALID_PRICE, "price outside the
 * acceptable range". The gateway process uses each instrument's own band ('instrument':
 * orders/fill-loss.ts, instrumentBandBps: 2.5% to 5% in the catalogue) unless its config sets
 * `priceBandBps` (a number for every instrument, 0 turns the check off); createGateway as a library
 * checks nothing unless given priceBandBps, so in-process rigs price limits freely (the fill-loss
 * check and the implicit market cap apply everywhere). Fat-finger protection: a buy far above the
 * mark would sweep the book at any price up to it (the trader cannot see the book), and a fill far
 * from the mark books a loss at once. Market caps and pegs are not limited by it (a cap only
 * protects its sender; a peg is the reference).
 */
export type PriceBand = number | 'instrument';
export const DEFAULT_PRICE_BAND: PriceBand = 'instrument';

/** Fails with INVALID_PRICE when a limit price lies outside the mark ± bandBps (bandBps 0: never). */
export function checkPriceBand(inst: InstrumentSpec, priceTicks: bigint, markTicks: bigint, bandSetting: PriceBand): void {
  const bandBps = bandFor(inst, bandSetting);
  if (bandBps <= 0) return;
  const band = BigInt(bandBps);
  const lo = divRound(markTicks * (10_000n - (band > 10_000n ? 10_000n : band)), 10_000n, 'ceil');
  const hi = divRound(markTicks * (10_000n + band), 10_000n, 'floor');
  if (priceTicks < lo || priceTicks > hi) {
    const px = (t: bigint): string => fromUnits(t, inst.tick_size);
    fail('INVALID_PRICE', `price ${px(priceTicks)} is outside the acceptable range ${px(lo)} to ${px(hi)} (the mark ${px(markTicks)} ± ${bandBps / 100}%, ${inst.symbol}'s price band)`);
  }
}
/** Position limit per instrument: this many times max_qty (the spec leaves numeric limits open). */
export const POSITION_LIMIT_FACTOR = 10n;
/**
 * Tolerance of the leverage check over max_leverage (percent): a position opened at the maximum
 * leverage sits exactly at it, and any adverse tick of the mark would otherwise block adding to it.
 */
export const LEVERAGE_TOLERANCE_PCT = 10n;

/** What pricing adds to an intent: the price sent to the committee and the price risk uses. */
export interface Priced {
  /** the order's price (ticks): limit, cap or peg price; null for an uncapped market order */
  priceTicks: bigint | null;
  /** the price reservations and risk checks use (ticks) */
  riskTicks: bigint;
  /** the price sent to the committee: priceTicks, or the implicit cap of a market order sent without one */
  bookTicks: bigint;
  /** the mark (reference mid, ticks) the checks used */
  markTicks: bigint;
}

/**
 * Prices an order against a fresh reference, failing closed (MARK_PRICE_UNAVAILABLE) when the mark
 * is stale or missing, and a limit price outside the mark ± bandBps (INVALID_PRICE). A peg takes its reference's price as is (the reference bid and ask are
 * already on the tick grid, a bid rounded down and an ask up); an uncapped market order is risked
 * at the mark plus MARKET_RISK_BAND_BPS.
 */
export function priceOrder(intent: Pick<OrderIntent, 'inst' | 'type' | 'side' | 'priceTicks' | 'pegReference'>, oracle: PriceOracle, band: PriceBand = 0): Priced {
  const ref = oracle.reference(intent.inst.symbol);
  if (!ref.ok) fail('MARK_PRICE_UNAVAILABLE', `${ref.detail}; orders are refused until the mark price is fresh`);
  const markTicks = ref.quote.mid;
  if (intent.type === 'peg') {
    const p = ref.quote[intent.pegReference!];
    if (p <= 0n || p > maxPriceTicks(intent.inst)) fail('INVALID_PRICE', `the ${intent.pegReference} reference ${p} ticks is outside the acceptable range`);
    return { priceTicks: p, riskTicks: p, bookTicks: p, markTicks };
  }
  if (intent.priceTicks === null) {
    // No market order trades unbounded (issue 26: uncapped sells halted markets): it carries the
    // band's cap to the committee. A sell's margin still grows with its fill price, so it reserves
    // as if it filled MARKET_RISK_BAND_BPS above the mark.
    let cap = marketCapTicks(intent.inst, intent.side, markTicks, band);
    if (cap > MAX_BOOK_UNITS) cap = MAX_BOOK_UNITS;
    let risk = intent.side === 'buy' ? cap : divRound(markTicks * (10_000n + MARKET_RISK_BAND_BPS), 10_000n, 'ceil');
    if (risk > MAX_BOOK_UNITS) risk = MAX_BOOK_UNITS;
    return { priceTicks: null, riskTicks: risk, bookTicks: cap, markTicks };
  }
  if (intent.type === 'limit') checkPriceBand(intent.inst, intent.priceTicks, markTicks, band);
  return { priceTicks: intent.priceTicks, riskTicks: intent.priceTicks, bookTicks: intent.priceTicks, markTicks };
}

/** Maximum absolute position (steps) on an instrument. */
export function positionLimitSteps(inst: InstrumentSpec): bigint {
  const step = inst.step_size;
  const max = maxQtySteps(inst);
  if (max === null) throw new Error(`instrument ${inst.symbol}: max_qty ${inst.max_qty} is not on its step grid ${step}`);
  return max * POSITION_LIMIT_FACTOR;
}

function maxQtySteps(inst: InstrumentSpec): bigint | null {
  const [iw, ifr = ''] = inst.max_qty.split('.');
  const [sw, sf = ''] = inst.step_size.split('.');
  const scale = Math.max(ifr.length, sf.length);
  const a = BigInt(iw! + ifr.padEnd(scale, '0'));
  const b = BigInt(sw! + sf.padEnd(scale, '0'));
  return a % b === 0n ? a / b : null;
}

export const openQtyKey = (symbol: string, side: Side): string => `${symbol}|${side}`;

/** Remaining steps of the account's live orders on symbol and side. */
export function openQty(a: AccountRec, symbol: string, side: Side): bigint {
  return big(a.open_qty?.[openQtyKey(symbol, side)] ?? '0');
}

/** Throws POSITION_LIMIT_EXCEEDED when the worst case of this side (position + live orders + qty) passes the limit. */
export function checkPositionLimit(inst: InstrumentSpec, a: AccountRec, pos: PositionRec | undefined, side: Side, qtySteps: bigint): void {
  const size = pos ? big(pos.size_steps) : 0n;
  const limit = positionLimitSteps(inst);
  const worst = side === 'buy' ? size + openQty(a, inst.symbol, 'buy') + qtySteps : -size + openQty(a, inst.symbol, 'sell') + qtySteps;
  if (worst > limit) {
    fail('POSITION_LIMIT_EXCEEDED', `the position on ${inst.symbol} could reach ${fromUnits(worst, inst.step_size)} ${side === 'buy' ? 'long' : 'short'} (position, live orders and this order), above the limit of ${fromUnits(limit, inst.step_size)}`);
  }
}

/**
 * Throws MARGIN_INSUFFICIENT when an order that adds exposure would leave the position's leverage more
 * than LEVERAGE_TOLERANCE_PCT above the instrument maximum: (|size| × mark + added × price) /
 * (margin + unrealised PnL at mark + the added initial margin). Orders that only reduce pass.
 */
export function checkLeverage(inst: InstrumentSpec, pos: PositionRec | undefined, side: Side, qtySteps: bigint, priceTicks: bigint, markTicks: bigint, leverage: number): void {
  const size = pos ? big(pos.size_steps) : 0n;
  const signed = side === 'buy' ? qtySteps : -qtySteps;
  const after = size + signed;
  const absBefore = size < 0n ? -size : size;
  const absAfter = after < 0n ? -after : after;
  if (absAfter <= absBefore) return; // reduces (or keeps) exposure
  // The part of the order that adds exposure (a flip first closes the old position).
  const added = (size !== 0n && (size > 0n) !== (signed > 0n)) ? absAfter : absAfter - absBefore;
  const keptSize = (size !== 0n && (size > 0n) !== (signed > 0n)) ? 0n : absBefore;
  const { num, den } = microPerTickStep(inst);
  const micro = (ts: bigint): bigint => divRound(ts * num, den, 'floor');
  const basis = pos && keptSize !== 0n ? big(pos.basis_ts) : 0n;
  const upnlTs = keptSize === 0n ? 0n : (size > 0n ? 1n : -1n) * (keptSize * markTicks - basis);
  const equity = (keptSize === 0n ? 0n : big(pos!.margin)) + micro(upnlTs) + initialMargin(inst, added * priceTicks, leverage);
  const exposure = micro(keptSize * markTicks + added * priceTicks);
  if (equity <= 0n || exposure * 100n > BigInt(inst.max_leverage) * equity * (100n + LEVERAGE_TOLERANCE_PCT)) {
    const lev = equity <= 0n ? 'unbounded' : `${(Number(exposure * 100n / equity) / 100).toFixed(2)}x`;
    fail('MARGIN_INSUFFICIENT', `the position on ${inst.symbol} would run at ${lev} at the mark price, above the maximum leverage of ${inst.max_leverage}x; add margin (POST /positions/{symbol}/margin) or reduce it first`);
  }
}
