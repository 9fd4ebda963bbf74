// Shamir secret sharing (Shamir 1979) over GF(2^127 - 1): split, Lagrange interpolation, and
// reconstruction that checks consistency and names a bad share. No I/O.
//
// Party i (1..n) holds f(i) for a random polynomial f of degree t with f(0) = the secret. Any t+1
// shares determine f; t reveal nothing. With more than t+1 shares we can check that they lie on one
// polynomial; with at least t+3 a single bad share is the unique one whose removal leaves the rest
// consistent (two consistent degree-t subsets of size t+2 would share t+1 points, hence be equal).

import { randomBytes, randomFillSync } from 'node:crypto';
import { InconsistentSharesError } from './api';
import { lincombEncoded } from './kernel';
import { LIMB_WEIGHT_LIMIT, P, FieldError, addLimbs, assertElements, assertEncodedAt, decodeFieldVector, encodeFieldVector, fromLimbsMod, inv, limbScratch, mod, reduce, reduceWide } from './field';

/** Errors for bad sharing parameters or inputs (wrong counts, bad party ids, t >= n/2). */
export class SharingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SharingError';
  }
}

/** A source of uniformly random field elements. */
export type FieldRng = (count: number) => bigint[];

/** Cryptographically random field elements from node:crypto. */
/**
 * A FieldRng over a source of CSPRNG bytes: 16 bytes per element, masked to 127 bits, P itself
 * taken as 0 (a bias of 2^-127). The bytes are zeroed once converted, so they do not outlive the call.
 */
export function fieldRngFrom(fill: (out: Uint8Array) => void): FieldRng {
  return (count) => {
    const bytes = new Uint8Array(count * 16);
    fill(bytes);
    const view = new DataView(bytes.buffer);
    const out = new Array<bigint>(count);
    for (let i = 0; i < count; i++) {
      const x = ((view.getBigUint64(i * 16) << 64n) | view.getBigUint64(i * 16 + 8)) & P;
      out[i] = x === P ? 0n : x;
    }
    bytes.fill(0);
    return out;
  };
}

export const cryptoRng: FieldRng = fieldRngFrom((bytes) => randomFillSync(bytes));

/** Throws unless 1 <= t, 2t < n (honest majority; needed for degree-2t products) and n is small. */
export function assertParams(n: number, t: number): void {
  if (!Number.isInteger(n) || n < 3 || n > 64) throw new SharingError(`n must be an integer in 3..64, got ${n}`);
  if (!Number.isInteger(t) || t < 1) throw new SharingError(`t must be a positive integer, got ${t}`);
  if (2 * t >= n) throw new SharingError(`t must be < n/2 (t=${t}, n=${n}): products of two sharings have degree 2t and need 2t+1 <= n parties`);
}

/** Throws unless id is a party id in 1..n. */
export function assertParty(id: number, n: number, what = 'party'): void {
  if (!Number.isInteger(id) || id < 1 || id > n) throw new SharingError(`${what} id must be an integer in 1..${n}, got ${id}`);
}

/** Splits each value into n shares of degree t; result[i-1] is party i's share vector. */
export function shareSecret(values: readonly bigint[], n: number, t: number, rng: FieldRng = cryptoRng): bigint[][] {
  assertParams(n, t);
  assertElements(values, 'secret');
  const m = values.length;
  const coeffs = rng(m * t);
  const out: bigint[][] = [];
  for (let i = 0; i < n; i++) out.push(new Array<bigint>(m));
  if (t === 2) {
    // f(x) = s + c1 x + c2 x^2 at x = 1..n by forward differences: f(i+1) = f(i) + d_i with
    // d_0 = c1 + c2 and d_{i+1} = d_i + 2 c2, so each share costs two field additions (no products,
    // no wide reduction); the values are those of the polynomial, exactly as by evaluation.
    for (let e = 0; e < m; e++) {
      const c1 = coeffs[2 * e]!;
      const c2 = coeffs[2 * e + 1]!;
      let d = c1 + c2;
      if (d >= P) d -= P;
      let dd = c2 + c2;
      if (dd >= P) dd -= P;
      let f = values[e]!;
      for (let i = 0; i < n; i++) {
        f += d;
        if (f >= P) f -= P;
        out[i]![e] = f;
        d += dd;
        if (d >= P) d -= P;
      }
    }
    return out;
  }
  for (let i = 1; i <= n; i++) {
    // f(i) = s + c1 i + ... + ct i^t: the powers of a small party id are small integers, so one
    // wide sum and a single reduction beat a Horner step per coefficient.
    const pw: bigint[] = [];
    let x = 1n;
    for (let d = 0; d < t; d++) pw.push((x *= BigInt(i)));
    const row = out[i - 1]!;
    for (let e = 0; e < m; e++) {
      let acc = values[e]!;
      for (let d = 0; d < t; d++) acc += coeffs[e * t + d]! * pw[d]!;
      row[e] = reduceWide(acc);
    }
  }
  return out;
}

