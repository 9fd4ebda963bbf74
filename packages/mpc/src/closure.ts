// Product closures: preprocessed material that evaluates fixed monomials of a few secret factors in
// ONE round, where a tree of Beaver products takes one round per level.
//
// An item holds random masks a_0..a_{F-1} for F factors and the products A_T = prod_{k in T} a_k for
// every subset T (|T| >= 2) the monomials need. The round opens d_k = f_k - a_k; then, locally,
//   prod_{k in S} f_k = prod_{k in S} (d_k + a_k) = sum_{T subset S} (prod_{k in S\T} d_k) A_T
// (A_{} = 1: a public constant, added to every share). This is the unbounded fan-in multiplication of
// Bar-Ilan and Beaver (PODC 1989) restricted to a fixed small set of monomials, the preprocessing
// "tuples" of Damgard, Fitzi, Kiltz, Nielsen and Toft (TCC 2006) made by GRR products instead.
// It leaks nothing: every opened d_k is masked by a fresh uniform a_k.
//
// Two shapes serve the comparisons' trees (protocols.ts), each combining up to 4 blocks per round:
//  - LEX4, factors [e1, l2, e2, l3, e3, l4, e4] (the blocks' eq and lt indicators, most significant
//    first), monomials e1 l2, e1 e2 l3, e1 e2 e3 l4 (for lt = l1 + those) and e1 e2 e3 e4 (eq): 7
//    masks and 22 subset products. Groups of 2 or 3 blocks, and a last level without eq, open a
//    prefix of the factors and read a subset of the products.
//  - PROD4, factors [x1, x2, x3, x4], monomial x1 x2 x3 x4 (equality's product tree): 4 masks and
//    11 subset products; groups of 2 or 3 use a prefix.
// Production (preprocessing.ts) makes the masks by PRSS, the pair products in its first GRR round
// and the products of 3 and 4 masks in its third (a pair product times a mask or another pair).

import { mul } from './field';

/** A closure kind's layout: F masks, then the products of `subsets` (bitmasks over the factors). */
export interface ClosureShape {
  readonly factors: number;
  /** Subsets with two or more factors, in item order (by size, then by mask). */
  readonly subsets: readonly number[];
  /** Elements per item: factors + subsets. */
  readonly width: number;
}

function popcount(x: number): number {
  let c = 0;
  for (; x; x &= x - 1) c++;
  return c;
}

/** Every subset of two or more factors of any monomial, by size then mask. */
function closureOf(monomials: readonly number[]): number[] {
  const all = new Set<number>();
  for (const s of monomials) for (let t = s; t; t = (t - 1) & s) if (popcount(t) >= 2) all.add(t);
  return [...all].sort((x, y) => popcount(x) - popcount(y) || x - y);
}

function shape(factors: number, monomials: readonly number[]): ClosureShape {
  const subsets = closureOf(monomials);
  if (subsets.some((s) => popcount(s) > 4)) throw new Error('internal: closure products of more than 4 masks need another production round');
  return { factors, subsets, width: factors + subsets.length };
}

/** One item in the clear from its masks (dealer mode and tests): the masks, then each subset's product. */
export function closureItemOf(sh: ClosureShape, masks: readonly bigint[]): bigint[] {
  if (masks.length !== sh.factors) throw new Error(`closure item: ${masks.length} masks for ${sh.factors} factors`);
  return [...masks, ...sh.subsets.map((sub) => masks.reduce((acc, a, k) => ((sub >> k) & 1 ? mul(acc, a) : acc), 1n))];
}

/** Factor index of block j's eq (j = 1..4) and lt (j = 2..4) in a LEX4 group. */
export const lexEq = (j: number): number => 2 * (j - 1);
export const lexLt = (j: number): number => 2 * j - 3;

/** The LEX4 monomials of a group of g blocks: lt's (e1..e_{k-1} l_k for k = 2..g), then eq's (e1..e_g) if wanted. */
export function lexMonomials(g: number, withEq: boolean): { lt: number[]; eq: number | undefined } {
  const lt: number[] = [];
  let prefix = 0;
  for (let k = 2; k <= g; k++) {
    prefix |= 1 << lexEq(k - 1);
    lt.push(prefix | (1 << lexLt(k)));
  }
  return { lt, eq: withEq ? prefix | (1 << lexEq(g)) : undefined };
}

export const LEX4: ClosureShape = (() => {
  const { lt, eq } = lexMonomials(4, true);
  return shape(7, [...lt, eq!]);
})();

export const PROD4: ClosureShape = shape(4, [0b1111]);

/** Blocks combined per group by one closure round. */
export const FAN_IN = 4;

/**
 * A compiled evaluation: `p` factors opened (a prefix of the shape's), `nOut` outputs, and the
 * kernel's program bytes (see closureEval in the kernel).
 */
export interface ClosureProgram {
  readonly shape: ClosureShape;
  readonly p: number;
  readonly nOut: number;
  readonly bytes: Uint8Array;
  /** Coefficients and terms, for the cost tables. */
  readonly coefficients: number;
  readonly terms: number;
}

/**
 * Compiles outputs (each a sum of monomials, bitmasks over the shape's factors) for a shape. Every
 * factor of a monomial must be among the first p (the opened prefix) and every subset of two or more
 * of them must be in the shape.
 */
