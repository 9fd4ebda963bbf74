// Where a resting remainder goes on its own side: a k-ary search over the (public) ranks with secret
// comparisons. Every comparison is `after(i) = [the new order goes behind resting order i]`, which is
// monotone in i (1 … 1 0 … 0, the first 0 at the new order's rank; equal price → behind). A step
// issues its pivots' comparisons in one batch (they share rounds) and opens their bits together; the
// pivots depend only on public data (the side's length and the bits opened so far), so whatever the
// arity or pivot plan, the opened bits are a function of the rank alone: the nodes learn the rank
// (between which two neighbours the price lies), exactly what binary search reveals, and nothing else.
import { BookInvariantError } from './types';

/**
 * How the first step places its pivots. 'even': evenly spaced (plain k-ary search). 'head': the head
 * and k − 2 pivots evenly over the rest (a quote that improves the best price settles in one step;
 * on the generated streams fewer comparisons and rounds than 'even', since new orders cluster near
 * the top of their side). Later steps are always 'even'. Default: 'head' for k > 2, 'even' for k = 2
 * (so arity 2 is exactly the former binary search).
 */
export type SearchStart = 'even' | 'head' | 'gallop' | 'ends' | 'levels';
// 'gallop' (exponential search from the head, Bentley & Yao, "An almost optimal algorithm for
// unbounded searching", IPL 1976): while every bit so far is 1, a step's pivots are the next k − 1 of
// the ranks 0, 1, 3, 7, ..., 2^j − 1; once a bit is 0 the bracket is searched k-ary ('even'). A rank
// r costs about 2 log2(r + 2) comparisons at k = 2 whatever the side's length: cheaper than binary
// search when new orders rest near the head, as most do on a busy book.
// 'ends': the first step probes the head and the tail together (two pivots, whatever k), then
// gallops from the head while no bit but the tail's is 0: an order behind the whole side (the worst
// price level, often the most common one on a deep book) settles in that first step.
// 'levels': every step splits the candidates by public weights (levelPivots): the head, the tail and
// the known ends of price levels (Book.beatsNext) weigh much more than the ranks inside a level,
// where a new order almost never goes (equal price goes behind the level, a new price between two
// levels goes at the boundary between them). On a book of few price levels the rank then costs a
// few comparisons whatever the depth (ADR 0032).

/**
 * Default arity: 4 (3 comparisons per step, half the steps of binary search). Measured on the
 * generated streams (scripts/bench/matching-rounds.ts), going from 3 to 4 saves about 3.5 rounds per
 * extra comparison, from 4 to 5 or 8 only about 1.5: 4 is the knee, and committee preprocessing is
 * also a bottleneck.
 */
export const DEFAULT_SEARCH_ARITY = 4;

/** Largest arity accepted: a step's batch is at most 63 comparisons. */
export const MAX_SEARCH_ARITY = 64;

/** The first step's default pivot plan for arity k. */
export function defaultStart(k: number): SearchStart {
  return k > 2 ? 'head' : 'even';
}

export function checkArity(k: number): void {
  if (!Number.isInteger(k) || k < 2 || k > MAX_SEARCH_ARITY) throw new RangeError(`searchArity must be an integer in 2..${MAX_SEARCH_ARITY}, got ${k}`);
}

/**
 * Pivots (ascending, distinct, within [lo, hi)) of one step over the candidate ranks lo..hi: at most
 * k − 1 of them, splitting the m + 1 outcomes into at most k groups of at most ⌊m/k⌋ + 1 ranks each,
 * so plain k-ary search takes ⌈log_k(m + 1)⌉ steps. For k = 2 this is binary search's midpoint.
 */
