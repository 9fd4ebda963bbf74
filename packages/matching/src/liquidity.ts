// Oblivious "does crossing liquidity cover the target?" for FOK, aon and min_fill_size. Every maker
// on the opposite side is examined (two comparisons each, constant rounds) and only the
// final yes/no is revealed: the nodes do not learn how many makers cross or how much they hold.
// The per-maker cross and self-trade bits computed here are kept (never opened) so the execution
// that follows a "yes" reuses them instead of recomputing.
import { SUM_EXTRA_BITS, priceLeOf, type Arith, type BookWidths } from './backend';
import type { RestingOrder } from './book';
import type { Side } from './types';

/** An incoming order as the execution loop sees it. price null = no cap (market). */
export interface TakerView<S> {
  side: Side;
  price: S | null;
  owner: S | null;
}

/** Secret bits per maker, aligned with the opposite side as it was when computed (null = public 1 / not applicable). */
export interface MakerBits<S> {
  cross: (S | null)[];
  self: (S | null)[];
}

/** [maker's price is acceptable to the taker], or null when the taker has no price cap. */
export function crossTest<S>(arith: Arith<S>, taker: TakerView<S>, maker: RestingOrder<S>, widths?: BookWidths): Promise<S> | null {
  if (taker.price === null) return null;
  // A buy crosses an ask priced at or below its limit; a sell crosses a bid priced at or above it.
  const [a, b] = taker.side === 'buy' ? [maker.price, taker.price] : [taker.price, maker.price];
  return priceLeOf(arith, widths)(a, b);
}

/** [taker and maker have the same owner], or null when either has no owner (no self-trade check). */
export function selfTest<S>(arith: Arith<S>, taker: TakerView<S>, maker: RestingOrder<S>): Promise<S> | null {
  if (taker.owner === null || maker.owner === null) return null;
  return arith.eq(taker.owner, maker.owner);
}

/**
 * Makers summed before any cap: quantities below 2^L sum below 2^(L + SUM_EXTRA_BITS), leWide's bound.
 * A side deeper than this is summed in chunks, each capped at the target before the total.
 */
export const SUM_CHUNK = 2 ** SUM_EXTRA_BITS - 1;

/**
 * Secret bit [Σ over makers that cross and are not the taker's own of maker.qty >= target], plus the
 * per-maker bits. The sum is local; one wide comparison (leWide) tests it, so the cost is two
 * comparisons per maker and 8 rounds whatever the depth (capping the running sum at the target
 * instead took two comparisons more per maker and 4 rounds per doubling of the depth).
 * Preconditions: 0 < target and every maker's qty below 2^L, makers non-empty.
 */
export async function coversTarget<S>(
  arith: Arith<S>,
  makers: readonly RestingOrder<S>[],
  taker: TakerView<S>,
  target: S,
  chunk = SUM_CHUNK,
  widths?: BookWidths,
): Promise<{ covers: S; bits: MakerBits<S> }> {
  // Rounds 1-3: cross and self bits of every maker, in one batch.
  const [cross, self] = await Promise.all([
    Promise.all(makers.map((m) => crossTest(arith, taker, m, widths))),
    Promise.all(makers.map((m) => selfTest(arith, taker, m))),
  ]);
  // Round 4: usable_i = cross_i · (1 − self_i).
  const one = arith.constant(1n);
  const usable = await Promise.all(
    makers.map(async (_, i): Promise<S | null> => {
      const c = cross[i] ?? null;
      const s = self[i] ?? null;
      if (s === null) return c;
      if (c === null) return arith.sub(one, s);
      return arith.sub(c, await arith.mul(c, s));
    }),
  );
  // Round 5: contribution_i = usable_i · qty_i.
  const contributions: S[] = await Promise.all(
    makers.map((m, i): S | Promise<S> => {
      const u = usable[i] ?? null;
      return u === null ? m.qty : arith.mul(u, m.qty);
    }),
  );
  const sums: S[] = [];
  for (let i = 0; i < contributions.length; i += chunk) sums.push(contributions.slice(i, i + chunk).reduce((a, b) => arith.add(a, b)));
  // A deep side: min(chunk sum, target) for every chunk in one batch, so the total stays below
  // chunks · target (3 rounds and one product more).
  const parts = sums.length === 1 ? sums : await Promise.all(sums.map(async (s) => arith.select(await arith.leWide(target, s), target, s)));
  const total = parts.reduce((a, b) => arith.add(a, b));
  const covers = await arith.leWide(target, total);
  return { covers, bits: { cross, self } };
}
