// Protocols on shares, written against one primitive: round(needs, prepare), which opens a vector of
// this party's shares to all parties in the next round of the job (batched with every other
// operation of that round) after assigning the declared preprocessing. Each protocol states what it
// consumes (PREPROCESSING_TABLE / costOf), like JIFF's preprocessing map.
//
//  mul     Beaver, "Efficient multiparty protocols using circuit randomization", CRYPTO 1991.
//  lt      Catrina & de Hoogh, "Improved primitives for secure multiparty integer computation",
//          SCN 2010: LTZ via Mod2m, with the random M-bit r' made of preprocessed one-hot 4-bit blocks
//          and the statistical mask r'' from PRSS (no interaction). The BitLT of the public c' against
//          the shared r' is the lexicographic block comparison with a tree of (lt, eq) combinations
//          (the carry/prefix idea of Damgard, Fitzi, Kiltz, Nielsen, Toft, TCC 2006, and Nishide &
//          Ohta, PKC 2007, over radix 16): per block, [c_j < r_j] and [c_j == r_j] are LOCAL (one
//          lookup / one subtraction of the block's unary [r_j > v]), so only the tree multiplies. The
//          tree combines four blocks per round with closure items (closure.ts; the unbounded fan-in
//          products of Bar-Ilan & Beaver, PODC 1989): 13 blocks take 2 rounds, not 4.
//  eq      equality to zero in the same style: open d + 2^(M-1) + r' + 2^M r'', then
//          [d == 0] = prod_j [w_j == r_j] (local indicators, a tree of 4-factor closure products).
//  select  y + c (x - y); min/max from lt and select.
//  randomMultiple  rho * x with rho the `a` of a Beaver triple (a, b, ab): open x - b, then
//          rho x = (x - b) a + ab. Opening it tests x == 0 (zero iff x is, else uniform on the nonzero
//          elements; error 1/p): the masked zero test of Nishide & Ohta, PKC 2007, sec. 5 / Damgard et
//          al., TCC 2006, with a public outcome, so no bits at all where eq spends ceil((L+1)/4) nibbles.

import { allocBytes } from '@tenebra/transport/src/byte-pool';
import { groupSizes, lexProgram, prodProgram, type ClosureProgram } from './closure';
import { DEFAULT_KAPPA, ELEMENT_BYTES, P, assertEncodedAt, comparisonBits, concatEncoded, copyElement, decodeFieldVector, encodeFieldVector, reduce, reduceWide, words } from './field';
import { addEncoded, beaverOpeningsEncoded, beaverProductsEncoded, blockIndicatorsEncoded, closureEvalEncoded, closureOpeningsEncoded } from './kernel';
import { NIBBLE_VALUE, NIBBLE_WIDTH, WIDTH, type Counts, type Kind } from './reserve';

/** Preprocessing handed to one operation at its round (flat, see reserve.ts for the layouts). */
export interface Prep {
  /** Items per kind, encoded (16 bytes per element, WIDTH[kind] elements per item). */
  items: Readonly<Record<Kind, Uint8Array>>;
  /** PRSS bounded integers (statistical masks), maskBits bits per PRSS subset. */
  masks: bigint[];
}

/** What one operation's round consumes: items per reserve kind, and PRSS masks. */
export type OpNeeds = Counts & { masks: number };

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

const NO_NEEDS: OpNeeds = { triples: 0, lex4: 0, prod4: 0, nibbles: 0, masks: 0 };

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
  return decodeFieldVector(await beaverEncoded(eng, encodeFieldVector([...x, ...y]), m));
}

/**
 * rho * x for each element, rho a fresh uniform secret (the `a` of a Beaver triple (a, b, c = ab)):
 * open f = x - b (uniform: b is), then rho x = f a + c. Zero iff x == 0 (wrong only when rho = 0,
 * probability 1/p); otherwise uniform on the nonzero elements and independent of f, so OPENING it
 * reveals [x == 0] and nothing else. One round, one triple, no random bits, no masks.
 */