export function searchPivots(lo: number, hi: number, k: number, start: SearchStart = defaultStart(k)): number[] {
  const m = hi - lo;
  if (m <= 0) return [];
  const out: number[] = [];
  const push = (p: number): void => {
    if (p >= lo && p < hi && out[out.length - 1] !== p) out.push(p);
  };
  if (start === 'gallop') {
    // the next k − 1 ranks 2^j − 1 at or after lo (lo is 0 or one past such a rank), the last clamped to hi − 1
    let p = lo === 0 ? 0 : 2 * lo - 1;
    for (let j = 0; j < k - 1 && out[out.length - 1] !== hi - 1; j += 1) {
      push(Math.min(p, hi - 1));
      p = 2 * p + 1;
    }
    return out;
  }
  if (start === 'head' && k > 2) {
    // The head, then k − 2 pivots evenly over the rest.
    push(lo);
    const rest = m - 1;
    for (let j = 1; j < k - 1; j += 1) push(lo + 1 + Math.floor((j * rest) / (k - 1)));
    return out;
  }
  if (start === 'head') {
    push(lo);
    return out;
  }
  for (let j = 1; j < k; j += 1) push(lo + Math.floor((j * m) / k));
  return out;
}

/**
 * Pivots of search step `step` over [lo, hi) on a side of n orders: the first step follows `start`;
 * a galloping search keeps galloping while no bit has been 0 (hi is still n); every other step is
 * k-ary 'even'. Depends only on public values.
 */
export function stepPivots(
  lo: number, hi: number, n: number, k: number, step: number, start: SearchStart,
  beatsNext: (i: number) => boolean = () => false, weights: LevelWeights = DEFAULT_LEVEL_WEIGHTS,
): number[] {
  if (start === 'levels') return levelPivots(lo, hi, n, k, beatsNext, weights);
  if (start === 'gallop') return searchPivots(lo, hi, k, hi === n ? 'gallop' : 'even');
  if (start === 'ends') {
    if (step === 0) return n <= 1 ? searchPivots(lo, hi, 2, 'even') : [lo, hi - 1];
    return searchPivots(lo, hi, k, hi === n - 1 ? 'gallop' : 'even');
  }
  return searchPivots(lo, hi, k, step === 0 ? start : 'even');
}

/** Number of steps plain k-ary search takes over n resting orders in the worst case: ⌈log_k(n + 1)⌉. */
export function searchSteps(n: number, k: number): number {
  let steps = 0;
  for (let m = n; m > 0; m = Math.floor(m / k)) steps += 1;
  return steps;
}

/**
 * Narrows [lo, hi) with the opened bits of one step (bits[i] = after(pivots[i])). Throws when the bits
 * are not monotone (impossible for consistent prices: a wrong opening or a broken book).
 */
export function narrow(lo: number, hi: number, pivots: readonly number[], bits: readonly bigint[], scope: string): [number, number] {
  let newLo = lo;
  let newHi = hi;
  let seenZero = false;
  for (let i = 0; i < pivots.length; i += 1) {
    const p = pivots[i] as number;
    if (bits[i] === 1n) {
      if (seenZero) throw new BookInvariantError(`${scope}: insert-rank bits not monotone`);
      newLo = p + 1;
    } else {
      if (!seenZero) newHi = p;
      seenZero = true;
    }
  }
  return [newLo, newHi];
}

/**
 * The public weights of SearchStart 'levels' (relative; any positive numbers): how likely a new order
 * is to rest at the head, behind the whole side, at a known level boundary (behind an order known to
 * beat the next one: the end of a price level), or anywhere else. On bench:orders' sustained stream
 * (scripts/bench/matching-rounds.ts, 1,875 resting orders on sides ~160 deep of ~4 levels) the ranks
 * were 47% head, 15% tail, 38% at a known boundary, 0.3% elsewhere.
 */
export interface LevelWeights { head: number; tail: number; boundary: number; interior: number }
export const DEFAULT_LEVEL_WEIGHTS: Readonly<LevelWeights> = { head: 12, tail: 4, boundary: 6, interior: 1 / 256 };

