// The prime field of every sharing: GF(p), p = 2^127 - 1 (a Mersenne prime). No I/O.
//
// Why this prime. Secret values that are compared are signed integers x with |x| < 2^L, L = 48 by
// default (prices in ticks, sizes in steps; products are computed but never compared). A comparison
// a < b works on the difference d = a - b, |d| < 2^(L+1), so d needs L+2 bits in two's complement.
// The comparison (Catrina & de Hoogh, SCN 2010; see protocols.ts) opens
//     c = 2^(K-1) + d + r' + 2^M * r''
// where r' is a random M-bit value (M = 4 * ceil((L+1)/4) = 52, a whole number of 4-bit blocks,
// M >= L+1), K = M + 1 = 53, and r'' is a pseudo-random bounded integer made by PRSS (prss.ts): the
// sum over the C(n,t) PRSS subsets of values below 2^(K+kappa-M), so r'' < C(n,t) * 2^(K+kappa-M).
// With nu = ceil(log2 C(n,t)) (the PRSS bounded-mask growth) the opened value is below
//     2^K + 2^M + 2^(K+kappa+nu)  <  2^(K+kappa+nu+1),
// and it must not wrap mod p, so we need 2^(K+kappa+nu+1) <= p. The subset that no coalition of t
// parties touches contributes a uniform term, which hides d with statistical distance <= 2^-kappa.
//
// Why kappa = 64 (DEFAULT_KAPPA). 2^-kappa bounds what one opened c tells about its d, and the
// committee opens millions of them: the distances add up (a union bound over every comparison), so
// 2^-40 per comparison is 2^-20 after a million. At 64 the sum stays below 2^-30 after 2^34
// comparisons. It costs no random bits: r'' comes from PRSS (local PRF output, no communication),
// and c is still one field element; only r'' grows (K+kappa-M = 65 bits a subset instead of 41).
// What it costs is room: the largest L and C(n,t) that fit shrink by 24 bits.
//   n=5, t=2: C(5,2) = 10, nu = 4; kappa = 64, L = 32 (book values, K = 37):  106 <= 126  (ok)
//                                              L = 48 (liquidity sums, K = 53): 122 <= 126  (ok)
//   the same with p = 2^89 - 1:                                                 106 > 88   (fails)
//   n=3, t=1: nu = 2: 120;  n=7, t=2: C = 21, nu = 5: 123;  n=7, t=3: C = 35, nu = 6: 124  (L = 48, ok)
//   at L = 48, C(n,t) <= 2^8 fits (n = 11, t = 5: C = 462, nu = 9: 127, refused); at n=5, t=2, L <= 55.
// comparisonFits() checks this for any (L, kappa, n, t) at construction time.

/** The field modulus p = 2^127 - 1. */
export const P = (1n << 127n) - 1n;
/** Bits of p. */
export const P_BITS = 127;
/** Default bound on compared values: |x| < 2^L. */
export const DEFAULT_L = 48;
/** Default statistical security parameter kappa (bits) of every comparison's masking (see header: 64, not 40). */
export const DEFAULT_KAPPA = 64;
/** Bits per comparison block (preprocessed one-hot 4-bit values; see preprocessing.ts). */
export const BLOCK_BITS = 4;
/** Bytes per encoded field element. */
export const ELEMENT_BYTES = 16;

const HALF = P >> 1n;

/** Error for values or parameters that are not acceptable to the field layer. */
export class FieldError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldError';
  }
}

/** x mod p for 0 <= x < 2^254 (e.g. a product of two field elements), by the Mersenne fold; faster than %. */
export function reduce(x: bigint): bigint {
  x = (x & P) + (x >> 127n);
  return x >= P ? x - P : x;
}

/** x mod p for any x >= 0 (e.g. a sum of many products), by repeated folds. */
export function reduceWide(x: bigint): bigint {
  while (x > P) x = (x & P) + (x >> 127n);
  return x === P ? 0n : x;
}

/** x mod p for any bigint (negative or huge). */
export function mod(x: bigint): bigint {
  if (x >= 0n) {
    if (x < P) return x;
    if (x < 1n << 254n) return reduce(x);
    return x % P;
  }
  const r = x % P;
  return r === 0n ? 0n : r + P;
}