const lagrangeCache = new Map<string | number, bigint[]>();
const LAGRANGE_CACHE_LIMIT = 4096;

/**
 * The cache key of (x, parties): one safe integer when x and the ids are small integers and there
 * are at most five ids (every opening and late-share check of a committee with t <= 4), else a
 * string. The openings ask for weights several times per round; a string built per call (a join
 * and a template) was most of a cache hit's cost. The integer is base 256 with the number of ids
 * first, then x, then the ids in order (the weights follow the order): at most 3 + 8 + 40 bits, and
 * distinct tuples give distinct integers. Ids outside [1, 256) take the string key, whose miss
 * validates them as before.
 */
function cacheKey(parties: readonly number[], x: number): string | number {
  const len = parties.length;
  if (len > 5 || !Number.isInteger(x) || x < 0 || x > 255) return `${x}:${parties.join(',')}`;
  let k = len * 256 + x;
  for (let j = 0; j < len; j++) {
    const p = parties[j]!;
    if (!Number.isInteger(p) || p < 1 || p > 255) return `${x}:${parties.join(',')}`;
    k = k * 256 + p;
  }
  return k;
}

/**
 * Lagrange coefficients lambda_j for interpolating at point x from the given distinct party points:
 * f(x) = sum_j lambda_j f(parties[j]). Cached per (x, parties).
 */
export function lagrange(parties: readonly number[], x = 0): bigint[] {
  const key = cacheKey(parties, x);
  const hit = lagrangeCache.get(key);
  if (hit) return hit;
  const seen = new Set<number>();
  for (const p of parties) {
    if (!Number.isInteger(p) || p < 1) throw new SharingError(`bad party id ${p}`);
    if (seen.has(p)) throw new SharingError(`duplicate party id ${p}`);
    seen.add(p);
  }
  const bx = BigInt(x);
  const out = parties.map((pj) => {
    let num = 1n;
    let den = 1n;
    for (const pk of parties) {
      if (pk === pj) continue;
      num = reduce(num * mod(bx - BigInt(pk)));
      den = reduce(den * mod(BigInt(pj) - BigInt(pk)));
    }
    return reduce(num * inv(den));
  });
  if (lagrangeCache.size >= LAGRANGE_CACHE_LIMIT) lagrangeCache.clear();
  lagrangeCache.set(key, out);
  return out;
}

function assertShareSet(parties: readonly number[], shares: readonly (readonly bigint[])[], need: number, n?: number): number {
  if (parties.length !== shares.length) throw new SharingError(`${parties.length} party ids but ${shares.length} share vectors`);
  if (parties.length < need) throw new SharingError(`need at least ${need} shares, got ${parties.length}`);
  const m = shares[0]?.length ?? 0;
  for (let j = 0; j < shares.length; j++) {
    if (n !== undefined) assertParty(parties[j]!, n);
    if (shares[j]!.length !== m) throw new SharingError(`share vector of party ${parties[j]} has length ${shares[j]!.length}, expected ${m}`);
  }
  return m;
}

