// Protocols on shares, written against one primitive: round(needs, prepare), which opens a vector of
// this party's shares to all parties in the next round of the job (batched with every other
// operation of that round) after assigning the declared preprocessing. Each protocol states what it
// consumes (PREPROCESSING_TABLE / costOf), like JIFF's preprocessing map.
//
//  mul     Beaver, "Efficient multiparty protocols using circuit randomization", CRYPTO 1991.
//  lt      Catrina & de Hoogh, "Improved primitives for secure multiparty integer computation",
//          SCN 2010: LTZ via Mod2m, with the random M-bit r' made of preprocessed one-hot 4-bit blocks
//          and the statistical mask r'' from PRSS (no interaction). The BitLT of the public c' against
//          the shared r' is the lexicographic block comparison with a logarithmic-depth tree of
//          (lt, eq) combinations (the carry/prefix idea of Damgard, Fitzi, Kiltz, Nielsen, Toft,
//          TCC 2006, and Nishide & Ohta, PKC 2007, over radix 16): per block, [c_j < r_j] and
//          [c_j == r_j] are LOCAL (one lookup / one subtraction of the block's unary [r_j > v]), so only
//          the tree multiplies.
//  eq      equality to zero in the same style: open d + 2^(M-1) + r' + 2^M r'', then
//          [d == 0] = prod_j [w_j == r_j] (local indicators, tree of products).
//  select  y + c (x - y); min/max from lt and select.

import { ELEMENT_BYTES, P, assertEncodedAt, comparisonBits, limbsMod, reduce, reduceWide } from './field';
import { NIBBLE_VALUE, NIBBLE_WIDTH, elementAt } from './reserve';

/** Preprocessing handed to one operation at its round (flat, see reserve.ts for the layouts). */
export interface Prep {
  triples: bigint[];
  pairs: bigint[];
  /** Nibbles as bytes (16 per element, NIBBLE_WIDTH elements per nibble): read with elementAt. */
  nibbles: Uint8Array;
  /** PRSS bounded integers (statistical masks), maskBits bits per PRSS subset. */
  masks: bigint[];
}

/** What one operation's round consumes. */
export interface OpNeeds {
  triples: number;
  pairs: number;
  nibbles: number;
  masks: number;
}

/** The runtime primitive protocols are written against. */
export interface RoundEngine {
  readonly n: number;
  readonly t: number;
  readonly L: number;
  readonly kappa: number;
  /** Opens prepare(prep) (this party's shares) to all in the next round; resolves with the values. */
  round(needs: OpNeeds, prepare: (p: Prep) => bigint[]): Promise<{ opened: bigint[]; prep: Prep }>;
}

const NO_NEEDS: OpNeeds = { triples: 0, pairs: 0, nibbles: 0, masks: 0 };

// ---- local vector operations (shares of the same sharing degree) ----

/** Elementwise a + b. */
export function vAdd(a: readonly bigint[], b: readonly bigint[]): bigint[] {
  const out = new Array<bigint>(a.length);
  for (let i = 0; i < a.length; i++) {
    const s = a[i]! + b[i]!;
    out[i] = s >= P ? s - P : s;
  }
  return out;
}

/** Elementwise a - b. */
export function vSub(a: readonly bigint[], b: readonly bigint[]): bigint[] {
  const out = new Array<bigint>(a.length);
  for (let i = 0; i < a.length; i++) {
    const s = a[i]! - b[i]!;
    out[i] = s < 0n ? s + P : s;
  }
  return out;
}

/** Elementwise -a. */
export function vNeg(a: readonly bigint[]): bigint[] {
  return a.map((x) => (x === 0n ? 0n : P - x));
}

/** Elementwise a + c (public; a constant is added to the shares of a degree-t sharing directly). */
export function vAddPublic(a: readonly bigint[], c: readonly bigint[]): bigint[] {
  return vAdd(a, c);
}

/** Elementwise a * c (public). */
export function vMulPublic(a: readonly bigint[], c: readonly bigint[]): bigint[] {
  const out = new Array<bigint>(a.length);
  for (let i = 0; i < a.length; i++) out[i] = reduce(a[i]! * c[i]!);
  return out;
}

// ---- protocols ----

