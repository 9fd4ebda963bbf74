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

import { ELEMENT_BYTES, P, assertEncodedAt, comparisonBits, copyElement, decodeFieldVector, encodeFieldVector, limbsMod, reduce, reduceWide, words } from './field';
import { addEncoded, beaverOpeningsEncoded, beaverProductsEncoded, blockIndicatorsEncoded } from './kernel';
import { NIBBLE_VALUE, NIBBLE_WIDTH } from './reserve';

/** Preprocessing handed to one operation at its round (flat, see reserve.ts for the layouts). */
export interface Prep {
  /** Triples [a, b, ab] and pair triples [a, b1, b2, ab1, ab2], encoded (16 bytes per element). */
  tripleBytes: Uint8Array;
  pairBytes: Uint8Array;
  /** Nibbles as bytes (16 per element, NIBBLE_WIDTH elements per nibble). */
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
  /** round() on encoded vectors (16 bytes big-endian per element): no BigInt per element. */
  roundEncoded(needs: OpNeeds, prepare: (p: Prep) => Uint8Array): Promise<{ opened: Uint8Array; prep: Prep }>;
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

/** Shares of the elementwise product (Beaver, one triple each; the kernel's step, as in the comparison tree). */
export async function mul(eng: RoundEngine, x: readonly bigint[], y: readonly bigint[]): Promise<bigint[]> {
  const m = x.length;
  if (m === 0) return [];
  return decodeFieldVector(await beaverEncoded(eng, encodeFieldVector([...x, ...y]), m, 'triples'));
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
async function maskedOpen(eng: RoundEngine, x: readonly bigint[], offset: bigint): Promise<{ c: bigint[]; nib: Uint8Array; masks: bigint[] }> {
  const { M, blocks } = geometry(eng.L, eng.kappa);
  const m = x.length;
  const twoM = 1n << BigInt(M);
  const { opened, prep } = await eng.round({ ...NO_NEEDS, nibbles: m * blocks, masks: m }, (p) => {
    const out = new Array<bigint>(m);
    const nv = viewOf(p.nibbles);
    for (let e = 0; e < m; e++) out[e] = reduceWide(offset + x[e]! + composeR(nv, e, blocks) + twoM * p.masks[e]!);
    return out;
  });
  return { c: opened, nib: prep.nibbles, masks: prep.masks };
}

/**
 * m products x * y (factors = [x | y], m each; one triple each), or with pair triples x * y1 and
 * x * y2 (factors = [x | y1 | y2]; one pair triple each): one round, on encoded vectors.
 * Returns [x y] or [x y1 | x y2].
 */
async function beaverEncoded(eng: RoundEngine, factors: Uint8Array, m: number, kind: 'triples' | 'pairs'): Promise<Uint8Array> {
  const width = kind === 'triples' ? 3 : 5;
  const items = (p: Prep): Uint8Array => (kind === 'triples' ? p.tripleBytes : p.pairBytes);
  const { opened, prep } = await eng.roundEncoded({ ...NO_NEEDS, [kind]: m }, (p) => beaverOpeningsEncoded(factors, items(p), m, width));
  return beaverProductsEncoded(opened, items(prep), m, width);
}

/**
 * Reduces per-element rows of (lt, eq) block pairs, most significant block first (encoded, row
 * length `width`), by the associative combination (lt1, eq1) o (lt2, eq2) = (lt1 + eq1 lt2, eq1 eq2);
 * ceil(log2 width) rounds, 2 products per combination sharing one factor (a pair triple; 1 product at
 * the last level, where eq is not needed). Returns the m results, encoded.
 */
async function lexTree(eng: RoundEngine, lt: Uint8Array, eq: Uint8Array, m: number, width: number): Promise<Uint8Array> {
  while (width > 1) {
    const pairs = width >> 1;
    const odd = width & 1;
    const finalLevel = width === 2;
    const k = m * pairs;
    const nw = pairs + odd;
    const lt32 = words(lt);
    const eq32 = words(eq);
    // factors [eq_H | lt_L | eq_L] and the lt_H to add to the first product
    const f = new Uint8Array((finalLevel ? 2 : 3) * k * ELEMENT_BYTES);
    const ltH = new Uint8Array(k * ELEMENT_BYTES);
    const f32 = words(f);
    const ltH32 = words(ltH);
    for (let e = 0, i = 0; e < m; e++) {
      const row = e * width;
      for (let q = 0; q < pairs; q++, i++) {
        const h = row + 2 * q;
        copyElement(eq32, h, f32, i);
        copyElement(lt32, h + 1, f32, k + i);
        if (!finalLevel) copyElement(eq32, h + 1, f32, 2 * k + i);
        copyElement(lt32, h, ltH32, i);
      }
    }
    // eq_H * lt_L and eq_H * eq_L share the factor eq_H: one pair triple (3 openings, not 4)
    const prod = await beaverEncoded(eng, f, k, finalLevel ? 'triples' : 'pairs');
    const sum32 = words(addEncoded(ltH, prod.subarray(0, k * ELEMENT_BYTES)));
    const prod32 = words(prod);
    const nlt = new Uint8Array(m * nw * ELEMENT_BYTES);
    const neq = finalLevel ? eq : new Uint8Array(m * nw * ELEMENT_BYTES);
    const nlt32 = words(nlt);
    const neq32 = words(neq);
    for (let e = 0, i = 0; e < m; e++) {
      const row = e * width;
      const nrow = e * nw;
      for (let q = 0; q < pairs; q++, i++) {
        copyElement(sum32, i, nlt32, nrow + q);
        if (!finalLevel) copyElement(prod32, k + i, neq32, nrow + q);
      }
      if (odd) {
        copyElement(lt32, row + width - 1, nlt32, nrow + pairs);
        if (!finalLevel) copyElement(eq32, row + width - 1, neq32, nrow + pairs);
      }
    }
    lt = nlt;
    eq = neq;
    width = nw;
  }
  return lt;
}

/** Product of each row of factors (encoded, row length `width`) by a balanced tree (ceil(log2 width) rounds). */
async function prodTree(eng: RoundEngine, f: Uint8Array, m: number, width: number): Promise<Uint8Array> {
  while (width > 1) {
    const pairs = width >> 1;
    const odd = width & 1;
    const k = m * pairs;
    const nw = pairs + odd;
    const f32 = words(f);
    const xy = new Uint8Array(2 * k * ELEMENT_BYTES);
    const xy32 = words(xy);
    for (let e = 0, i = 0; e < m; e++) {
      for (let q = 0; q < pairs; q++, i++) {
        copyElement(f32, e * width + 2 * q, xy32, i);
        copyElement(f32, e * width + 2 * q + 1, xy32, k + i);
      }
    }
    const prod32 = words(await beaverEncoded(eng, xy, k, 'triples'));
    const nf = new Uint8Array(m * nw * ELEMENT_BYTES);
    const nf32 = words(nf);
    for (let e = 0; e < m; e++) {
      for (let q = 0; q < pairs; q++) copyElement(prod32, e * pairs + q, nf32, e * nw + q);
      if (odd) copyElement(f32, e * width + width - 1, nf32, e * nw + pairs);
    }
    f = nf;
    width = nw;
  }
  return f;
}

/**
 * The block indicators ([c_j < r_j], [c_j == r_j], local) of the public values c against the
 * stored nibbles, rows of `blocks` per element, most significant block first.
 */
function indicators(nib: Uint8Array, c: readonly bigint[], blocks: number): { lt: Uint8Array; eq: Uint8Array } {
  const m = c.length;
  const digits = new Uint8Array(m * blocks);
  const base = new Uint32Array(m * blocks);
  const dig = new Uint8Array(blocks);
  for (let e = 0, i = 0; e < m; e++) {
    nibbleDigits(c[e]!, blocks, dig);
    for (let j = blocks - 1; j >= 0; j--, i++) {
      digits[i] = dig[j]!;
      base[i] = (e * blocks + j) * NIBBLE_WIDTH;
    }
  }
  return blockIndicatorsEncoded(nib, base, digits);
}

/** [a < 0] for signed a with |a| < 2^(L+1) (so a = x - y for |x|,|y| < 2^L). Catrina & de Hoogh LTZ. */
export async function ltz(eng: RoundEngine, a: readonly bigint[]): Promise<bigint[]> {
  const m = a.length;
  if (m === 0) return [];
  const { M, K, blocks } = geometry(eng.L, eng.kappa);
  const half = 1n << BigInt(K - 1); // 2^(K-1) = 2^M
  const { c, nib, masks } = await maskedOpen(eng, a, half);
  const bigM = BigInt(M);
  const his = c.map((ce) => ce >> bigM);
  const { lt, eq } = indicators(nib, c, blocks);
  const u = decodeFieldVector(await lexTree(eng, lt, eq, m, blocks)); // [c' < r']
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
  // (x + r') mod 2^M with x = d + 2^(M-1); d == 0 iff it equals r' in every block. The block order
  // does not matter for a product: indicators() lists the most significant block first.
  const w = c.map((ce) => (ce - off) & modM);
  const { eq: f } = indicators(nib, w, blocks);
  return decodeFieldVector(await prodTree(eng, f, m, blocks));
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