interface SmallLagrange {
  /** D * lambda_j as small signed integers. */
  c: bigint[];
  /** D^-1 mod p (1n when D = 1). */
  dInv: bigint;
  /** A multiple of p at least the most negative sum, added before reducing. */
  bias: bigint;
}
const smallCache = new Map<string | number, SmallLagrange>();

function gcd(a: bigint, b: bigint): bigint {
  if (a < 0n) a = -a;
  if (b < 0n) b = -b;
  while (b) [a, b] = [b, a % b];
  return a;
}

/**
 * Lagrange coefficients at x as small integers over a common denominator D: lambda_j = c_j / D.
 * For party sets of a small committee |c_j| and D stay tiny, so sum c_j s_j costs small multiplications
 * (much cheaper than full field products) and one product by D^-1 (often D = 1).
 */
export function smallLagrange(parties: readonly number[], x = 0): SmallLagrange {
  const key = cacheKey(parties, x);
  const hit = smallCache.get(key);
  if (hit) return hit;
  lagrange(parties, x); // validates ids
  const nums: bigint[] = [];
  const dens: bigint[] = [];
  for (const pj of parties) {
    let num = 1n;
    let den = 1n;
    for (const pk of parties) {
      if (pk === pj) continue;
      num *= BigInt(x - pk);
      den *= BigInt(pj - pk);
    }
    const g = gcd(num, den);
    num /= g;
    den /= g;
    if (den < 0n) {
      num = -num;
      den = -den;
    }
    nums.push(num);
    dens.push(den);
  }
  let D = 1n;
  for (const d of dens) D = (D / gcd(D, d)) * d;
  const c = nums.map((nu, i) => (nu * D) / dens[i]!);
  let negSum = 0n;
  for (const ci of c) if (ci < 0n) negSum -= ci;
  const out = { c, dInv: D === 1n ? 1n : inv(D), bias: negSum * P };
  if (smallCache.size >= LAGRANGE_CACHE_LIMIT) smallCache.clear();
  smallCache.set(key, out);
  return out;
}

/** Interpolates every element at point x from exactly the given parties' shares (degree parties-1). */
export function interpolate(parties: readonly number[], shares: readonly (readonly bigint[])[], x = 0): bigint[] {
  const m = assertShareSet(parties, shares, 1);
  if (parties.length <= 8) {
    const { c, dInv, bias } = smallLagrange(parties, x);
    const k = parties.length;
    const out = new Array<bigint>(m);
    if (k === 3) {
      const [c0, c1, c2] = c as [bigint, bigint, bigint];
      const [s0, s1, s2] = shares as [readonly bigint[], readonly bigint[], readonly bigint[]];
      for (let e = 0; e < m; e++) out[e] = reduceWide(bias + c0 * s0[e]! + c1 * s1[e]! + c2 * s2[e]!);
    } else if (k === 5) {
      // all five parties (degree-2t openings and GRR in preprocessing)
      const [c0, c1, c2, c3, c4] = c as [bigint, bigint, bigint, bigint, bigint];
      const [s0, s1, s2, s3, s4] = shares as [readonly bigint[], readonly bigint[], readonly bigint[], readonly bigint[], readonly bigint[]];
      for (let e = 0; e < m; e++) out[e] = reduceWide(bias + c0 * s0[e]! + c1 * s1[e]! + c2 * s2[e]! + c3 * s3[e]! + c4 * s4[e]!);
    } else {
      for (let e = 0; e < m; e++) {
        let acc = bias;
        for (let j = 0; j < k; j++) acc += c[j]! * shares[j]![e]!;
        out[e] = reduceWide(acc);
      }
    }
    if (dInv !== 1n) for (let e = 0; e < m; e++) out[e] = reduce(out[e]! * dInv);
    return out;
  }
  const lam = lagrange(parties, x);
  const k = parties.length;
  const out = new Array<bigint>(m);
  for (let e = 0; e < m; e++) {
    let acc = 0n;
    for (let j = 0; j < k; j++) acc += lam[j]! * shares[j]![e]!;
    out[e] = reduceWide(acc);
  }
  return out;
}

