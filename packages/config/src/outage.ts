// Sizing the committee's preprocessing reserve for an outage (docs/decisions/0016-outage-capacity.md).
// Making triples, random bits and closure items needs every node (GRR resharing and the opening of
// r^2 interpolate over all n); matching needs any t+1. With a node down, trading runs on the reserve
// alone: these turn "M minutes at R orders a second" into the reserve targets of every node config.
import type { PreprocessingConfig } from './cluster';

/** The reserve kinds a node config targets (bits = 4 x nibbles). */
export const RESERVE_KINDS = ['bits', 'lex4', 'prod4', 'triples'] as const;
export type ReserveKind = (typeof RESERVE_KINDS)[number];
export type ReserveCounts = Record<ReserveKind, number>;

/**
 * Preprocessing one limit placement consumes, at the upper end of what was measured: 310-360 random
 * bits on books thousands deep (4-ary rank search, 32-bit comparisons: decisions 0002 and 0007),
 * about 0.33 lex4 closure items per nibble (decision 0006), prod4 (self-trade tests) 4 per op in
 * the outage test's two-account flow (2026-11-27: 314 bits, 22.6 lex4, 4.0 prod4, 0.23 triples per
 * op), triples only for a few order kinds. Re-checked 2026-12-04 after the narrower comparisons
 * (decisions 0014, 0024) and the rank search by price levels (0032): plain GTC limits now cost 62-79
 * bits, but a stream of every order kind still costs 327-340 (FOK, all-or-none and min-fill orders
 * sum the crossing liquidity with comparisons over the book: `matching-rounds.ts`, 'all kinds'), so
 * the safe side stays 360. The nodes measure the real cost per op as they run (`capacity` in their
 * status line, `tenebra_node_prep_cost_per_op`); a book of plain limits costs far less.
 */
export const ORDER_PREP_COST: Readonly<ReserveCounts> = { bits: 360, lex4: 30, prod4: 4, triples: 1 };

/** An outage the reserve must cover: this many minutes at this many orders a second. */
export interface OutageSizing {
  minutes: number;
  ratePerSecond: number;
}

/** Checks an outage sizing (positive, finite numbers). */
export function checkOutageSizing(s: OutageSizing): void {
  for (const [name, v] of [['--outage-minutes', s.minutes], ['--outage-rate', s.ratePerSecond]] as const) {
    if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number, got ${v}`);
  }
}

/** Orders an outage sizing asks the reserve to cover. */
export function outageOrders(s: OutageSizing): number {
  checkOutageSizing(s);
  return Math.ceil(s.minutes * 60 * s.ratePerSecond);
}

/** Reserve targets that cover an outage at a cost per order (each at least one order's worth). */
export function reserveTargetsFor(s: OutageSizing, cost: ReserveCounts = ORDER_PREP_COST): ReserveCounts {
  const orders = outageOrders(s);
  const out = {} as ReserveCounts;
  for (const k of RESERVE_KINDS) out[k] = Math.max(Math.ceil(cost[k]), Math.ceil(orders * cost[k]));
  return out;
}

/** The targets of a node's preprocessing config (an absent closure target counts as 0). */
export function reserveTargetsOf(p: PreprocessingConfig): ReserveCounts {
  return { bits: p.targetBits, lex4: p.targetLex4 ?? 0, prod4: p.targetProd4 ?? 0, triples: p.targetTriples };
}

/** Writes targets into a node's preprocessing config; true iff it changed. */
export function applyReserveTargets(p: PreprocessingConfig, t: ReserveCounts): boolean {
  const before = JSON.stringify(reserveTargetsOf(p));
  p.targetBits = t.bits;
  p.targetLex4 = t.lex4;
  p.targetProd4 = t.prod4;
  p.targetTriples = t.triples;
  return JSON.stringify(reserveTargetsOf(p)) !== before;
}

/** Orders a reserve covers at a cost per order: the scarcest kind decides. */
export function ordersCovered(reserve: ReserveCounts, cost: ReserveCounts = ORDER_PREP_COST): number {
  let left = Infinity;
  for (const k of RESERVE_KINDS) if (cost[k] > 0) left = Math.min(left, Math.floor(reserve[k] / cost[k]));
  return left;
}
