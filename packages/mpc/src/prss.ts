// Pseudo-random secret sharing (PRSS): Cramer, Damgard, Ishai, "Share conversion, pseudorandom
// secret-sharing and applications to secure computation", TCC 2005. No I/O.
//
// For every set A of n-t parties there is a key k_A known exactly to the members of A (its lowest
// member makes it and sends it to the others during setup). With f_A the degree-t polynomial with
// f_A(0) = 1 and f_A(j) = 0 for j not in A, party i's share of the pseudo-random value
//   r = sum_A PRF(k_A, nonce)        is        sum_{A containing i} PRF(k_A, nonce) * f_A(i),
// a degree-t sharing made without any message. Any t parties miss the key of the set A disjoint from
// them, so r is uniform to them. Variants used here:
//  - bounded integers (as MPyC's pseudorandom shares of bounded integers): each PRF value is cut to
//    `bits` bits, so r < C(n,t) * 2^bits; used as the statistical mask r'' of comparisons.
//  - zero sharings of degree 2t (PRZS): sum_A f_A(x) * sum_{l=1..t} PRF_l(k_A, nonce) * x^l, zero at
//    0, added to a local degree-2t product before opening it so the opened shares reveal only the value.
// The PRF is AES-128 in counter mode keyed by k_A with an IV derived (SHA-256) from the nonce; every
// nonce must be used once, which callers ensure by deriving it from (job id, round, slot) or batch id.

import { createCipheriv, createHash, hash, randomBytes, type Cipher } from 'node:crypto';
import { LIMB_WEIGHT_LIMIT, P, addLimbs, overCommonDenominator, binomial, encodeFieldVector, fromLimbsEncoded, fromLimbsMod, inv, limbScratch, mod, reduce, reduceWide } from './field';
import { SMALL_WEIGHT_LIMIT, markCanonical, prssSumEncoded, scaleEncoded } from './kernel';
import { SharingError, assertParams, assertParty } from './shamir';

/** Bytes of one PRSS key (AES-128). */
export const PRSS_KEY_BYTES = 16;
/** Largest number of PRSS subsets we accept (C(n,t) keys are held and evaluated per value). */
export const MAX_PRSS_SUBSETS = 4096;

/** All subsets of {1..n} of the given size, each sorted ascending, in lexicographic order. */
export function subsets(n: number, size: number): number[][] {
  const out: number[][] = [];
  const cur: number[] = [];
  const rec = (start: number): void => {
    if (cur.length === size) {
      out.push(cur.slice());
      return;
    }
    for (let i = start; i <= n; i++) {
      cur.push(i);
      rec(i + 1);
      cur.pop();
    }
  };
  rec(1);
  return out;
}

/** Canonical name of a subset, e.g. "1,3,4". */
export function subsetKey(a: readonly number[]): string {
  return a.join(',');
}

/** The PRSS subsets (size n-t) that contain party i. */
export function prssSubsetsOf(n: number, t: number, i: number): number[][] {
  assertParams(n, t);
  assertParty(i, n);
  if (binomial(n, t) > MAX_PRSS_SUBSETS) throw new SharingError(`PRSS with n=${n}, t=${t} needs ${binomial(n, t)} keys: too many`);
  return subsets(n, n - t).filter((a) => a.includes(i));
}

/** f_A(x) = prod_{j not in A} (j - x) / j: degree t, 1 at 0, 0 outside A. */
export function subsetPoly(n: number, a: readonly number[], x: number): bigint {
  let num = 1n;
  let den = 1n;
  for (let j = 1; j <= n; j++) {
    if (a.includes(j)) continue;
    num = reduce(num * mod(BigInt(j - x)));
    den = reduce(den * BigInt(j));
  }
  return reduce(num * inv(den));
}

/** One party's PRSS keys: subset name -> 16-byte key (only subsets containing the party). */
export type PrssKeys = Map<string, Uint8Array>;

/** Makes fresh random keys for the subsets whose lowest member is `self` (to be sent to the other members). */
export function makeOwnKeys(n: number, t: number, self: number): PrssKeys {
  const keys: PrssKeys = new Map();
  for (const a of prssSubsetsOf(n, t, self)) if (a[0] === self) keys.set(subsetKey(a), randomBytes(PRSS_KEY_BYTES));
  return keys;
}

