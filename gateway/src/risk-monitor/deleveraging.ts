// The spec's backstop after the liquidation ladder (States, "Liquidation ladder": escalation and
// backstop tiers 1 to 3), as pure functions on stored records; the monitor runs them in one
// transaction (docs/risk.md, "Bankruptcy: auto-deleveraging, insurance fund, socialized loss, halt").
//
// - A position whose equity at the mark is negative is bankrupt: a tranche at the mark cannot
//   restore it (it keeps the equity), so the ladder escalates to auto-deleveraging (ADL): what is
//   left is closed against opposite positions of other accounts at the BANKRUPTCY PRICE (where its
//   loss equals its margin; rounded to the tick against it, so the rounding is a small deficit, never
//   a refund to the bankrupt). Counterparties are ranked by profit and
//   leverage at the mark; only those that still gain at the bankruptcy price are taken (ADL never
//   turns a counterparty's gain into a loss), each closed like a fill at that price, without fees.
// - Whatever ADL cannot place goes to the liquidation vault at the mark (the last tranche); its
//   deficit goes to the insurance fund (tier 1), then is socialized over the market's profitable
//   positions (tier 2), then, if any remains or the market's socialized total passes its threshold,
//   the market is halted (tier 3).
import { divRound, microPerTickStep, notionalMicro, type InstrumentSpec } from '@tenebra/config';
import { big, str, type PositionRec } from '../store/records';
import { unrealizedPnlMicro } from './position-marks';

const abs = (x: bigint): bigint => (x < 0n ? -x : x);

/**
 * The price (ticks, >= 1) at which closing the whole position loses exactly its margin, rounded to
 * the tick AGAINST the position (its loss there is at least its margin): a long's is the highest
 * such price, a short's the lowest. Rounding the other way would have the ADL counterparties pay
 * the bankrupt up to a tick × size back; this way the bankrupt gets nothing back and the rounding
 * (under one tick × size, micro-USDC flooring included) is a deficit for the backstop.
 */
export function bankruptcyPriceTicks(p: Pick<PositionRec, 'size_steps' | 'basis_ts' | 'margin'>, inst: InstrumentSpec): bigint {
  const size = big(p.size_steps);
  if (size === 0n) throw new RangeError('internal: bankruptcy price of a flat position');
  const { num, den } = microPerTickStep(inst);
  const basis = big(p.basis_ts);
  const margin = big(p.margin);
  // long: (size × P − basis) × num / den <= −margin; short: (basis − |size| × P) × num / den <= −margin
  const price = size > 0n
    ? divRound(basis * num - margin * den, size * num, 'floor')
    : divRound(basis * num + margin * den, -size * num, 'ceil');
  return price < 1n ? 1n : price;
}

/** A position ADL may reduce, with what ranks it. */
export interface AdlCandidate {
  key: string;
  position: PositionRec;
  /** unrealized PnL at the mark, micro-USDC (> 0) */
  profitMicro: bigint;
  /** profit ratio × leverage = profit × notional / (margin × equity), as a fraction; den 0 ranks first */
  scoreNum: bigint;
  scoreDen: bigint;
}

/** a before b: higher score, then larger profit, then key (a total order, so every run ranks alike). */
function byRank(a: AdlCandidate, b: AdlCandidate): number {
  if (a.scoreDen === 0n || b.scoreDen === 0n) {
    if (a.scoreDen !== b.scoreDen) return a.scoreDen === 0n ? -1 : 1;
  } else {
    const l = a.scoreNum * b.scoreDen;
    const r = b.scoreNum * a.scoreDen;
    if (l !== r) return l > r ? -1 : 1;
  }
  if (a.profitMicro !== b.profitMicro) return a.profitMicro > b.profitMicro ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * Positions that can take the other side of a bankrupt position of sign `bankruptSide` at
 * bankruptcyTicks, best ranked first: opposite sign, not `exclude` (the bankrupt itself, the vault),
 * not in a ladder of their own, in profit at the mark and not at a loss at the bankruptcy price.
 */
export function adlCandidates(
  positions: Iterable<{ key: string; value: PositionRec }>, bankruptSide: 1n | -1n, inst: InstrumentSpec, markTicks: bigint, bankruptcyTicks: bigint, exclude: ReadonlySet<string>,
): AdlCandidate[] {
  const out: AdlCandidate[] = [];
  for (const { key, value: p } of positions) {
    const size = big(p.size_steps);
    if (size === 0n || (size > 0n ? 1n : -1n) === bankruptSide || exclude.has(p.user_id) || p.liquidation) continue;
    const profit = unrealizedPnlMicro(p, inst, markTicks);
    if (profit <= 0n || unrealizedPnlMicro(p, inst, bankruptcyTicks) < 0n) continue;
    const margin = big(p.margin);
    const equity = margin + profit;
    const notional = notionalMicro(inst, abs(size) * markTicks, 'floor');
    out.push({ key, position: p, profitMicro: profit, scoreNum: profit * notional, scoreDen: margin > 0n ? margin * equity : 0n });
  }
  return out.sort(byRank);
}

/** A share of a socialized loss: what one profitable position gives up. */
export interface SocializedShare {
  key: string;
  position: PositionRec;
  micro: bigint;
}

/**
 * Spreads `deficit` over the profitable positions of one market in proportion to what each can
 * bear: its unrealized profit at the mark, at most its margin (so a margin never turns negative).
 * Exact: the shares sum to min(deficit, Σ capacity); rounding micro-USDC go to the largest
 * remainders (ties by key). Returns the shares (positive only) and what no one could bear.
 */
export function socializeLoss(
  positions: Iterable<{ key: string; value: PositionRec }>, inst: InstrumentSpec, markTicks: bigint, deficit: bigint, exclude: ReadonlySet<string>,
): { shares: SocializedShare[]; uncovered: bigint } {
  const able: { key: string; position: PositionRec; cap: bigint }[] = [];
  for (const { key, value: p } of positions) {
    if (p.size_steps === '0' || exclude.has(p.user_id)) continue;
    const profit = unrealizedPnlMicro(p, inst, markTicks);
    const margin = big(p.margin);
    const cap = profit < margin ? profit : margin;
    if (cap > 0n) able.push({ key, position: p, cap });
  }
  const total = able.reduce((s, a) => s + a.cap, 0n);
  const take = deficit < total ? deficit : total;
  if (take <= 0n) return { shares: [], uncovered: deficit > 0n ? deficit : 0n };
  const parts = able.map((a) => ({ ...a, share: (take * a.cap) / total, rem: (take * a.cap) % total }));
  let left = take - parts.reduce((s, a) => s + a.share, 0n);
  const order = [...parts].sort((a, b) => (a.rem !== b.rem ? (a.rem > b.rem ? -1 : 1) : a.key < b.key ? -1 : 1));
  for (const a of order) {
    if (left === 0n) break;
    if (a.share < a.cap) {
      a.share += 1n;
      left -= 1n;
    }
  }
  return { shares: parts.filter((a) => a.share > 0n).map((a) => ({ key: a.key, position: a.position, micro: a.share })), uncovered: deficit - take };
}

/** The position after giving up `micro` of its margin to a socialized loss (booked as realised PnL). */
export function bearLoss(p: PositionRec, micro: bigint, nowNs: bigint): PositionRec {
  return { ...p, margin: str(big(p.margin) - micro), realized_pnl: str(big(p.realized_pnl) - micro), updated_ns: str(nowNs) };
}