/** a + b mod p for field elements. */
export function add(a: bigint, b: bigint): bigint {
  const s = a + b;
  return s >= P ? s - P : s;
}

/** a - b mod p for field elements. */
export function sub(a: bigint, b: bigint): bigint {
  const s = a - b;
  return s < 0n ? s + P : s;
}

/** -a mod p for a field element. */
export function neg(a: bigint): bigint {
  return a === 0n ? 0n : P - a;
}

/** a * b mod p for field elements. */
export function mul(a: bigint, b: bigint): bigint {
  return reduce(a * b);
}

/** a^e mod p for e >= 0. */
export function pow(a: bigint, e: bigint): bigint {
  if (e < 0n) throw new FieldError('pow: negative exponent');
  let result = 1n;
  let base = mod(a);
  while (e > 0n) {
    if (e & 1n) result = reduce(result * base);
    base = reduce(base * base);
    e >>= 1n;
  }
  return result;
}

/** a^-1 mod p; throws on 0. Extended Euclid (faster than Fermat for one value). */
export function inv(a: bigint): bigint {
  a = mod(a);
  if (a === 0n) throw new FieldError('inverse of zero');
  let [r0, r1] = [P, a];
  let [s0, s1] = [0n, 1n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  return mod(s0);
}

/** Elementwise inverses by Montgomery's batch trick (one inversion, 3 products per element); throws on 0. */
export function invAll(xs: readonly bigint[]): bigint[] {
  const m = xs.length;
  const prefix = new Array<bigint>(m);
  let acc = 1n;
  for (let i = 0; i < m; i++) {
    const x = xs[i]!;
    if (x === 0n) throw new FieldError(`inverse of zero at index ${i}`);
    prefix[i] = acc;
    acc = reduce(acc * x);
  }
  let accInv = inv(acc);
  const out = new Array<bigint>(m);
  for (let i = m - 1; i >= 0; i--) {
    out[i] = reduce(accInv * prefix[i]!);
    accInv = reduce(accInv * xs[i]!);
  }
  return out;
}

/**
 * The canonical square root of a quadratic residue: a^((p+1)/4), which for p = 2^127 - 1 is
 * a^(2^125), i.e. 125 squarings. Throws if a is not a square.
 */
export function sqrt(a: bigint): bigint {
  a = mod(a);
  let r = a;
  for (let i = 0; i < 125; i++) r = reduce(r * r);
  if (reduce(r * r) !== a) throw new FieldError('sqrt of a non-residue');
  return r;
}

/** The signed representative of a field element, in (-p/2, p/2]. */
export function toSigned(a: bigint): bigint {
  return a > HALF ? a - P : a;
}

/** The field element of a signed integer |x| < p/2. */
export function fromSigned(x: bigint): bigint {
  if (x > HALF || x < -HALF) throw new FieldError(`signed value out of range: ${x}`);
  return x < 0n ? x + P : x;
}

/** True iff x is a field element in canonical form [0, p). */
export function isElement(x: unknown): x is bigint {
  return typeof x === 'bigint' && x >= 0n && x < P;
}

/** Throws a FieldError naming `what` and the index if any value is not in [0, p). */
export function assertElements(xs: readonly bigint[], what = 'value'): void {
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (typeof x !== 'bigint' || x < 0n || x >= P) {
      throw new FieldError(`${what} at index ${i} is not a field element in [0, 2^127-1): ${String(x)}`);
    }
  }
}

/** Writes x (a field element) as 16 big-endian bytes at byte offset off of view. */
export function writeElement(view: DataView, off: number, x: bigint): void {
  view.setBigUint64(off, x >> 64n);
  // setBigUint64 stores its argument mod 2^64 (ToBigUint64): the low half without a masked temporary
  view.setBigUint64(off + 8, x);
}

/** x / 2 mod p for a field element (halving: no product needed since p is odd). */
export function half(x: bigint): bigint {
  return (x & 1n) === 0n ? x >> 1n : (x + P) >> 1n;
}

/** Reads a 16-byte big-endian field element; throws if it is >= p. */
export function readElement(view: DataView, off: number): bigint {
  const x = (view.getBigUint64(off) << 64n) | view.getBigUint64(off + 8);
  if (x >= P) throw new FieldError(`decoded value at byte ${off} is not a field element`);
  return x;
}