/** Deterministic keys for all parties from a seed (tests and dealer experiments only). */
export function dealPrssKeys(n: number, t: number, seed: string): PrssKeys[] {
  const all = subsets(n, n - t);
  const out: PrssKeys[] = [];
  for (let i = 1; i <= n; i++) out.push(new Map());
  for (const a of all) {
    const key = createHash('sha256').update(`prss-key:${seed}:${subsetKey(a)}`).digest().subarray(0, PRSS_KEY_BYTES);
    for (const i of a) out[i - 1]!.set(subsetKey(a), new Uint8Array(key));
  }
  return out;
}

/** Makes 16-byte strings canonical field elements in place: top bit cleared, p itself (probability 2^-127) read as 0. */
export function canonicalize(bytes: Uint8Array): Uint8Array {
  return LITTLE_ENDIAN && bytes.byteOffset % 4 === 0 && bytes.length % 16 === 0 ? canonicalizeWords(bytes) : canonicalizeBytes(bytes);
}

function canonicalizeBytes(bytes: Uint8Array): Uint8Array {
  for (let o = 0; o < bytes.length; o += 16) {
    bytes[o]! &= 0x7f;
    if (bytes[o] !== 0x7f) continue;
    let isP = true;
    for (let i = 1; isP && i < 16; i++) isP = bytes[o + i] === 0xff;
    if (isP) bytes.fill(0, o, o + 16);
  }
  return bytes;
}

/** Little-endian platform (every one Node runs on in practice): canonicalizeWords' masks assume it. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * canonicalize on 32-bit words (a 4-byte aligned view): the element's first byte is the low byte of
 * its first word on a little-endian machine, so clearing the top bit is one AND per element and p
 * (0x7f then fifteen 0xff) is the first word 0xffffff7f with three all-ones words after it. The same
 * bytes as the byte loop, with a quarter of the loads and stores (the pair streams of GRR and of the
 * squares go through here: about a tenth of a party's JavaScript in production).
 */
function canonicalizeWords(bytes: Uint8Array): Uint8Array {
  const w = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
  for (let i = 0; i < w.length; i += 4) {
    const x = (w[i]! & 0xffffff7f) >>> 0;
    w[i] = x;
    if (x === 0xffffff7f && w[i + 1] === 0xffffffff && w[i + 2] === 0xffffffff && w[i + 3] === 0xffffffff) w[i] = w[i + 1] = w[i + 2] = w[i + 3] = 0;
  }
  return bytes;
}

/** One AES-128-ECB cipher per key, kept (ECB has no state between blocks: update() maps blocks). */
const ecbOf = new WeakMap<Uint8Array, Cipher>();

let counters = Buffer.alloc(0);

/**
 * The counter blocks iv, iv+1, ... (`bytes` of them, 16 each; OpenSSL's CTR adds 1 to the whole
 * 128-bit big-endian counter per block) in a scratch buffer that the next call overwrites. The IV is
 * copied to every block natively and, unless the low 32-bit word wraps within the stream, only that
 * word is rewritten per block.
 */
function counterBlocks(iv: Uint8Array, bytes: number): Buffer {
  if (counters.length < bytes) counters = Buffer.alloc(Math.max(bytes, 2 * counters.length));
  const blocks = counters.subarray(0, bytes);
  const v = new DataView(iv.buffer, iv.byteOffset, 16);
  let w3 = v.getUint32(12);
  const n = bytes / 16;
  if (w3 + n - 1 <= 0xffffffff) {
    blocks.fill(iv);
    const out = new DataView(blocks.buffer, blocks.byteOffset, bytes);
    for (let o = 28, x = w3 + 1; o < bytes; o += 16, x++) out.setUint32(o, x);
    return blocks;
  }
  let w0 = v.getUint32(0);
  let w1 = v.getUint32(4);
  let w2 = v.getUint32(8);
  for (let o = 0; o < bytes; o += 16) {
    blocks.writeUInt32BE(w0, o);
    blocks.writeUInt32BE(w1, o + 4);
    blocks.writeUInt32BE(w2, o + 8);
    blocks.writeUInt32BE(w3, o + 12);
    w3 = (w3 + 1) >>> 0;
    if (w3 === 0) {
      w2 = (w2 + 1) >>> 0;
      if (w2 === 0) {
        w1 = (w1 + 1) >>> 0;
        if (w1 === 0) w0 = (w0 + 1) >>> 0;
      }
    }
  }
  return blocks;
}