/**
 * Pivots of one 'levels' step over the candidate ranks lo..hi (hi inclusive) on a side of n orders:
 * weight-balanced splits, up to k − 1 pivots, always splitting the heaviest bracket left at its
 * weight median (a k-ary step is the top of a weight-balanced binary tree, heaviest branches first).
 * `beatsNext(i)`: order i is known to be priced strictly better than order i + 1, so rank i + 1 is a
 * level boundary. Depends only on public values (n, the bracket, the known boundaries), so the opened
 * bits stay a function of the rank, as with every plan. Expected comparisons are within about two of
 * the outcome's entropy under the weights (weight-balanced search trees, Mehlhorn 1975).
 */
export function levelPivots(lo: number, hi: number, n: number, k: number, beatsNext: (i: number) => boolean, w: LevelWeights = DEFAULT_LEVEL_WEIGHTS): number[] {
  if (hi <= lo) return [];
  // One pass over the bracket: prefix[j] = weight of ranks lo .. lo + j − 1, and the likely ranks
  // (weight above the interior's) in order. Each split is then O(log) (a side of 100,000 costs the pass).
  const prefix = new Float64Array(hi - lo + 2);
  const likely: number[] = [];
  for (let r = lo; r <= hi; r += 1) {
    const x = r === 0 ? w.head : r === n ? w.tail : beatsNext(r - 1) ? w.boundary : w.interior;
    if (x > w.interior) likely.push(r);
    prefix[r - lo + 1] = (prefix[r - lo] as number) + x;
  }
  const mass = (a: number, b: number): number => (prefix[b - lo + 1] as number) - (prefix[a - lo] as number);
  /** the first index j of `likely` with cond(likely[j]), cond monotone false … true; likely.length if none */
  const firstLikely = (cond: (r: number) => boolean): number => {
    let l = 0;
    let h = likely.length;
    while (l < h) {
      const m = (l + h) >> 1;
      if (cond(likely[m] as number)) h = m;
      else l = m + 1;
    }
    return l;
  };
  const pivots: number[] = [];
  const brackets: [number, number][] = [[lo, hi]];
  while (pivots.length < k - 1) {
    // the heaviest bracket that still holds two ranks or more
    let best = -1;
    for (let j = 0; j < brackets.length; j += 1) {
      const [a, b] = brackets[j] as [number, number];
      if (b > a && (best < 0 || mass(a, b) > mass(...(brackets[best] as [number, number])))) best = j;
    }
    if (best < 0) break;
    const [a, b] = brackets[best] as [number, number];
    // pivot p splits ranks a..p from p + 1..b: the p whose left mass is nearest half (ties: the lower).
    // Candidates: pivots next to a likely rank (p = r − 1 or r: one side of a likely outcome), so a
    // split never lands inside a run of unlikely ranks, where their small weights would put the
    // median; a bracket of unlikely ranks only is split at its median (binary search).
    const half = mass(a, b) / 2;
    let p = -1;
    let gap = Infinity;
    const consider = (q: number): void => {
      if (q < a || q >= b) return;
      const d = Math.abs(mass(a, q) - half);
      if (d < gap || (d === gap && q < p)) {
        gap = d;
        p = q;
      }
    };
    const i0 = firstLikely((r) => r >= a);
    const i1 = firstLikely((r) => r > b);
    if (i0 < i1) {
      // mass(a, q) grows with q: the nearest candidates to half sit around the first likely rank
      // whose mass reaches it
      const j = Math.min(i1 - 1, Math.max(i0, firstLikely((r) => r >= a && mass(a, r) >= half)));
      for (let i = Math.max(i0, j - 1); i <= Math.min(i1 - 1, j + 1); i += 1) {
        consider((likely[i] as number) - 1);
        consider(likely[i] as number);
      }
    }
    if (p < 0) {
      // the first q with mass(a, q) >= half, or the one before it when that is nearer
      let l = a;
      let h = b - 1;
      while (l < h) {
        const m = (l + h) >> 1;
        if (mass(a, m) >= half) h = m;
        else l = m + 1;
      }
      p = l > a && half - mass(a, l - 1) <= Math.abs(mass(a, l) - half) ? l - 1 : l;
    }
    pivots.push(p);
    brackets.splice(best, 1, [a, p], [p + 1, b]);
  }
  return pivots.sort((x, y) => x - y);
}