/** Shares of the elementwise product (Beaver): open d = x - a, e = y - b; z = c + d b + e a + d e. */
export async function mul(eng: RoundEngine, x: readonly bigint[], y: readonly bigint[]): Promise<bigint[]> {
  const m = x.length;
  if (m === 0) return [];
  const { opened, prep } = await eng.round({ ...NO_NEEDS, triples: m }, (p) => {
    const t = p.triples;
    const out = new Array<bigint>(2 * m);
    for (let i = 0; i < m; i++) {
      const d = x[i]! - t[3 * i]!;
      const e = y[i]! - t[3 * i + 1]!;
      out[i] = d < 0n ? d + P : d;
      out[m + i] = e < 0n ? e + P : e;
    }
    return out;
  });
  const t = prep.triples;
  const z = new Array<bigint>(m);
  for (let i = 0; i < m; i++) {
    const d = opened[i]!;
    const e = opened[m + i]!;
    // c + d b + e a + d e = c + d b + e (a + d): two products instead of three (sum < 3p^2 + p)
    z[i] = reduceWide(t[3 * i + 2]! + d * t[3 * i + 1]! + e * (t[3 * i]! + d));
  }
  return z;
}

/**
 * x*y1 and x*y2 with one pair triple (a, b1, b2, a b1, a b2): opens d = x - a once and e_k = y_k - b_k,
 * so 3 field elements per element instead of 4. Returns [x*y1 ..., x*y2 ...].
 */
export async function mul2(eng: RoundEngine, x: readonly bigint[], y1: readonly bigint[], y2: readonly bigint[]): Promise<bigint[]> {
  const m = x.length;
  if (m === 0) return [];
  const { opened, prep } = await eng.round({ ...NO_NEEDS, pairs: m }, (p) => {
    const q = p.pairs;
    const out = new Array<bigint>(3 * m);
    for (let i = 0; i < m; i++) {
      const d = x[i]! - q[5 * i]!;
      const e1 = y1[i]! - q[5 * i + 1]!;
      const e2 = y2[i]! - q[5 * i + 2]!;
      out[i] = d < 0n ? d + P : d;
      out[m + i] = e1 < 0n ? e1 + P : e1;
      out[2 * m + i] = e2 < 0n ? e2 + P : e2;
    }
    return out;
  });
  const q = prep.pairs;
  const z = new Array<bigint>(2 * m);
  for (let i = 0; i < m; i++) {
    const d = opened[i]!;
    const e1 = opened[m + i]!;
    const e2 = opened[2 * m + i]!;
    // as mul: a b_k + d b_k + e_k (a + d), with a + d shared by both products
    const ad = q[5 * i]! + d;
    z[i] = reduceWide(q[5 * i + 3]! + d * q[5 * i + 1]! + e1 * ad);
    z[m + i] = reduceWide(q[5 * i + 4]! + d * q[5 * i + 2]! + e2 * ad);
  }
  return z;
}

/** Geometry of the comparison for bound L (see field.ts): M bits in `blocks` 4-bit blocks, K = M + 1. */
export function geometry(L: number, kappa: number): { M: number; K: number; blocks: number; maskBits: number } {
  const { M, K, blocks } = comparisonBits(L);
  return { M, K, blocks, maskBits: K + kappa - M };
}

/** The low `blocks` base-16 digits of x (least significant first) into out. */
function nibbleDigits(x: bigint, blocks: number, out: Uint8Array): void {
  let j = 0;
  while (j < blocks) {
    let w = Number(x & 0xffffffffn);
    x >>= 32n;
    for (let k = 0; k < 8 && j < blocks; k++, j++) {
      out[j] = w & 15;
      w >>>= 4;
    }
  }
}

/** Share of [r > c] for the nibble at element `base` (c in 0..15). */
function gtAt(nib: DataView, base: number, c: number): bigint {
  return c >= 15 ? 0n : elementAt(nib, base + c);
}

/** Share of [r == c] for the nibble at element `base`: [r > c-1] - [r > c], with [r > -1] = 1. */
function eqAt(nib: DataView, base: number, c: number): bigint {
  const above = c === 0 ? 1n : elementAt(nib, base + c - 1);
  const d = above - gtAt(nib, base, c);
  return d < 0n ? d + P : d;
}