/** Throws FieldError unless every 16-byte big-endian element of bytes is below p (as readElement checks). */
function assertEncodedElements(bytes: Uint8Array): void {
  if (bytes.length % 16 !== 0) throw new FieldError(`field vector length ${bytes.length} is not a multiple of 16`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let o = 0; o < bytes.length; o += 16) assertEncodedAt(view, o);
}

/**
 * interpolate() for shares of which some are still encoded (16-byte big-endian vectors, as received):
 * every share enters 32-bit limb sums with the small-integer Lagrange weights (decoded vectors are
 * encoded first, two BigInt operations per element), and each result is made once from its limbs
 * (fromLimbsMod): about a third of the BigInt work of decoding, then interpolating. Same results;
 * throws FieldError on a value outside [0, p), SharingError on unequal lengths.
 */
export function interpolateEncoded(parties: readonly number[], shares: readonly (readonly bigint[] | Uint8Array)[], x = 0): bigint[] {
  if (parties.length !== shares.length) throw new SharingError(`${parties.length} party ids but ${shares.length} share vectors`);
  const m = shares.length > 0 ? elementCount(shares[0]!) : 0;
  for (let j = 0; j < shares.length; j++) {
    const v = shares[j]!;
    if (v instanceof Uint8Array) assertEncodedElements(v);
    if (elementCount(v) !== m) throw new SharingError(`share vector of party ${parties[j]} has length ${elementCount(v)}, expected ${m}`);
  }
  if (parties.length > 8 || m === 0) return interpolateDecoded(parties, shares, x);
  const { c, dInv } = smallLagrange(parties, x);
  let weight = 0;
  for (const cj of c) weight += Math.abs(Number(cj));
  if (weight > LIMB_WEIGHT_LIMIT) return interpolateDecoded(parties, shares, x);
  const acc = limbScratch(m); // read by fromLimbsMod below, before any other call can reuse it
  let neg = 0;
  for (let j = 0; j < c.length; j++) {
    const v = shares[j]!;
    const bytes = v instanceof Uint8Array ? v : encodeFieldVector(v);
    const w = Number(c[j]!);
    if (w < 0) neg -= w;
    addLimbs(acc, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), m, 0, 16, w);
  }
  const out = fromLimbsMod(acc, m, neg);
  if (dInv !== 1n) for (let e = 0; e < m; e++) out[e] = reduce(out[e]! * dInv);
  return out;
}

// Module-level, not closures in interpolateEncoded: under tsx every named closure costs a call to
// the keep-names helper each time it is made, and interpolateEncoded runs at every opening.
function elementCount(v: readonly bigint[] | Uint8Array): number {
  return v instanceof Uint8Array ? v.length / 16 : v.length;
}

function interpolateDecoded(parties: readonly number[], shares: readonly (readonly bigint[] | Uint8Array)[], x: number): bigint[] {
  return interpolate(parties, shares.map((v) => (v instanceof Uint8Array ? decodeFieldVector(v) : v)), x);
}

/**
 * interpolateEncoded at 0 with the result encoded (16 bytes per element): the Lagrange combination
 * runs in the field kernel, without a BigInt per element.
 */
export function interpolateToBytes(parties: readonly number[], shares: readonly (readonly bigint[] | Uint8Array)[]): Uint8Array {
  if (parties.length !== shares.length || parties.length === 0) throw new SharingError(`${parties.length} party ids but ${shares.length} share vectors`);
  const rows = shares.map((v) => (v instanceof Uint8Array ? v : encodeFieldVector(v)));
  const m = rows[0]!.length;
  rows.forEach((r, j) => {
    if (r.length !== m) throw new SharingError(`share vector of party ${parties[j]} has length ${r.length / 16}, expected ${m / 16}`);
  });
  // (the kernel checks every element is below p)
  return lincombEncoded(rows, lagrange(parties, 0));
}