/**
 * AES-128-CTR key stream of `bytes` (a multiple of 16) bytes from counter block `iv`: the same bytes
 * as createCipheriv('aes-128-ctr', key, iv) on zeros, computed as ECB of the counter blocks under a
 * cipher kept per key. Node cannot re-seed a CTR cipher's counter, and every stream starts at a
 * hashed IV, so a CTR cipher would be made (key schedule, OpenSSL context) per stream: 26 per party
 * per batch in preprocessing, about 1% of a node there (profile, docs/benchmarks.md "hprss"). ECB
 * of the blocks costs about what CTR does per byte at preprocessing's 1.6-20 KB streams and
 * avoids the setup, which at the online rounds' few blocks was more than twice the encryption.
 */
export function ctrStream(key: Uint8Array, iv: Uint8Array, bytes: number): Buffer {
  if (bytes % 16 !== 0 || iv.length !== 16) throw new SharingError(`CTR stream of ${bytes} bytes from a ${iv.length}-byte counter`);
  const ecb = ecbFor(key);
  if (bytes === 0) return Buffer.alloc(0);
  return ecb.update(counterBlocks(iv, bytes));
}

/** The kept AES-128-ECB cipher of a key (made at its first use). */
function ecbFor(key: Uint8Array): Cipher {
  let ecb = ecbOf.get(key);
  if (ecb === undefined) {
    ecb = createCipheriv('aes-128-ecb', key, null);
    ecb.setAutoPadding(false);
    ecbOf.set(key, ecb);
  }
  return ecb;
}

/** The former name of ctrStream (it served streams up to 4 KB only). */
export const smallCtrStream = ctrStream;

let lastIv: { nonce: string; sub: number; iv: Buffer } | undefined;

/** The CTR IV of (nonce, sub); the same for every subset, so the last one is kept (one SHA-256 per call, not per key). */
function ivOf(nonce: string, sub: number): Buffer {
  if (lastIv && lastIv.nonce === nonce && lastIv.sub === sub) return lastIv.iv;
  // one-shot hash of the same bytes as update(nonce).update(`#${sub}`): no Hash object per round
  const iv = hash('sha256', `${nonce}#${sub}`, 'buffer').subarray(0, 16);
  lastIv = { nonce, sub, iv };
  return iv;
}

/**
 * f_A(self) of every subset A as small integers over one denominator: f_A(self) = c_A / D with
 * c_A = prod_{j not in A} (j - self) * (D / prod_{j not in A} j) and D the lcm of those products.
 * A share sum_A v_A f_A(self) is then sum_A c_A v_A (products by integers of a few bits, where a
 * product by a full field element costs several times more) times D^-1 once: the same field element.
 */
function smallSubsetCoefficients(n: number, subsets: readonly (readonly number[])[], self: number): { c: bigint[]; dInv: bigint } {
  const nums: bigint[] = [];
  const dens: bigint[] = [];
  for (const a of subsets) {
    let num = 1n;
    let den = 1n;
    for (let j = 1; j <= n; j++) {
      if (a.includes(j)) continue;
      num *= BigInt(j - self);
      den *= BigInt(j);
    }
    nums.push(num);
    dens.push(den);
  }
  const { c, D } = overCommonDenominator(nums, dens);
  return { c, dInv: D === 1n ? 1n : inv(D) };
}

/** Bits kept of each 32-bit limb (most significant first) for the low `bits` bits of a 128-bit block, per bits (made once each). */
const KEEP: (readonly number[])[] = [];
function keepOf(bits: number): readonly number[] {
  return (KEEP[bits] ??= [0, 1, 2, 3].map((k) => Math.max(0, Math.min(32, bits - 32 * (3 - k)))));
}