function viewOf(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * r' = sum_j 16^j v_j mod p from the blocks' value shares (NIBBLE_WIDTH-strided, element-major), by
 * Horner's rule on the four 32-bit limbs of the encoded shares as exact doubles, COMPOSE_CHUNK blocks
 * at a time reduced by limbsMod: a few BigInts per comparison instead of decoding every block's share.
 */
function composeR(nib: DataView, e: number, blocks: number): bigint {
  const stride = NIBBLE_WIDTH * ELEMENT_BYTES;
  const base = (e * blocks * NIBBLE_WIDTH + NIBBLE_VALUE) * ELEMENT_BYTES;
  let r = 0n;
  for (let hi = blocks; hi > 0; hi -= COMPOSE_CHUNK) {
    const lo = Math.max(0, hi - COMPOSE_CHUNK);
    let l0 = 0;
    let l1 = 0;
    let l2 = 0;
    let l3 = 0;
    for (let j = hi - 1; j >= lo; j--) {
      const o = base + j * stride;
      assertEncodedAt(nib, o);
      l0 = l0 * 16 + nib.getUint32(o);
      l1 = l1 * 16 + nib.getUint32(o + 4);
      l2 = l2 * 16 + nib.getUint32(o + 8);
      l3 = l3 * 16 + nib.getUint32(o + 12);
    }
    r = reduce((r << BigInt(4 * (hi - lo))) + limbsMod(l0, l1, l2, l3));
  }
  return r;
}

/** Blocks per limbsMod in composeR: after k Horner steps a limb is below 2^32 (16^k - 1) / 15, under limbsMod's 2^53 - 2^22 for k <= 6. */
const COMPOSE_CHUNK = 6;

/**
 * Opens c = offset + x + r' + 2^M r'' for each element (x: shares of integers, offset public) and
 * returns c with the nibbles and masks used. One round; consumes `blocks` nibbles and 1 mask each.
 */
async function maskedOpen(eng: RoundEngine, x: readonly bigint[], offset: bigint): Promise<{ c: bigint[]; nib: DataView; masks: bigint[] }> {
  const { M, blocks } = geometry(eng.L, eng.kappa);
  const m = x.length;
  const twoM = 1n << BigInt(M);
  const { opened, prep } = await eng.round({ ...NO_NEEDS, nibbles: m * blocks, masks: m }, (p) => {
    const out = new Array<bigint>(m);
    const nv = viewOf(p.nibbles);
    for (let e = 0; e < m; e++) out[e] = reduceWide(offset + x[e]! + composeR(nv, e, blocks) + twoM * p.masks[e]!);
    return out;
  });
  return { c: opened, nib: viewOf(prep.nibbles), masks: prep.masks };
}

/**
 * Reduces per-element rows of (lt, eq) block pairs, most significant block first (flat arrays, row
 * length `width`), by the associative combination (lt1, eq1) o (lt2, eq2) = (lt1 + eq1 lt2, eq1 eq2);
 * ceil(log2 width) rounds, 2 products per combination sharing one factor (a pair triple; 1 product at
 * the last level, where eq is not needed).
 */
async function lexTree(eng: RoundEngine, lt: bigint[], eq: bigint[], m: number, width: number): Promise<bigint[]> {
  while (width > 1) {
    const pairs = width >> 1;
    const odd = width & 1;
    const finalLevel = width === 2;
    const k = m * pairs;
    const xs = new Array<bigint>(k);
    const y1 = new Array<bigint>(k);
    const y2 = finalLevel ? [] : new Array<bigint>(k);
    for (let e = 0, i = 0; e < m; e++) {
      const row = e * width;
      for (let q = 0; q < pairs; q++, i++) {
        const h = row + 2 * q;
        xs[i] = eq[h]!;
        y1[i] = lt[h + 1]!;
        if (!finalLevel) y2[i] = eq[h + 1]!;
      }
    }
    // eq_H * lt_L and eq_H * eq_L share the factor eq_H: one pair triple (3 openings, not 4)
    const prod = finalLevel ? await mul(eng, xs, y1) : await mul2(eng, xs, y1, y2);
    const nw = pairs + odd;
    const nlt = new Array<bigint>(m * nw);
    const neq = finalLevel ? eq : new Array<bigint>(m * nw);
    for (let e = 0, i = 0; e < m; e++) {
      const row = e * width;
      const nrow = e * nw;
      for (let q = 0; q < pairs; q++, i++) {
        const s = lt[row + 2 * q]! + prod[i]!;
        nlt[nrow + q] = s >= P ? s - P : s;
        if (!finalLevel) neq[nrow + q] = prod[k + i]!;
      }
      if (odd) {
        nlt[nrow + pairs] = lt[row + width - 1]!;
        if (!finalLevel) neq[nrow + pairs] = eq[row + width - 1]!;
      }
    }
    lt = nlt;
    eq = neq;
    width = nw;
  }
  return lt;
}

/** Product of each row of factors (flat, row length `width`) by a balanced tree (ceil(log2 width) rounds). */
async function prodTree(eng: RoundEngine, f: bigint[], m: number, width: number): Promise<bigint[]> {
  while (width > 1) {
    const pairs = width >> 1;
    const odd = width & 1;
    const k = m * pairs;
    const xs = new Array<bigint>(k);
    const ys = new Array<bigint>(k);
    for (let e = 0, i = 0; e < m; e++) {
      for (let q = 0; q < pairs; q++, i++) {
        xs[i] = f[e * width + 2 * q]!;
        ys[i] = f[e * width + 2 * q + 1]!;
      }
    }
    const prod = await mul(eng, xs, ys);
    const nw = pairs + odd;
    const nf = new Array<bigint>(m * nw);
    for (let e = 0; e < m; e++) {
      for (let q = 0; q < pairs; q++) nf[e * nw + q] = prod[e * pairs + q]!;
      if (odd) nf[e * nw + pairs] = f[e * width + width - 1]!;
    }
    f = nf;
    width = nw;
  }
  return f;
}

/** [a < 0] for signed a with |a| < 2^(L+1) (so a = x - y for |x|,|y| < 2^L). Catrina & de Hoogh LTZ. */
export async function ltz(eng: RoundEngine, a: readonly bigint[]): Promise<bigint[]> {
  const m = a.length;
  if (m === 0) return [];
  const { M, K, blocks } = geometry(eng.L, eng.kappa);
  const half = 1n << BigInt(K - 1); // 2^(K-1) = 2^M
  const { c, nib, masks } = await maskedOpen(eng, a, half);
  const bigM = BigInt(M);
  const lt = new Array<bigint>(m * blocks);
  const eq = new Array<bigint>(m * blocks);
  const dig = new Uint8Array(blocks);
  const his = new Array<bigint>(m);
  for (let e = 0; e < m; e++) {
    const ce = c[e]!;
    his[e] = ce >> bigM;
    nibbleDigits(ce, blocks, dig);
    for (let j = blocks - 1, i = e * blocks; j >= 0; j--, i++) {
      const cj = dig[j]!;
      const base = (e * blocks + j) * NIBBLE_WIDTH;
      // [c_j < r_j] = [r_j > c_j];  [c_j == r_j] = [r_j > c_j - 1] - [r_j > c_j] (each element read once)
      const g = gtAt(nib, base, cj);
      const d = (cj === 0 ? 1n : elementAt(nib, base + cj - 1)) - g;
      lt[i] = g;
      eq[i] = d < 0n ? d + P : d;
    }
  }
  const u = await lexTree(eng, lt, eq, m, blocks); // [c' < r']
  // floor(x / 2^M) = floor(c / 2^M) - r'' - u, x = 2^M + a; [a < 0] = 1 - that.
  const out = new Array<bigint>(m);
  for (let e = 0; e < m; e++) {
    const v = 1n - his[e]! + masks[e]! + u[e]!;
    out[e] = v < 0n ? ((v % P) + P) % P : reduceWide(v);
  }
  return out;
}

/** [x < y] for signed |x|, |y| < 2^L. */
export async function lt(eng: RoundEngine, x: readonly bigint[], y: readonly bigint[]): Promise<bigint[]> {
  return ltz(eng, vSub(x, y));
}

/** [x == y] for signed |x|, |y| < 2^L: opens d + 2^(M-1) + r' + 2^M r'', compares blocks with r'. */
export async function eq(eng: RoundEngine, x: readonly bigint[], y: readonly bigint[]): Promise<bigint[]> {
  const m = x.length;
  if (m === 0) return [];
  const { M, blocks } = geometry(eng.L, eng.kappa);
  const d = vSub(x, y);
  const off = 1n << BigInt(M - 1);
  const { c, nib } = await maskedOpen(eng, d, off);
  const modM = (1n << BigInt(M)) - 1n;
  const f = new Array<bigint>(m * blocks);
  const dig = new Uint8Array(blocks);
  for (let e = 0; e < m; e++) {
    const w = (c[e]! - off) & modM; // (x + r') mod 2^M with x = d + 2^(M-1); d == 0 iff w == r'
    nibbleDigits(w, blocks, dig);
    for (let j = 0; j < blocks; j++) {
      const wj = dig[j]!;
      f[e * blocks + j] = eqAt(nib, (e * blocks + j) * NIBBLE_WIDTH, wj);
    }
  }
  return prodTree(eng, f, m, blocks);
}

/** c ? x : y = y + c (x - y), one product. */
export async function select(eng: RoundEngine, c: readonly bigint[], x: readonly bigint[], y: readonly bigint[]): Promise<bigint[]> {
  return vAdd(y, await mul(eng, c, vSub(x, y)));
}

/** min(x, y) = select([x < y], x, y). */
export async function min(eng: RoundEngine, x: readonly bigint[], y: readonly bigint[]): Promise<bigint[]> {
  return select(eng, await lt(eng, x, y), x, y);
}

/** max(x, y) = select([x < y], y, x). */
export async function max(eng: RoundEngine, x: readonly bigint[], y: readonly bigint[]): Promise<bigint[]> {
  return select(eng, await lt(eng, x, y), y, x);
}

// ---- declared costs ----

/** What one element of an operation consumes and costs. */
export interface OpCost {
  rounds: number;
  triples: number;
  /** Pair triples (two products sharing a factor). */
  pairs: number;
  /** Random bits, as 4-bit one-hot nibbles (4 bits each). */
  nibbles: number;
  bits: number;
  /** PRSS statistical masks (no interaction, no reserve). */
  masks: number;
  /** Field elements each party sends to each peer. */
  elementsPerPeer: number;
}

function treeCost(width: number, lexicographic: boolean): { rounds: number; triples: number; pairs: number; opened: number } {
  let rounds = 0;
  let triples = 0;
  let pairs = 0;
  let opened = 0;
  while (width > 1) {
    const k = Math.floor(width / 2);
    if (lexicographic && width !== 2) {
      pairs += k;
      opened += 3 * k;
    } else {
      triples += k;
      opened += 2 * k;
    }
    rounds++;
    width = k + (width % 2);
  }
  return { rounds, triples, pairs, opened };
}

/** Per-element cost of each operation for bound L (the preprocessing map, as JIFF's). */
export function costOf(op: 'mul' | 'select' | 'lt' | 'le' | 'eq' | 'min' | 'max' | 'open', L: number, kappa = 40): OpCost {
  const { blocks } = geometry(L, kappa);
  const c = (rounds: number, triples: number, pairs: number, nibbles: number, masks: number, opened: number): OpCost => ({
    rounds, triples, pairs, nibbles, bits: 4 * nibbles, masks, elementsPerPeer: opened,
  });
  switch (op) {
    case 'open':
      return c(1, 0, 0, 0, 0, 1);
    case 'mul':
    case 'select':
      return c(1, 1, 0, 0, 0, 2);
    case 'lt':
    case 'le': {
      const tr = treeCost(blocks, true);
      return c(1 + tr.rounds, tr.triples, tr.pairs, blocks, 1, 1 + tr.opened);
    }
    case 'eq': {
      const tr = treeCost(blocks, false);
      return c(1 + tr.rounds, tr.triples, tr.pairs, blocks, 1, 1 + tr.opened);
    }
    case 'min':
    case 'max': {
      const tr = treeCost(blocks, true);
      return c(2 + tr.rounds, tr.triples + 1, tr.pairs, blocks, 1, 3 + tr.opened);
    }
  }
}

/** The preprocessing table for the default L = 48. */
export const PREPROCESSING_TABLE = Object.fromEntries(
  (['mul', 'select', 'lt', 'le', 'eq', 'min', 'max'] as const).map((op) => [op, costOf(op, 48)]),
) as Record<'mul' | 'select' | 'lt' | 'le' | 'eq' | 'min' | 'max', OpCost>;
