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

import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { P, binomial, inv, mod, reduce, reduceWide } from './field';
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

function ivOf(nonce: string, sub: number): Buffer {
  return createHash('sha256').update(nonce).update(`#${sub}`).digest().subarray(0, 16);
}

/** Pseudo-random share generation for one party. Stateless: every call is determined by its nonce. */
export class Prss {
  private readonly entries: { subset: number[]; key: Uint8Array; fi: bigint; xPow: bigint[] }[] = [];

  constructor(readonly n: number, readonly t: number, readonly self: number, keys: PrssKeys) {
    const mine = prssSubsetsOf(n, t, self);
    for (const a of mine) {
      const key = keys.get(subsetKey(a));
      if (!key || key.length !== PRSS_KEY_BYTES) throw new SharingError(`party ${self} lacks the PRSS key of subset {${subsetKey(a)}}`);
      const xPow: bigint[] = [];
      let x = 1n;
      for (let l = 1; l <= t; l++) {
        x = reduce(x * BigInt(self));
        xPow.push(x);
      }
      this.entries.push({ subset: a, key, fi: subsetPoly(n, a, self), xPow });
    }
  }

  /** Number of subsets this party belongs to (keys it evaluates per value). */
  get subsetCount(): number {
    return this.entries.length;
  }

  /** AES-CTR key stream as a DataView (its native 64-bit reads are about twice Buffer's). */
  private stream(key: Uint8Array, nonce: string, sub: number, bytes: number): DataView {
    const c = createCipheriv('aes-128-ctr', key, ivOf(nonce, sub));
    const buf = c.update(Buffer.alloc(bytes));
    return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /** This party's shares of `count` pseudo-random degree-t sharings of uniform field elements. */
  randomShares(nonce: string, count: number): bigint[] {
    const acc = new Array<bigint>(count).fill(0n);
    for (const { key, fi } of this.entries) {
      const buf = this.stream(key, nonce, 0, count * 16);
      for (let e = 0; e < count; e++) {
        let v = (buf.getBigUint64(e * 16) << 64n) | buf.getBigUint64(e * 16 + 8);
        v &= P;
        if (v === P) v = 0n;
        acc[e] = acc[e]! + v * fi;
      }
    }
    for (let e = 0; e < count; e++) acc[e] = reduceWide(acc[e]!);
    return acc;
  }

  /** Shares of `count` pseudo-random integers, each the sum over the C(n,t) subsets of a value < 2^bits. */
  boundedShares(nonce: string, count: number, bits: number): bigint[] {
    if (!Number.isInteger(bits) || bits < 1 || bits > 120) throw new SharingError(`bounded PRSS bits must be in 1..120, got ${bits}`);
    const mask = (1n << BigInt(bits)) - 1n;
    const acc = new Array<bigint>(count).fill(0n);
    for (const { key, fi } of this.entries) {
      const buf = this.stream(key, nonce, 1, count * 16);
      for (let e = 0; e < count; e++) {
        const v = ((buf.getBigUint64(e * 16) << 64n) | buf.getBigUint64(e * 16 + 8)) & mask;
        acc[e] = acc[e]! + v * fi;
      }
    }
    for (let e = 0; e < count; e++) acc[e] = reduceWide(acc[e]!);
    return acc;
  }

  /** Shares of `count` pseudo-random sharings of zero of degree 2t (PRZS). */
  zeroShares2t(nonce: string, count: number): bigint[] {
    const t = this.t;
    const acc = new Array<bigint>(count).fill(0n);
    for (const { key, fi, xPow } of this.entries) {
      const buf = this.stream(key, nonce, 2, count * t * 16);
      // f_A(i) * i^l, precomputed per l
      const w = xPow.map((xp) => reduce(xp * fi));
      for (let e = 0; e < count; e++) {
        let s = 0n;
        for (let l = 0; l < t; l++) {
          const off = (e * t + l) * 16;
          const v = ((buf.getBigUint64(off) << 64n) | buf.getBigUint64(off + 8)) & P;
          s += v * w[l]!;
        }
        acc[e] = acc[e]! + s;
      }
    }
    for (let e = 0; e < count; e++) acc[e] = reduceWide(acc[e]!);
    return acc;
  }

  /**
   * Shares of `count` pseudo-random degree-t sharings that vanish at party `point` (for share
   * recovery): only subsets A without `point` contribute, and each f_A is 0 there. `point` never
   * holds those keys, and the subset disjoint from `point` and any t-1 helpers it colludes with
   * randomises the one direction (x - point) * prod(x - c) still free, so the masked shares of a
   * degree-t value reveal only its value at `point`. Herzberg, Jarecki, Krawczyk, Yung (CRYPTO 1995).
   */
  zeroAtShares(nonce: string, count: number, point: number): bigint[] {
    assertParty(point, this.n, 'recovering party');
    if (point === this.self) throw new SharingError('a party cannot make recovery masks for itself');
    const acc = new Array<bigint>(count).fill(0n);
    for (const { key, fi, subset } of this.entries) {
      if (subset.includes(point)) continue;
      const buf = this.stream(key, `${nonce}@${point}`, 3, count * 16);
      for (let e = 0; e < count; e++) {
        const v = ((buf.getBigUint64(e * 16) << 64n) | buf.getBigUint64(e * 16 + 8)) & P;
        acc[e] = acc[e]! + v * fi;
      }
    }
    for (let e = 0; e < count; e++) acc[e] = reduceWide(acc[e]!);
    return acc;
  }
}