// ---- limb sums: linear combinations with small integer weights without BigInt temporaries ----

/** The 32-bit limbs of p = 2^127 - 1, most significant first. */
export const P_LIMBS = [0x7fffffff, 0xffffffff, 0xffffffff, 0xffffffff] as const;
/**
 * Bound on sum |c| for the limb accumulation: each limb sum is then below 2^32 * 2^19 = 2^51 in
 * magnitude, and with the bias (at most sum |c| * p) and the carries of fromLimbsMod below 2^53,
 * exact in a double.
 */
export const LIMB_WEIGHT_LIMIT = 2 ** 19;

/**
 * Adds c * x_e for the 16-byte big-endian elements x_e at byte offsets off0 + e * stride of buf to
 * the four limb sums of element e (acc[4e..4e+3], most significant first). No BigInt is made: with
 * sum |c| <= LIMB_WEIGHT_LIMIT every partial sum is an integer below 2^53, exact in a double.
 */
export function addLimbs(acc: Float64Array, buf: DataView, count: number, off0: number, stride: number, c: number): void {
  for (let e = 0, o = off0, a = 0; e < count; e++, o += stride, a += 4) {
    acc[a] = acc[a]! + buf.getUint32(o) * c;
    acc[a + 1] = acc[a + 1]! + buf.getUint32(o + 4) * c;
    acc[a + 2] = acc[a + 2]! + buf.getUint32(o + 8) * c;
    acc[a + 3] = acc[a + 3]! + buf.getUint32(o + 12) * c;
  }
}

/** Largest limb scratch kept between calls (4 limbs per element): longer sums take an array of their own. */
const LIMB_SCRATCH_MAX = 4 * 1024;
let limbScratchBuf = new Float64Array(0);

/**
 * Limb sums for `count` elements (4 each), the first 4 * count zeroed, in a scratch array that the
 * next call reuses (it may be longer: addLimbs and fromLimbsMod take the count): for the per-round
 * sums (openings, PRSS masks) that addLimbs fills and fromLimbsMod reads at once, so that each
 * does not allocate (and the collector track) a zero-filled backing store of its own. The caller
 * must be done with it before the next call (no await in between).
 */
export function limbScratch(count: number): Float64Array {
  const len = 4 * count;
  if (len > LIMB_SCRATCH_MAX) return new Float64Array(len);
  if (limbScratchBuf.length < len) limbScratchBuf = new Float64Array(LIMB_SCRATCH_MAX);
  limbScratchBuf.fill(0, 0, len);
  return limbScratchBuf;
}

const TWO16 = 2 ** 16;
const TWO31 = 2 ** 31;
const TWO32 = 2 ** 32;

/** Scratch limbs of canonicalLimbs (one call at a time: no allocation per element). */
const LIMBS = new Float64Array(4);

/**
 * Makes LIMBS (l0 2^96 + l1 2^64 + l2 2^32 + l3, nonnegative integers below 2^53 - 2^22) the
 * canonical 32-bit words of that value mod p. The Mersenne fold (2^127 = 1 mod p) and the carries
 * are done on the limbs as exact doubles: two rounds with the bits >= 127 folded into limb 3 leave
 * l0 <= 2^31, l1, l2 < 2^32, l3 <= 2^32 (so the value is at most 2^127), a third carry makes every
 * limb a word, and 2^127 and p itself are the two values left to correct.
 */
function canonicalLimbs(l0: number, l1: number, l2: number, l3: number): void {
  for (let k = 0; k < 3; k++) {
    let c = Math.floor(l3 / TWO32);
    l3 -= c * TWO32;
    l2 += c;
    c = Math.floor(l2 / TWO32);
    l2 -= c * TWO32;
    l1 += c;
    c = Math.floor(l1 / TWO32);
    l1 -= c * TWO32;
    l0 += c;
    if (k < 2) {
      c = Math.floor(l0 / TWO31);
      l0 -= c * TWO31;
      l3 += c;
    }
  }
  if (l0 === TWO31) {
    // 2^127 = 1 (mod p); the lower limbs are 0 here
    l0 = 0;
    l3 = 1;
  } else if (l0 === TWO31 - 1 && l1 === TWO32 - 1 && l2 === TWO32 - 1 && l3 === TWO32 - 1) {
    l0 = l1 = l2 = l3 = 0; // p itself
  }
  LIMBS[0] = l0;
  LIMBS[1] = l1;
  LIMBS[2] = l2;
  LIMBS[3] = l3;
}