/** Pseudo-random share generation for one party. Stateless: every call is determined by its nonce. */
export class Prss {
  /** Key of ownStream(). */
  private readonly ownKey: Buffer;
  /** Key of pairStream() per peer. */
  private readonly pairKeys = new Map<number, Buffer>();
  /** Per subset: its key and that key's kept ECB cipher (ecbOf; the online masks read it without a map lookup per key), its weights. */
  private readonly entries: { subset: number[]; key: Uint8Array; ecb: Cipher; c: bigint; cPow: bigint[]; cNum: number; cPowNum: number[] }[] = [];
  /** True when the small coefficients are small enough for the limb accumulation (see addLimbs). */
  private readonly limbs: boolean;
  /** True when the encoded sums can run in the field kernel (prssSumEncoded's row and weight limits). */
  private readonly smallWeights: boolean;
  /** The kernel's weights: c_A per subset (randomShares), c_A self^l per subset and l (zeroShares2t). */
  private readonly weights1: number[];
  private readonly weightsT: number[];
  /** D^-1 for the small coefficients c (f_A(self) = c * D^-1; see smallSubsetCoefficients). */
  private readonly dInv: bigint;

  constructor(readonly n: number, readonly t: number, readonly self: number, keys: PrssKeys) {
    const mine = prssSubsetsOf(n, t, self);
    const small = smallSubsetCoefficients(n, mine, self);
    this.dInv = small.dInv;
    mine.forEach((a, k) => {
      const key = keys.get(subsetKey(a));
      if (!key || key.length !== PRSS_KEY_BYTES) throw new SharingError(`party ${self} lacks the PRSS key of subset {${subsetKey(a)}}`);
      const c = small.c[k]!;
      // c * self^l for l = 1..t (small integers): the PRZS weights f_A(self) self^l over D
      const cPow: bigint[] = [];
      let x = 1n;
      for (let l = 1; l <= t; l++) {
        x *= BigInt(self);
        cPow.push(c * x);
      }
      // invariant: c / D is f_A(self) (cheap, once per party)
      if (reduce(mod(c) * this.dInv) !== subsetPoly(n, a, self)) throw new Error('internal: PRSS small coefficient mismatch');
      this.entries.push({ subset: a, key, ecb: ecbFor(key), c, cPow, cNum: Number(c), cPowNum: cPow.map(Number) });
    });
    // pair keys (pairStream): a hash of the keys of every subset holding both parties, in subset order
    for (let j = 1; j <= n; j++) {
      if (j === self) continue;
      const h = createHash('sha256').update(`prss-pair:${Math.min(self, j)},${Math.max(self, j)}`);
      for (const { subset, key } of this.entries) if (subset.includes(j)) h.update(key);
      this.pairKeys.set(j, h.digest().subarray(0, PRSS_KEY_BYTES));
    }
    const own = createHash('sha256').update(`prss-own:${self}`);
    for (const { key } of this.entries) own.update(key);
    this.ownKey = own.digest().subarray(0, PRSS_KEY_BYTES);
    let weight = 0;
    for (const { c, cPow } of this.entries) {
      weight += Math.abs(Number(c));
      for (const w of cPow) weight += Math.abs(Number(w));
    }
    this.limbs = weight <= LIMB_WEIGHT_LIMIT;
    // the kernel's sums take at most 64 rows of weights below its small-weight limit
    this.weights1 = this.entries.map(({ cNum }) => cNum);
    this.weightsT = this.entries.flatMap(({ cPowNum }) => cPowNum);
    this.smallWeights = this.weightsT.length <= 64 && [...this.weights1, ...this.weightsT].every((x) => Number.isSafeInteger(x) && Math.abs(x) < SMALL_WEIGHT_LIMIT);
  }

  /**
   * A key stream only this party can compute: AES-CTR under a hash of every subset key it holds. Any
   * t other parties lack the key of the one subset that contains this party and none of them, so to
   * them the stream is uniform, as fresh randomness would be; unlike fresh randomness it comes out
   * the same after a restart or a memory loss (the keys survive both). Each nonce must be used for
   * one purpose only.
   */
  ownStream(nonce: string, bytes: number): Uint8Array {
    const buf = ctrStream(this.ownKey, ivOf(`own:${nonce}`, 0), bytes);
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /**
   * `count` pseudo-random field elements (encoded, canonical) that this party and `peer` both
   * compute and nobody else can: AES-CTR under a hash of the keys of every PRSS subset holding both.
   * Any t parties without the two miss the key of the subset of everyone but them (n - t parties,
   * the two among them), so to them the stream is uniform. The key is the same at both ends, so a
   * nonce used in both directions must name the direction. Seeds GRR dealings (grr.ts).
   */
  pairStream(peer: number, nonce: string, count: number): Uint8Array {
    const key = this.pairKeys.get(peer);
    if (key === undefined) throw new SharingError(`no pair key with party ${peer}`);
    const buf = ctrStream(key, ivOf(`pair:${nonce}`, 0), count * 16);
    return markCanonical(canonicalize(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength)));
  }