export function compileClosure(sh: ClosureShape, outputs: readonly (readonly number[])[]): ClosureProgram {
  const used = outputs.flat().reduce((u, s) => u | s, 0);
  const p = used === 0 ? 0 : 32 - Math.clz32(used);
  if (p > sh.factors) throw new Error('internal: closure monomial outside the shape');
  const slotOf = new Map<number, number>();
  for (let k = 0; k < sh.factors; k++) slotOf.set(1 << k, k);
  sh.subsets.forEach((s, i) => slotOf.set(s, sh.factors + i));
  // coefficient c = coef(parent) * d(factor); index 0 is the constant 1
  const coefIndex = new Map<number, number>([[0, 0]]);
  const coefs: [number, number][] = [];
  const coef = (mask: number): number => {
    const have = coefIndex.get(mask);
    if (have !== undefined) return have;
    const top = 31 - Math.clz32(mask);
    const parent = coef(mask & ~(1 << top));
    coefs.push([parent, top]);
    coefIndex.set(mask, coefs.length);
    return coefs.length;
  };
  const terms: [number, number, number][] = [];
  outputs.forEach((monomials, o) => {
    for (const s of monomials) {
      // every T subset of S, the empty set included
      for (let t = s; ; t = (t - 1) & s) {
        const slot = t === 0 ? -1 : slotOf.get(t);
        if (slot === undefined) throw new Error(`internal: closure shape lacks the product of subset ${t.toString(2)}`);
        terms.push([o, coef(s & ~t), slot]);
        if (t === 0) break;
      }
    }
  });
  if (terms.length >= 1 << 13) throw new Error('internal: closure program too long for the kernel accumulators');
  const bytes = new Uint8Array(4 * (2 + 2 * coefs.length + 3 * terms.length));
  const view = new DataView(bytes.buffer);
  let at = 0;
  const put = (x: number): void => {
    view.setInt32(at, x, true); // WebAssembly memory is little-endian
    at += 4;
  };
  put(coefs.length);
  for (const [parent, factor] of coefs) {
    put(parent);
    put(factor);
  }
  put(terms.length);
  for (const [o, c, slot] of terms) {
    put(o);
    put(c);
    put(slot);
  }
  return { shape: sh, p, nOut: outputs.length, bytes, coefficients: coefs.length, terms: terms.length };
}

const lexPrograms = new Map<string, ClosureProgram>();
const prodPrograms = new Map<number, ClosureProgram>();

/** The LEX4 program of a group of g (2..4) blocks: outputs [sum of lt monomials, eq monomial if withEq]; lt's l1 is added outside. */
export function lexProgram(g: number, withEq: boolean): ClosureProgram {
  const key = `${g}:${withEq}`;
  let prog = lexPrograms.get(key);
  if (!prog) {
    const { lt, eq } = lexMonomials(g, withEq);
    prog = compileClosure(LEX4, eq === undefined ? [lt] : [lt, [eq]]);
    lexPrograms.set(key, prog);
  }
  return prog;
}

/** The PROD4 program of a group of g (2..4) factors: the one output x1..x_g. */
export function prodProgram(g: number): ClosureProgram {
  let prog = prodPrograms.get(g);
  if (!prog) {
    prog = compileClosure(PROD4, [[(1 << g) - 1]]);
    prodPrograms.set(g, prog);
  }
  return prog;
}

/**
 * Group sizes for a row of `width` (>= 2) blocks, most significant first: as many groups of 4 as
 * fit, then the remainder r = width mod 4 as one group of r blocks. A remainder of one block is a
 * pass-through (size 1: it moves to the next level as it is and takes no closure item), so a level
 * uses floor(width / 4) items, plus one for a remainder of 2 or 3. The level count (rounds) is
 * ceil(log4 width) either way, and the combination is associative, so where the singleton sits does
 * not matter: 13 blocks take 4, 4, 4, 1 then 4 (4 items) where 4, 3, 3, 3 then 4 took 5.
 */
export function groupSizes(width: number): number[] {
  if (!(width >= 2) || !Number.isInteger(width)) throw new Error(`internal: a tree level of ${width} blocks`);
  const sizes = new Array<number>(Math.floor(width / FAN_IN)).fill(FAN_IN);
  if (width % FAN_IN > 0) sizes.push(width % FAN_IN);
  return sizes;
}

/**
 * How products are produced for a shape: `pairs` are the subsets of two factors, made in the first
 * GRR round from the masks; `higher` the larger ones, each the product of a pair (index into pairs)
 * and either one mask or another pair, made in a later GRR round.
 */
export interface ClosurePlan {
  pairs: [number, number][];
  higher: { pair: number; mask?: number; otherPair?: number }[];
}

export function closurePlan(sh: ClosureShape): ClosurePlan {
  const bits = (s: number): number[] => [...Array(sh.factors).keys()].filter((k) => (s >> k) & 1);
  const pairMasks = sh.subsets.filter((s) => popcount(s) === 2);
  const pairs = pairMasks.map((s) => bits(s) as [number, number]);
  const higher = sh.subsets.filter((s) => popcount(s) > 2).map((s) => {
    const [x, y, ...rest] = bits(s);
    const pair = pairMasks.indexOf((1 << x!) | (1 << y!));
    if (rest.length === 1) return { pair, mask: rest[0]! };
    const otherPair = pairMasks.indexOf((1 << rest[0]!) | (1 << rest[1]!));
    if (pair < 0 || otherPair < 0) throw new Error('internal: closure product without its pair factors');
    return { pair, otherPair };
  });
  return { pairs, higher };
}