/** Secrets from the first t+1 of the given shares (no consistency check). */
export function reconstruct(parties: readonly number[], shares: readonly (readonly bigint[])[], t: number): bigint[] {
  assertShareSet(parties, shares, t + 1);
  return interpolate(parties.slice(0, t + 1), shares.slice(0, t + 1), 0);
}

/**
 * Indices e where share j (j >= t+1) disagrees with the polynomial through the first t+1 shares,
 * per extra party; fast path: one random linear combination per party, per-element only on mismatch.
 */
export function findInconsistent(parties: readonly number[], shares: readonly (readonly bigint[])[], t: number): { party: number; index: number }[] {
  const m = assertShareSet(parties, shares, t + 1);
  const base = parties.slice(0, t + 1);
  const rho = randomSmall(m);
  const dot = (v: readonly bigint[]): bigint => {
    let acc = 0n;
    for (let e = 0; e < m; e++) acc += rho[e]! * v[e]!;
    return mod(acc);
  };
  const baseDots = shares.slice(0, t + 1).map(dot);
  const bad: { party: number; index: number }[] = [];
  for (let j = t + 1; j < parties.length; j++) {
    const lam = lagrange(base, parties[j]!);
    let expect = 0n;
    for (let i = 0; i <= t; i++) expect += lam[i]! * baseDots[i]!;
    if (reduceWide(expect) === dot(shares[j]!)) continue;
    for (let e = 0; e < m; e++) {
      let v = 0n;
      for (let i = 0; i <= t; i++) v += lam[i]! * shares[i]![e]!;
      if (reduceWide(v) !== shares[j]![e]) {
        bad.push({ party: parties[j]!, index: e });
        break;
      }
    }
  }
  return bad;
}

function consistentAt(parties: readonly number[], column: readonly bigint[], t: number): boolean {
  const base = parties.slice(0, t + 1);
  for (let j = t + 1; j < parties.length; j++) {
    const lam = lagrange(base, parties[j]!);
    let v = 0n;
    for (let i = 0; i <= t; i++) v += lam[i]! * column[i]!;
    if (reduceWide(v) !== column[j]) return false;
  }
  return true;
}

/**
 * Secrets from more than t+1 shares, checked: throws InconsistentSharesError(party, index) if they
 * do not lie on one degree-t polynomial. Names the bad party when there are >= t+3 shares and exactly
 * one share of that element is off; otherwise party is null. With exactly t+1 shares: no check.
 */
export function reconstructChecked(parties: readonly number[], shares: readonly (readonly bigint[])[], t: number, n?: number): bigint[] {
  const m = assertShareSet(parties, shares, t + 1, n);
  for (const v of shares) assertElements(v, 'share');
  if (parties.length > t + 1) {
    const bad = findInconsistent(parties, shares, t);
    if (bad.length > 0) {
      // Locate the first bad element index over all extra parties, then name its culprit.
      const index = Math.min(...bad.map((b) => b.index));
      const column = shares.map((v) => v[index]!);
      throw new InconsistentSharesError(nameBadParty(parties, column, t), index);
    }
  }
  void m;
  return interpolate(parties.slice(0, t + 1), shares.slice(0, t + 1), 0);
}

/** The single party whose share of one element is off, or null if it cannot be named. */
export function nameBadParty(parties: readonly number[], column: readonly bigint[], t: number): number | null {
  if (parties.length < t + 3) return null;
  let culprit: number | null = null;
  for (let j = 0; j < parties.length; j++) {
    const ps = parties.filter((_, i) => i !== j);
    const cs = column.filter((_, i) => i !== j);
    if (consistentAt(ps, cs, t)) {
      if (culprit !== null) return null; // two candidates: ambiguous
      culprit = parties[j]!;
    }
  }
  return culprit;
}

/** Random 64-bit multipliers for linear-combination checks (not secret; must be unpredictable to a cheater). */
function randomSmall(m: number): bigint[] {
  const bytes = randomBytes(m * 8);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<bigint>(m);
  for (let i = 0; i < m; i++) out[i] = view.getBigUint64(i * 8);
  return out;
}

export { FieldError };