  /** Number of subsets this party belongs to (keys it evaluates per value). */
  get subsetCount(): number {
    return this.entries.length;
  }

  /**
   * AES-CTR key stream as a DataView (its native 64-bit reads are about twice Buffer's). With
   * `clearTop`, the top bit of every 16-byte element is cleared in the bytes: the same value as
   * `& P` on the decoded 128 bits, without one BigInt operation per element.
   */
  private stream(key: Uint8Array, nonce: string, sub: number, bytes: number, clearTop = false): DataView {
    const buf = ctrStream(key, ivOf(nonce, sub), bytes);
    if (clearTop) for (let o = 0; o < bytes; o += 16) buf[o]! &= 0x7f;
    return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /**
   * Finishes sums of small-coefficient terms: acc holds sum c v with sum |c| v over negative c at
   * most neg * p, so acc + neg * p >= 0; reduced, then times D^-1.
   */
  private finish(acc: bigint[], neg: bigint): bigint[] {
    const bias = neg * P;
    const dInv = this.dInv;
    for (let e = 0; e < acc.length; e++) {
      const x = reduceWide(neg === 0n ? acc[e]! : acc[e]! + bias);
      acc[e] = dInv === 1n ? x : reduce(x * dInv);
    }
    return acc;
  }

  /** Canonical sums of small-coefficient terms times D^-1 (in place). */
  private scale(xs: bigint[]): bigint[] {
    const dInv = this.dInv;
    if (dInv !== 1n) for (let e = 0; e < xs.length; e++) xs[e] = reduce(xs[e]! * dInv);
    return xs;
  }

  /** Limb sums of randomShares (when the weights allow them). */
  private randomLimbs(nonce: string, count: number): { acc: Float64Array; neg: number } {
    // v = p (probability 2^-127) is left as p rather than 0: the same residue in the sum
    const acc = new Float64Array(4 * count);
    let neg = 0;
    for (const { key, cNum } of this.entries) {
      if (cNum < 0) neg -= cNum;
      addLimbs(acc, this.stream(key, nonce, 0, count * 16, true), count, 0, 16, cNum);
    }
    return { acc, neg };
  }

  /** Limb sums of zeroShares2t (when the weights allow them). */
  private zero2tLimbs(nonce: string, count: number): { acc: Float64Array; neg: number } {
    const t = this.t;
    const acc = new Float64Array(4 * count);
    let neg = 0;
    for (const { key, cPowNum } of this.entries) {
      const buf = this.stream(key, nonce, 2, count * t * 16, true);
      for (let l = 0; l < t; l++) {
        const w = cPowNum[l]!;
        if (w < 0) neg -= w;
        addLimbs(acc, buf, count, l * 16, t * 16, w);
      }
    }
    return { acc, neg };
  }

  /** Limb sums finished as encoded canonical values times D^-1 (the field kernel scales). */
  private encodedFrom({ acc, neg }: { acc: Float64Array; neg: number }, count: number): Uint8Array {
    const v = fromLimbsEncoded(acc, count, neg);
    return this.dInv === 1n ? v : scaleEncoded(v, this.dInv);
  }

  /**
   * randomShares, encoded (16 bytes big-endian each): the same values without a BigInt per element.
   * With small weights the sum over subsets runs in the field kernel straight from the key streams
   * (prssSumEncoded: the top bit cleared there, as in randomShares), one call for D^-1 sum_A c_A v_A,
   * instead of limb sums in JavaScript, a conversion and a scaling pass.
   */
  randomSharesEncoded(nonce: string, count: number): Uint8Array {
    if (this.smallWeights) return prssSumEncoded(this.entries.map(({ key }) => this.rawStream(key, nonce, 0, count * 16)), 1, count, this.weights1, this.dInv);
    return this.limbs ? this.encodedFrom(this.randomLimbs(nonce, count), count) : encodeFieldVector(this.randomShares(nonce, count));
  }

  /**
   * randomSharesEncoded(nonce, sum of counts) cut into vectors of the given counts: one key stream
   * per subset for all of them (one AES-CTR setup per subset rather than per vector; the values are
   * those of a single call, so distinct slices of one stream, independent as any PRF outputs).
   */
  randomSharesManyEncoded(nonce: string, counts: readonly number[]): Uint8Array[] {
    let total = 0;
    for (const c of counts) total += c;
    const all = this.randomSharesEncoded(nonce, total);
    const out: Uint8Array[] = [];
    let at = 0;
    for (const c of counts) {
      out.push(all.subarray(at * 16, (at + c) * 16));
      at += c;
    }
    return out;
  }

  /** zeroShares2t, encoded (the kernel's sum as in randomSharesEncoded, over t rows per subset stream). */
  zeroShares2tEncoded(nonce: string, count: number): Uint8Array {
    const t = this.t;
    if (this.smallWeights) return prssSumEncoded(this.entries.map(({ key }) => this.rawStream(key, nonce, 2, count * t * 16)), t, count, this.weightsT, this.dInv);
    return this.limbs ? this.encodedFrom(this.zero2tLimbs(nonce, count), count) : encodeFieldVector(this.zeroShares2t(nonce, count));
  }

  /** stream()'s key stream as raw bytes (the kernel clears the top bits: prssSumEncoded). */
  private rawStream(key: Uint8Array, nonce: string, sub: number, bytes: number): Uint8Array {
    const buf = ctrStream(key, ivOf(nonce, sub), bytes);
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /** This party's shares of `count` pseudo-random degree-t sharings of uniform field elements. */
  randomShares(nonce: string, count: number): bigint[] {
    if (this.limbs) {
      const { acc, neg } = this.randomLimbs(nonce, count);
      return this.scale(fromLimbsMod(acc, count, neg));
    }
    const acc = new Array<bigint>(count).fill(0n);
    let neg = 0n;
    for (const { key, c } of this.entries) {
      if (c < 0n) neg -= c;
      const buf = this.stream(key, nonce, 0, count * 16, true);
      for (let e = 0; e < count; e++) {
        let v = (buf.getBigUint64(e * 16) << 64n) | buf.getBigUint64(e * 16 + 8);
        if (v === P) v = 0n;
        acc[e] = acc[e]! + v * c;
      }
    }
    return this.finish(acc, neg);
  }

  /** Shares of `count` pseudo-random integers, each the sum over the C(n,t) subsets of a value < 2^bits. */
  boundedShares(nonce: string, count: number, bits: number): bigint[] {
    if (!Number.isInteger(bits) || bits < 1 || bits > 120) throw new SharingError(`bounded PRSS bits must be in 1..120, got ${bits}`);
    if (this.limbs) {
      // The masks of every online round that compares (runtime.ts flush): per subset the same bytes
      // as stream(key, nonce, 1, count * 16), but the counter blocks are built once for all subsets
      // (the IV depends on the nonce only) and each subset's kept cipher encrypts them, read by bytes
      // (no DataView per subset). Only the limbs holding the low `bits` bits are read: limb k holds
      // bits 32(3-k) .. +31, of which keepOf(bits)[k] are kept.
      if (count === 0) return [];
      const keep = keepOf(bits);
      const blocks = counterBlocks(ivOf(nonce, 1), count * 16);
      const acc = limbScratch(count); // read by fromLimbsMod below, before any other call can reuse it
      let neg = 0;
      for (const { ecb, cNum } of this.entries) {
        if (cNum < 0) neg -= cNum;
        const out = ecb.update(blocks);
        const buf = new DataView(out.buffer, out.byteOffset, out.byteLength);
        for (let k = 0; k < 4; k++) {
          const nb = keep[k]!;
          if (nb === 0) continue;
          const div = 2 ** nb;
          for (let e = 0, o = 4 * k, a = k; e < count; e++, o += 16, a += 4) {
            const w = buf.getUint32(o);
            acc[a] = acc[a]! + (nb === 32 ? w : w % div) * cNum;
          }
        }
      }
      return this.scale(fromLimbsMod(acc, count, neg));
    }
    const acc = new Array<bigint>(count).fill(0n);
    let neg = 0n;
    for (const { key, c } of this.entries) {
      if (c < 0n) neg -= c;
      const buf = this.stream(key, nonce, 1, count * 16);
      for (let e = 0; e < count; e++) {
        // the low `bits` bits of the 128-bit block; bits <= 120 so they lie in the low 64 bits or span both halves
        const v = bits <= 64
          ? BigInt.asUintN(bits, buf.getBigUint64(e * 16 + 8))
          : BigInt.asUintN(bits, (buf.getBigUint64(e * 16) << 64n) | buf.getBigUint64(e * 16 + 8));
        acc[e] = acc[e]! + v * c;
      }
    }
    return this.finish(acc, neg);
  }

  /** Shares of `count` pseudo-random sharings of zero of degree 2t (PRZS). */
  zeroShares2t(nonce: string, count: number): bigint[] {
    const t = this.t;
    if (this.limbs) {
      const { acc, neg } = this.zero2tLimbs(nonce, count);
      return this.scale(fromLimbsMod(acc, count, neg));
    }
    const acc = new Array<bigint>(count).fill(0n);
    let neg = 0n;
    for (const { key, cPow } of this.entries) {
      // f_A(i) * i^l over D, precomputed per l
      for (const w of cPow) if (w < 0n) neg -= w;
      const buf = this.stream(key, nonce, 2, count * t * 16, true);
      if (t === 2) {
        const [w0, w1] = cPow as [bigint, bigint];
        for (let e = 0, off = 0; e < count; e++, off += 32) {
          const v0 = (buf.getBigUint64(off) << 64n) | buf.getBigUint64(off + 8);
          const v1 = (buf.getBigUint64(off + 16) << 64n) | buf.getBigUint64(off + 24);
          acc[e] = acc[e]! + v0 * w0 + v1 * w1;
        }
        continue;
      }
      for (let e = 0; e < count; e++) {
        let s = 0n;
        for (let l = 0; l < t; l++) {
          const off = (e * t + l) * 16;
          const v = (buf.getBigUint64(off) << 64n) | buf.getBigUint64(off + 8);
          s += v * cPow[l]!;
        }
        acc[e] = acc[e]! + s;
      }
    }
    return this.finish(acc, neg);
  }

  /**
   * Shares of `count` pseudo-random degree-t sharings that vanish at party `point` (for share
   * recovery): only subsets A without `point` contribute, and each f_A is 0 there. `point` never
   * holds those keys, and the subset disjoint from `point` and any t-1 helpers it colludes with
   * randomises the one direction (x - point) * prod(x - c) still free, so the masked shares of a
   * degree-t value reveal only its value at `point`. Herzberg, Jarecki, Krawczyk, Yung (CRYPTO 1995).
   * The randomising direction is the same for every answer under one `nonce`, so the nonce must name
   * everything the masked values depend on: recovery passes recoveryMaskNonce(request, state id)
   * (recovery.ts), else answers at two states give away s1 - s2 (issue 22).
   */
  zeroAtShares(nonce: string, count: number, point: number): bigint[] {
    assertParty(point, this.n, 'recovering party');
    if (point === this.self) throw new SharingError('a party cannot make recovery masks for itself');
    if (this.limbs) {
      const accL = new Float64Array(4 * count);
      let negL = 0;
      for (const { key, cNum, subset } of this.entries) {
        if (subset.includes(point)) continue;
        if (cNum < 0) negL -= cNum;
        addLimbs(accL, this.stream(key, `${nonce}@${point}`, 3, count * 16, true), count, 0, 16, cNum);
      }
      return this.scale(fromLimbsMod(accL, count, negL));
    }
    const acc = new Array<bigint>(count).fill(0n);
    let neg = 0n;
    for (const { key, c, subset } of this.entries) {
      if (subset.includes(point)) continue;
      if (c < 0n) neg -= c;
      const buf = this.stream(key, `${nonce}@${point}`, 3, count * 16, true);
      for (let e = 0; e < count; e++) {
        const v = (buf.getBigUint64(e * 16) << 64n) | buf.getBigUint64(e * 16 + 8);
        acc[e] = acc[e]! + v * c;
      }
    }
    return this.finish(acc, neg);
  }
}