export async function randomMultiple(eng: RoundEngine, x: readonly bigint[]): Promise<bigint[]> {
  const m = x.length;
  if (m === 0) return [];
  const { opened, prep } = await eng.round({ ...NO_NEEDS, triples: m }, (p) => {
    const t = decodeFieldVector(p.items.triples);
    const out = new Array<bigint>(m);
    for (let e = 0; e < m; e++) {
      const d = x[e]! - t[3 * e + 1]!;
      out[e] = d < 0n ? d + P : d;
    }
    return out;
  });
  const t = decodeFieldVector(prep.items.triples);
  const out = new Array<bigint>(m);
  for (let e = 0; e < m; e++) out[e] = reduceWide(opened[e]! * t[3 * e]! + t[3 * e + 2]!);
  return out;
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
 * Horner's rule on the four 32-bit words of the value. With p = 2^127 - 1, multiplying by 16 mod p
 * is a rotation of the 127 bits by 4 (the 4 bits shifted out at the top come back at the bottom,
 * as 2^127 = 1), so each step is a rotation and an addition with carries on exact integers in
 * doubles, the carry out of bit 127 folded back in as 1. The value stays below 2^127 (p itself may
 * stand for 0 until the end); one BigInt is made per element, where limb sums of six blocks, their
 * limbsMod and a reduction per six blocks made some thirty. The same field element, canonical.
 * Throws FieldError on a block share that is not a field element, as decoding would.
 */
export function composeR(nib: DataView, e: number, blocks: number): bigint {
  const stride = NIBBLE_WIDTH * ELEMENT_BYTES;
  const base = (e * blocks * NIBBLE_WIDTH + NIBBLE_VALUE) * ELEMENT_BYTES;
  // the value's words, most significant first: w0 < 2^31, the others < 2^32
  let w0 = 0;
  let w1 = 0;
  let w2 = 0;
  let w3 = 0;
  for (let j = blocks - 1; j >= 0; j--) {
    const o = base + j * stride;
    assertEncodedAt(nib, o);
    // times 16 mod p: rotate the 127 bits left by 4
    const top = w0 >>> 27;
    w0 = ((w0 << 4) | (w1 >>> 28)) & 0x7fffffff;
    w1 = ((w1 << 4) | (w2 >>> 28)) >>> 0;
    w2 = ((w2 << 4) | (w3 >>> 28)) >>> 0;
    w3 = ((w3 << 4) | top) >>> 0;
    // plus v_j (< p), carries word by word; bit 127 folded back as 1 (the sum is below 2^128 - 2)
    let s = w3 + nib.getUint32(o + 12);
    let c = s >= TWO32 ? 1 : 0;
    w3 = s - c * TWO32;
    s = w2 + nib.getUint32(o + 8) + c;
    c = s >= TWO32 ? 1 : 0;
    w2 = s - c * TWO32;
    s = w1 + nib.getUint32(o + 4) + c;
    c = s >= TWO32 ? 1 : 0;
    w1 = s - c * TWO32;
    w0 = w0 + nib.getUint32(o) + c;
    if (w0 >= TWO31) {
      // value mod 2^127 plus 1: at most 2^127 - 2, so the carry stops below bit 127
      w0 -= TWO31;
      if (++w3 === TWO32) {
        w3 = 0;
        if (++w2 === TWO32) {
          w2 = 0;
          if (++w1 === TWO32) {
            w1 = 0;
            w0++;
          }
        }
      }
    }
  }
  // p itself is 0
  if (w0 === 0x7fffffff && w1 === 0xffffffff && w2 === 0xffffffff && w3 === 0xffffffff) return 0n;
  // three exact pieces: bits 75..126 (w0 and w1's top 21 bits), 32..74 (w1's low 11 bits and w2), 0..31
  return (BigInt(w0 * 2 ** 21 + (w1 >>> 11)) << 75n) | (BigInt((w1 & 0x7ff) * TWO32 + w2) << 32n) | BigInt(w3);
}

const TWO31 = 2 ** 31;
const TWO32 = 2 ** 32;

/**
 * Opens c = offset + x + r' + 2^M r'' for each element (x: shares of integers, offset public) and
 * returns c with the nibbles and masks used. One round; consumes `blocks` nibbles and 1 mask each.
 */
async function maskedOpen(eng: RoundEngine, x: readonly bigint[], offset: bigint, L: number): Promise<{ c: bigint[]; nib: Uint8Array; masks: bigint[] }> {
  const { M, blocks } = geometry(L, eng.kappa);
  const m = x.length;
  const twoM = 1n << BigInt(M);
  const { opened, prep } = await eng.round({ ...NO_NEEDS, nibbles: m * blocks, masks: m }, (p) => {
    const out = new Array<bigint>(m);
    const nv = viewOf(p.items.nibbles);
    for (let e = 0; e < m; e++) out[e] = reduceWide(offset + x[e]! + composeR(nv, e, blocks) + twoM * p.masks[e]!);
    return out;
  });
  return { c: opened, nib: prep.items.nibbles, masks: prep.masks };
}

/** m products x * y (factors = [x | y], m each; one triple each): one round, on encoded vectors. */
async function beaverEncoded(eng: RoundEngine, factors: Uint8Array, m: number): Promise<Uint8Array> {
  const { opened, prep } = await eng.roundEncoded({ ...NO_NEEDS, triples: m }, (p) => beaverOpeningsEncoded(factors, p.items.triples, m));
  return beaverProductsEncoded(opened, prep.items.triples, m);
}

/** Where factor k of a closure group reads its share: vector `vec` at block offset `block` of the group. */
type FactorSource = (k: number) => { vec: number; block: number };

/** One closure program's groups in a tree level: the rows' element index of each group's first block, and its output slot. */
interface LevelPart {
  prog: ClosureProgram;
  first: number[];
  slot: number[];
}

/** A level's pass-through blocks (groups of one): where each is in this level's rows and in the next's. */
interface Passed {
  first: number[];
  slot: number[];
}

/**
 * One tree level: combines each row's blocks (rows of `width` in `vecs`, element-major) in groups of
 * up to FAN_IN (groupSizes) by closure items of `kind`, ONE round for the whole level. Groups of the
 * same size form a part (one closure program). Returns the groups per row, each part's outputs
 * (outputs[j][o]: output o of part j's groups, encoded, in the order of parts[j].first), the parts
 * (each group's first block and its slot in the next level's rows).
 */
async function closureLevel(
  eng: RoundEngine, kind: 'lex4' | 'prod4', vecs: readonly Uint8Array[], m: number, width: number,
  program: (g: number) => ClosureProgram, programKey: number, source: FactorSource,
): Promise<{ groups: number; outputs: Uint8Array[][]; parts: readonly LevelPart[]; pass: Passed }> {
  const { groups, parts, pass } = levelLayout(m, width, program, programKey);
  const v32 = vecs.map(words);
  // factor vectors per part: factor k of group i at k * K + i
  const factors = parts.map(({ prog, first }) => {
    const K = first.length;
    const f = allocBytes(prog.p * K * ELEMENT_BYTES);
    const f32 = words(f);
    for (let k = 0; k < prog.p; k++) {
      const { vec, block } = source(k);
      const src = v32[vec]!;
      for (let i = 0; i < K; i++) copyElement(src, first[i]! + block, f32, k * K + i);
    }
    return f;
  });
  const itemBytes = WIDTH[kind] * ELEMENT_BYTES;
  const itemsOf = (all: Uint8Array): Uint8Array[] => {
    let at = 0;
    return parts.map(({ first }) => all.subarray(at * itemBytes, (at += first.length) * itemBytes));
  };
  const total = parts.reduce((s, p) => s + p.first.length, 0);
  const { opened, prep } = await eng.roundEncoded({ ...NO_NEEDS, [kind]: total }, (p) => {
    const items = itemsOf(p.items[kind]);
    return concatEncoded(parts.map(({ prog, first }, j) => closureOpeningsEncoded(factors[j]!, items[j]!, first.length, WIDTH[kind], prog.p)));
  });
  const items = itemsOf(prep.items[kind]);
  let at = 0;
  const outputs = parts.map(({ prog, first }, j) => {
    const K = first.length;
    const d = opened.subarray(at * ELEMENT_BYTES, (at += prog.p * K) * ELEMENT_BYTES);
    const out = closureEvalEncoded(d, items[j]!, K, prog);
    const outs: Uint8Array[] = [];
    for (let o = 0; o < prog.nOut; o++) outs.push(out.subarray(o * K * ELEMENT_BYTES, (o + 1) * K * ELEMENT_BYTES));
    return outs;
  });
  return { groups, outputs, parts, pass };
}

/** A tree level's grouping of m rows of `width` blocks (closureLevel): a function of (m, width, program) only. */
interface LevelLayout {
  groups: number;
  parts: readonly LevelPart[];
  pass: Passed;
}

/** Layouts made so far, by (m, width, programKey); read only once made (their callers only read them). */
const layouts = new Map<number, LevelLayout>();
const LAYOUT_CACHE_LIMIT = 512;

/**
 * The grouping of closureLevel: each row's blocks in groups of groupSizes(width), groups of the same
 * size one part (program(g)), groups of one passed through. The same for every level of the same
 * shape, so made once per (m, width, programKey) rather than per round (programKey names the
 * program family: 0 lex with eq, 1 lex without, 2 prod).
 */
function levelLayout(m: number, width: number, program: (g: number) => ClosureProgram, programKey: number): LevelLayout {
  const key = (m * 256 + width) * 4 + programKey;
  const hit = Number.isSafeInteger(key) && width < 256 ? layouts.get(key) : undefined;
  if (hit) return hit;
  const sizes = groupSizes(width);
  const groups = sizes.length;
  const byG = new Map<number, LevelPart>();
  const pass: Passed = { first: [], slot: [] };
  for (let e = 0; e < m; e++) {
    let start = 0;
    for (let q = 0; q < groups; q++) {
      const g = sizes[q]!;
      const first = e * width + start;
      const slot = e * groups + q;
      start += g;
      if (g === 1) {
        pass.first.push(first);
        pass.slot.push(slot);
        continue;
      }
      let part = byG.get(g);
      if (!part) byG.set(g, (part = { prog: program(g), first: [], slot: [] }));
      part.first.push(first);
      part.slot.push(slot);
    }
  }
  const out: LevelLayout = { groups, parts: [...byG.values()], pass };
  if (Number.isSafeInteger(key) && width < 256) {
    if (layouts.size >= LAYOUT_CACHE_LIMIT) layouts.clear();
    layouts.set(key, out);
  }
  return out;
}

/** The elements of `vec` (encoded) at the given indices, as one vector. */
function gather(vec: Uint8Array, at: readonly number[]): Uint8Array {
  const out = allocBytes(at.length * ELEMENT_BYTES);
  const s32 = words(vec);
  const o32 = words(out);
  at.forEach((x, i) => copyElement(s32, x, o32, i));
  return out;
}

/** Writes vector `v` (encoded) to the given element indices of `into`. */
function scatter(v: Uint8Array, into: Uint8Array, at: readonly number[]): void {
  const s32 = words(v);
  const o32 = words(into);
  at.forEach((x, i) => copyElement(s32, i, o32, x));
}

/**
 * Reduces per-element rows of (lt, eq) block pairs, most significant block first (encoded, row
 * length `width`), by the associative combination (lt1, eq1) o (lt2, eq2) = (lt1 + eq1 lt2, eq1 eq2),
 * up to four blocks per round: lt = l1 + e1 l2 + e1 e2 l3 + e1 e2 e3 l4, eq = e1 e2 e3 e4 from one
 * LEX4 closure item per group (closure.ts); ceil(log4 width) rounds (2 for 13 blocks). The last level
 * does not compute eq. Returns the m results, encoded.
 */
async function lexTree(eng: RoundEngine, lt: Uint8Array, eq: Uint8Array, m: number, width: number): Promise<Uint8Array> {
  while (width > 1) {
    const final = groupSizes(width).length === 1;
    // factor order [e1, l2, e2, l3, ...]: even k is e_(k/2+1), odd k is l_((k+3)/2)
    const { groups, outputs, parts, pass } = await closureLevel(eng, 'lex4', [lt, eq], m, width, (g) => lexProgram(g, !final), final ? 1 : 0, (k) =>
      k % 2 === 0 ? { vec: 1, block: k / 2 } : { vec: 0, block: (k + 1) / 2 });
    const nlt = allocBytes(m * groups * ELEMENT_BYTES);
    const neq = final ? nlt : allocBytes(m * groups * ELEMENT_BYTES);
    parts.forEach(({ first, slot }, j) => {
      scatter(addEncoded(gather(lt, first), outputs[j]![0]!), nlt, slot);
      if (!final) scatter(outputs[j]![1]!, neq, slot);
    });
    scatter(gather(lt, pass.first), nlt, pass.slot);
    scatter(gather(eq, pass.first), neq, pass.slot); // never final: a final level is one group
    lt = nlt;
    eq = neq;
    width = groups;
  }
  return lt;
}

/** Product of each row of factors (encoded, row length `width`), up to four per round by PROD4 closure items (ceil(log4 width) rounds). */
async function prodTree(eng: RoundEngine, f: Uint8Array, m: number, width: number): Promise<Uint8Array> {
  while (width > 1) {
    const { groups, outputs, parts, pass } = await closureLevel(eng, 'prod4', [f], m, width, prodProgram, 2, (k) => ({ vec: 0, block: k }));
    const nf = allocBytes(m * groups * ELEMENT_BYTES);
    parts.forEach(({ slot }, j) => scatter(outputs[j]![0]!, nf, slot));
    scatter(gather(f, pass.first), nf, pass.slot);
    f = nf;
    width = groups;
  }
  return f;
}

/** Scratch of nibbleDigits in indicators (one element's digits, read at once). */
let DIGITS = new Uint8Array(32);

/**
 * The block indicators ([c_j < r_j], [c_j == r_j], local) of the public values c against the
 * stored nibbles, rows of `blocks` per element, most significant block first.
 */
function indicators(nib: Uint8Array, c: readonly bigint[], blocks: number): { lt: Uint8Array; eq: Uint8Array } {
  const m = c.length;
  // pooled (16-byte aligned, zeroed) rather than two backing stores of their own per comparison round
  const digits = allocBytes(m * blocks);
  const baseBytes = allocBytes(4 * m * blocks);
  const base = new Uint32Array(baseBytes.buffer, baseBytes.byteOffset, m * blocks);
  const dig = DIGITS.length >= blocks ? DIGITS : (DIGITS = new Uint8Array(blocks));
  for (let e = 0, i = 0; e < m; e++) {
    nibbleDigits(c[e]!, blocks, dig);
    for (let j = blocks - 1; j >= 0; j--, i++) {
      digits[i] = dig[j]!;
      base[i] = (e * blocks + j) * NIBBLE_WIDTH;
    }
  }
  return blockIndicatorsEncoded(nib, base, digits);
}

/**
 * [a < 0] for signed a with |a| < 2^(L+1) (so a = x - y for |x|,|y| < 2^L). Catrina & de Hoogh LTZ.
 * L defaults to the engine's; a wider one (the caller checked it fits the field) costs more nibbles
 * and closure items, never more rounds up to L = 63 (a tree of at most 16 blocks).
 */
export async function ltz(eng: RoundEngine, a: readonly bigint[], L = eng.L): Promise<bigint[]> {
  const m = a.length;
  if (m === 0) return [];
  const { M, K, blocks } = geometry(L, eng.kappa);
  const half = 1n << BigInt(K - 1); // 2^(K-1) = 2^M
  const { c, nib, masks } = await maskedOpen(eng, a, half, L);
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

/** [x < y] for signed |x|, |y| < 2^L (L: the engine's unless given). */
export async function lt(eng: RoundEngine, x: readonly bigint[], y: readonly bigint[], L = eng.L): Promise<bigint[]> {
  return ltz(eng, vSub(x, y), L);
}

/** [x == y] for signed |x|, |y| < 2^L: opens d + 2^(M-1) + r' + 2^M r'', compares blocks with r'. */
export async function eq(eng: RoundEngine, x: readonly bigint[], y: readonly bigint[]): Promise<bigint[]> {
  const m = x.length;
  if (m === 0) return [];
  const { M, blocks } = geometry(eng.L, eng.kappa);
  const d = vSub(x, y);
  const off = 1n << BigInt(M - 1);
  const { c, nib } = await maskedOpen(eng, d, off, eng.L);
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
  /** LEX4 / PROD4 closure items (closure.ts): one per group of 2-4 blocks in a tree level. */
  lex4: number;
  prod4: number;
  /** Random bits, as 4-bit one-hot nibbles (4 bits each). */
  nibbles: number;
  bits: number;
  /** PRSS statistical masks (no interaction, no reserve). */
  masks: number;
  /** Field elements each party sends to each peer. */
  elementsPerPeer: number;
}

/** A comparison tree over `width` blocks: its rounds, closure items and opened elements (per compared element). */
function treeCost(width: number, lexicographic: boolean): { rounds: number; items: number; opened: number } {
  let rounds = 0;
  let items = 0;
  let opened = 0;
  while (width > 1) {
    const sizes = groupSizes(width);
    const final = sizes.length === 1;
    for (const g of sizes) {
      if (g === 1) continue; // a pass-through block: no item, nothing opened
      items++;
      opened += (lexicographic ? lexProgram(g, !final) : prodProgram(g)).p;
    }
    rounds++;
    width = sizes.length;
  }
  return { rounds, items, opened };
}

/** Per-element cost of each operation for bound L (the preprocessing map, as JIFF's). */
export function costOf(op: 'mul' | 'select' | 'lt' | 'le' | 'eq' | 'min' | 'max' | 'open' | 'randomMultiple', L: number, kappa = DEFAULT_KAPPA): OpCost {
  const { blocks } = geometry(L, kappa);
  const c = (rounds: number, triples: number, lex4: number, prod4: number, nibbles: number, masks: number, opened: number): OpCost => ({
    rounds, triples, lex4, prod4, nibbles, bits: 4 * nibbles, masks, elementsPerPeer: opened,
  });
  switch (op) {
    case 'open':
      return c(1, 0, 0, 0, 0, 0, 1);
    case 'mul':
    case 'select':
      return c(1, 1, 0, 0, 0, 0, 2);
    case 'randomMultiple': // one Beaver opening (x - b); opening the result is one 'open' more
      return c(1, 1, 0, 0, 0, 0, 1);
    case 'lt':
    case 'le': {
      const tr = treeCost(blocks, true);
      return c(1 + tr.rounds, 0, tr.items, 0, blocks, 1, 1 + tr.opened);
    }
    case 'eq': {
      const tr = treeCost(blocks, false);
      return c(1 + tr.rounds, 0, 0, tr.items, blocks, 1, 1 + tr.opened);
    }
    case 'min':
    case 'max': {
      const tr = treeCost(blocks, true);
      return c(2 + tr.rounds, 1, tr.items, 0, blocks, 1, 3 + tr.opened);
    }
  }
}

/** The preprocessing table for the default L = 48. */
export const PREPROCESSING_TABLE = Object.fromEntries(
  (['mul', 'select', 'lt', 'le', 'eq', 'min', 'max'] as const).map((op) => [op, costOf(op, 48)]),
) as Record<'mul' | 'select' | 'lt' | 'le' | 'eq' | 'min' | 'max', OpCost>;