/**
 * (l0 2^96 + l1 2^64 + l2 2^32 + l3) mod p, canonical, for nonnegative integer limbs below 2^53 - 2^22
 * (see canonicalLimbs): three small BigInts, two shifts and two additions, no wide reduction.
 */
export function limbsMod(l0: number, l1: number, l2: number, l3: number): bigint {
  canonicalLimbs(l0, l1, l2, l3);
  const w1 = LIMBS[1]!;
  const w2 = LIMBS[2]!;
  // w1 2^64 + w2 2^32 + w3 as two exact pieces below 2^49
  const lo = (w2 % TWO16) * TWO32 + LIMBS[3]!;
  const mid = w1 * TWO16 + Math.floor(w2 / TWO16);
  return (BigInt(LIMBS[0]!) << 96n) + (BigInt(mid) << 48n) + BigInt(lo);
}

/**
 * (sum_k acc[4e+k] 2^(32(3-k)) + neg * p) mod p for every element, canonical (see limbsMod). Limb
 * sums must come from addLimbs within LIMB_WEIGHT_LIMIT (neg >= 0 the sum of the negative weights).
 */
export function fromLimbsMod(acc: Float64Array, count: number, neg: number): bigint[] {
  const b0 = neg * P_LIMBS[0];
  const b1 = neg * P_LIMBS[1];
  const b2 = neg * P_LIMBS[2];
  const b3 = neg * P_LIMBS[3];
  const out = new Array<bigint>(count);
  for (let e = 0, a = 0; e < count; e++, a += 4) out[e] = limbsMod(acc[a]! + b0, acc[a + 1]! + b1, acc[a + 2]! + b2, acc[a + 3]! + b3);
  return out;
}

/** As fromLimbsMod, but writes the canonical values encoded (16 bytes big-endian each) instead of making BigInts. */
export function fromLimbsEncoded(acc: Float64Array, count: number, neg: number): Uint8Array {
  const b0 = neg * P_LIMBS[0];
  const b1 = neg * P_LIMBS[1];
  const b2 = neg * P_LIMBS[2];
  const b3 = neg * P_LIMBS[3];
  const out = new Uint8Array(count * ELEMENT_BYTES);
  const view = new DataView(out.buffer);
  for (let e = 0, a = 0; e < count; e++, a += 4) {
    canonicalLimbs(acc[a]! + b0, acc[a + 1]! + b1, acc[a + 2]! + b2, acc[a + 3]! + b3);
    const o = e * ELEMENT_BYTES;
    view.setUint32(o, LIMBS[0]!);
    view.setUint32(o + 4, LIMBS[1]!);
    view.setUint32(o + 8, LIMBS[2]!);
    view.setUint32(o + 12, LIMBS[3]!);
  }
  return out;
}

/** Throws FieldError unless the 16-byte big-endian element at byte off of view is below p (as readElement). */
export function assertEncodedAt(view: DataView, off: number): void {
  const top = view.getUint32(off);
  // >= p iff the top bit is set, or all 127 low bits are ones (the value p itself)
  if (top > 0x7fffffff || (top === 0x7fffffff && view.getUint32(off + 4) === 0xffffffff && view.getUint32(off + 8) === 0xffffffff && view.getUint32(off + 12) === 0xffffffff)) {
    throw new FieldError(`decoded value at byte ${off} is not a field element`);
  }
}

/**
 * A 32-bit view of encoded elements, for copying them by words. The vector must start 4-byte
 * aligned (fresh arrays, kernel results and the reserve's chunks do); others are copied first.
 */
export function words(b: Uint8Array): Uint32Array {
  // an unaligned view is copied; Uint8Array's slice, since a Node Buffer's slice() is a view at the
  // same offset (transports hand over Buffers: the libp2p test threw RangeError here)
  const v = b.byteOffset % 4 === 0 ? b : Uint8Array.prototype.slice.call(b);
  return new Uint32Array(v.buffer, v.byteOffset, v.length >> 2);
}

