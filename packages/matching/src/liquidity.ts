// Oblivious "does crossing liquidity cover the target?" for FOK, aon and min_fill_size. Every maker
// on the opposite side is examined (O(depth) comparisons, log2(depth) rounds of min) and only the
// final yes/no is revealed: the nodes do not learn how many makers cross or how much they hold.
// The per-maker cross and self-trade bits computed here are kept (never opened) so the execution
// that follows a "yes" reuses them instead of recomputing.
import type { Arith } from './backend';
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
export function crossTest<S>(arith: Arith<S>, taker: TakerView<S>, maker: RestingOrder<S>): Promise<S> | null {
  if (taker.price === null) return null;
  // A buy crosses an ask priced at or below its limit; a sell crosses a bid priced at or above it.
  return taker.side === 'buy' ? arith.le(maker.price, taker.price) : arith.le(taker.price, maker.price);
}

/** [taker and maker have the same owner], or null when either has no owner (no self-trade check). */
export function selfTest<S>(arith: Arith<S>, taker: TakerView<S>, maker: RestingOrder<S>): Promise<S> | null {
  if (taker.owner === null || maker.owner === null) return null;
  return arith.eq(taker.owner, maker.owner);
}

/**
 * Secret bit [Σ over makers that cross and are not the taker's own of maker.qty >= target], plus the
 * per-maker bits. Values stay in [0, target] throughout, so every comparison input is below 2^48
 * whatever the book depth. Precondition: 0 < target < 2^48, makers non-empty.
 */
export async function coversTarget<S>(
  arith: Arith<S>,
  makers: readonly RestingOrder<S>[],
  taker: TakerView<S>,
  target: S,
): Promise<{ covers: S; bits: MakerBits<S> }> {
  // Round 1: cross, self and capped quantity of every maker, all in one batch.
  const [cross, self, capped] = await Promise.all([
    Promise.all(makers.map((m) => crossTest(arith, taker, m))),
    Promise.all(makers.map((m) => selfTest(arith, taker, m))),
    Promise.all(makers.map((m) => arith.min(m.qty, target))),
  ]);
  // Round 2: usable_i = cross_i · (1 − self_i).
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
  // Round 3: contribution_i = usable_i · min(qty_i, target).
  let level: S[] = await Promise.all(
    makers.map((_, i): S | Promise<S> => {
      const u = usable[i] ?? null;
      const q = capped[i] as S;
      return u === null ? q : arith.mul(u, q);
    }),
  );
  // log2(n) rounds: a ⊕ b = a + min(b, target − a) = min(a + b, target), inputs within [0, target].
  while (level.length > 1) {
    const next: Promise<S>[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) {
      const a = level[i] as S;
      const b = level[i + 1] as S;
      next.push(arith.min(b, arith.sub(target, a)).then((m) => arith.add(a, m)));
    }
    const carried = level.length % 2 === 1 ? (level[level.length - 1] as S) : null;
    level = (await Promise.all(next)) as S[];
    if (carried !== null) level.push(carried);
  }
  const total = level[0] as S;
  const covers = await arith.le(target, total);
  return { covers, bits: { cross, self } };
}