/** Copies element `from` of src to element `to` of dst (32-bit views from words()). */
export function copyElement(src: Uint32Array, from: number, dst: Uint32Array, to: number): void {
  const s = from << 2;
  const d = to << 2;
  dst[d] = src[s]!;
  dst[d + 1] = src[s + 1]!;
  dst[d + 2] = src[s + 2]!;
  dst[d + 3] = src[s + 3]!;
}

/**
 * Encoded vectors one after another. A single vector is returned as it is, not copied (the hot
 * paths join one part far more often than several), which is why this is not @noble/hashes'
 * concatBytes (always a copy; seal and session use that one).
 */
export function concatEncoded(vs: readonly Uint8Array[]): Uint8Array {
  if (vs.length === 1) return vs[0]!;
  let len = 0;
  for (const v of vs) len += v.length;
  const out = new Uint8Array(len);
  let at = 0;
  for (const v of vs) {
    out.set(v, at);
    at += v.length;
  }
  return out;
}

/** Encodes field elements as 16-byte big-endian each; throws on values outside [0, p). */
export function encodeFieldVector(xs: readonly bigint[]): Uint8Array {
  assertElements(xs);
  const out = new Uint8Array(xs.length * ELEMENT_BYTES);
  const view = new DataView(out.buffer);
  for (let i = 0; i < xs.length; i++) writeElement(view, i * ELEMENT_BYTES, xs[i]!);
  return out;
}

/** Decodes a vector written by encodeFieldVector; throws on a length not divisible by 16 or a value >= p. */
export function decodeFieldVector(bytes: Uint8Array): bigint[] {
  if (bytes.length % ELEMENT_BYTES !== 0) throw new FieldError(`field vector length ${bytes.length} is not a multiple of 16`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const m = bytes.length / ELEMENT_BYTES;
  const out = new Array<bigint>(m);
  for (let i = 0; i < m; i++) out[i] = readElement(view, i * ELEMENT_BYTES);
  return out;
}

/** C(n, k). */
export function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return Math.round(r);
}

/** Comparison geometry for bound L: M bits of r' (whole 4-bit blocks), K = M + 1 (see header). */
export function comparisonBits(L: number): { M: number; K: number; blocks: number } {
  const blocks = Math.ceil((L + 1) / BLOCK_BITS);
  const M = blocks * BLOCK_BITS;
  return { M, K: M + 1, blocks };
}

/** PRSS bounded-mask growth nu = ceil(log2 C(n,t)). */
export function maskGrowthBits(n: number, t: number): number {
  return Math.ceil(Math.log2(binomial(n, t)));
}

/** The exponent K + kappa + nu + 1 that must not exceed 126 (i.e. 2^that <= p); see header. */
export function comparisonBound(L: number, kappa: number, n: number, t: number): number {
  return comparisonBits(L).K + kappa + maskGrowthBits(n, t) + 1;
}

/** Throws unless comparisons of |x| < 2^L with statistical security kappa fit in this field for (n, t). */
export function assertComparisonFits(L: number, kappa: number, n: number, t: number): void {
  if (!Number.isInteger(L) || L < 1) throw new FieldError(`L must be a positive integer, got ${L}`);
  if (!Number.isInteger(kappa) || kappa < 1) throw new FieldError(`kappa must be a positive integer, got ${kappa}`);
  const need = comparisonBound(L, kappa, n, t);
  if (need > P_BITS - 1) {
    throw new FieldError(
      `comparison does not fit: K + kappa + nu + 1 = ${need} bits > ${P_BITS - 1} (L=${L}, kappa=${kappa}, n=${n}, t=${t})`,
    );
  }
}

/**
 * Fractions nums[k] / dens[k] over their least common denominator D: integer numerators c[k] with
 * c[k] / D = nums[k] / dens[k] (dens nonzero). Lagrange weights of small parties become small integers.
 */
export function overCommonDenominator(nums: readonly bigint[], dens: readonly bigint[]): { c: bigint[]; D: bigint } {
  const gcd = (x: bigint, y: bigint): bigint => {
    while (y) [x, y] = [y, x % y];
    return x < 0n ? -x : x;
  };
  let D = 1n;
  for (const d of dens) D = (D / gcd(D, d)) * d;
  return { c: nums.map((nu, k) => nu * (D / dens[k]!)), D };
}
