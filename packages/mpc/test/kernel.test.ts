import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import * as F from '../src/field';
import {
  addEncoded, bitsFromRootsEncoded, invEncoded, lincombEncoded, mulEncoded, nibbleHigherEncoded, nibblePairsEncoded, nibblesFromSignsEncoded, nibbleUnaryEncoded,
  scaleEncoded, shareEncoded, sqrtEncoded, subEncoded, beaverOpeningsEncoded, beaverProductsEncoded, blockIndicatorsEncoded,
  closureEvalEncoded, closureOpeningsEncoded, lincombSmallEncoded, lincombSmallRowsEncoded, prssSumEncoded,
} from '../src/kernel';
import { LEX4, PROD4, closureItemOf, groupSizes, lexEq, lexLt, lexProgram, prodProgram } from '../src/closure';
import { costOf } from '../src/protocols';
import { interpolate, lagrange } from '../src/shamir';
import { nibblesFrom, nibblesFromSigns } from '../src/preprocessing';
import { FIELD_KERNEL_WASM_BASE64 } from '../src/kernel-wasm';
import { compileKernel, kernelModuleText } from '../tools/kernel-build';

const elem = fc.bigInt({ min: 0n, max: F.P - 1n });
// values where limb carries and the final fold are exercised
const EDGE = [0n, 1n, 2n, F.P - 1n, F.P - 2n, (1n << 126n) - 1n, 1n << 126n, (1n << 64n) - 1n, 1n << 64n, (1n << 26n) - 1n, 1n << 104n, F.P >> 1n];
const elems = fc.array(fc.oneof(elem, fc.constantFrom(...EDGE)), { maxLength: 40 });

describe('field kernel (WebAssembly)', () => {
  it('mul agrees with BigInt on random and edge values', () => {
    fc.assert(fc.property(elems, elems, (xs, ys) => {
      const m = Math.min(xs.length, ys.length);
      const out = F.decodeFieldVector(mulEncoded(F.encodeFieldVector(xs.slice(0, m)), F.encodeFieldVector(ys.slice(0, m))));
      return out.length === m && out.every((z, i) => z === F.mul(xs[i]!, ys[i]!));
    }));
    for (const a of EDGE) for (const b of EDGE) expect(F.decodeFieldVector(mulEncoded(F.encodeFieldVector([a]), F.encodeFieldVector([b])))[0]).toBe(F.mul(a, b));
  });

  it('sqrt agrees with BigInt on squares (the canonical root)', () => {
    fc.assert(fc.property(elems, (xs) => {
      const sq = xs.map((x) => F.mul(x, x));
      const out = F.decodeFieldVector(sqrtEncoded(F.encodeFieldVector(sq)));
      return out.every((s, i) => s === F.sqrt(sq[i]!));
    }), { numRuns: 30 });
  });

  it('sqrt is x^(2^125) in the four-lane SIMD groups and the scalar tail alike (edge values in every lane)', () => {
    // sqrtMany squares four elements at a time in the lanes of i32x4 limbs, the rest one by one:
    // lengths 1-13 put every edge value (2^64 boundaries, 0, 1, p-1, the top bit) in every lane and in the tail
    const E = [...EDGE, (1n << 127n) - 2n, (1n << 63n) - 1n, 1n << 63n, (1n << 64n) + 1n, 3n];
    const e125 = 1n << 125n;
    for (let len = 1; len <= 13; len++) {
      for (let shift = 0; shift < E.length; shift++) {
        const xs = Array.from({ length: len }, (_, i) => E[(i + shift) % E.length]!);
        const out = F.decodeFieldVector(sqrtEncoded(F.encodeFieldVector(xs)));
        expect(out).toEqual(xs.map((x) => F.pow(x, e125)));
      }
    }
  });

  it('share makes degree-t sharings of the secrets (any t+1 rows interpolate to them, t rows do not fix them)', () => {
    fc.assert(fc.property(elems, fc.constantFrom([5, 2], [3, 1], [7, 3], [9, 4]), (xs, [n, t]) => {
      const rows = shareEncoded(F.encodeFieldVector(xs), n!, t!).map((r) => F.decodeFieldVector(r));
      if (rows.length !== n) return false;
      const pick = (ids: number[]): bigint[] => interpolate(ids, ids.map((i) => rows[i - 1]!), 0);
      const first = Array.from({ length: t! + 1 }, (_, i) => i + 1);
      const last = Array.from({ length: t! + 1 }, (_, i) => n! - i);
      return pick(first).every((v, i) => v === xs[i]) && pick(last).every((v, i) => v === xs[i]);
    }), { numRuns: 40 });
    // fresh coefficients every call: two sharings of the same secret differ
    const s = F.encodeFieldVector([42n]);
    expect(Buffer.from(shareEncoded(s, 5, 2)[0]!).equals(Buffer.from(shareEncoded(s, 5, 2)[0]!))).toBe(false);
  });

  it('large vectors grow the memory and stay correct', () => {
    const xs = Array.from({ length: 20_000 }, (_, i) => F.mod(BigInt(i) * 0x1234567890abcdef1234567n + 7n));
    const out = F.decodeFieldVector(mulEncoded(F.encodeFieldVector(xs), F.encodeFieldVector(xs)));
    expect(out[19_999]).toBe(F.mul(xs[19_999]!, xs[19_999]!));
    expect(out[0]).toBe(F.mul(xs[0]!, xs[0]!));
  });

  it('prssSum: raw key-stream blocks with the top bit cleared, weighted and scaled, agree with BigInt', () => {
    // raw 16-byte blocks: any bytes, including a set top bit and p itself once it is cleared (0xff..ff -> p)
    const raw = fc.oneof(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.constantFrom(new Uint8Array(16).fill(0xff), Uint8Array.from([0x7f, ...new Array(15).fill(0xff)]), new Uint8Array(16)));
    const weight = fc.oneof(fc.integer({ min: -(2 ** 24) + 1, max: 2 ** 24 - 1 }), fc.constantFrom(0, 1, -1, 2 ** 24 - 1, -(2 ** 24) + 1));
    const valueOf = (b: Uint8Array): bigint => F.mod(BigInt('0x' + Buffer.from(b).toString('hex')) & ((1n << 127n) - 1n));
    fc.assert(fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 12 }), fc.array(raw, { minLength: 6 * 3 * 12, maxLength: 6 * 3 * 12 }), fc.array(weight, { minLength: 18, maxLength: 18 }), fc.oneof(elem, fc.constant(1n)), (s, per, m, blocks, ws, c) => {
      const streams = Array.from({ length: s }, (_, i) => {
        const st = new Uint8Array(m * per * 16);
        for (let b = 0; b < m * per; b++) st.set(blocks[(i * m * per + b) % blocks.length]!, b * 16);
        return st;
      });
      const w = ws.slice(0, s * per);
      const got = F.decodeFieldVector(prssSumEncoded(streams, per, m, w, c));
      return got.length === m && got.every((v, e) => {
        let want = 0n;
        for (let i = 0; i < s; i++) for (let l = 0; l < per; l++) want = F.add(want, F.mul(F.mod(BigInt(w[i * per + l]!)), valueOf(streams[i]!.subarray((e * per + l) * 16, (e * per + l + 1) * 16))));
        return v === F.mul(want, c);
      });
    }), { numRuns: 80 });
    expect(() => prssSumEncoded([new Uint8Array(32)], 1, 1, [1])).toThrow(F.FieldError);
  });

  it('rejects bad input with a FieldError', () => {
    expect(() => mulEncoded(new Uint8Array(16), new Uint8Array(32))).toThrow(F.FieldError);
    expect(() => sqrtEncoded(new Uint8Array(15))).toThrow(/16-byte/);
    expect(() => sqrtEncoded(new Uint8Array(16).fill(0xff))).toThrow(/not a field element/);
    expect(() => shareEncoded(new Uint8Array(16), 5, 5)).toThrow(F.FieldError);
  });

  it('the committed binary is the compiled source (npm run build:kernel)', async () => {
    const bin = await compileKernel();
    expect(Buffer.from(FIELD_KERNEL_WASM_BASE64, 'base64').equals(Buffer.from(bin))).toBe(true);
    expect(readFileSync(new URL('../src/kernel-wasm.ts', import.meta.url), 'utf8')).toBe(kernelModuleText(bin));
  }, 60_000);
});

describe('field kernel: preprocessing steps', () => {
  const enc = F.encodeFieldVector;
  const dec = F.decodeFieldVector;
  const bits = fc.array(fc.constantFrom(0n, 1n), { minLength: 4, maxLength: 40 }).map((b) => b.slice(0, b.length - (b.length % 4)));

  it('add and scale agree with BigInt', () => {
    fc.assert(fc.property(elems, elem, (xs, c) => {
      const ys = xs.map((x) => F.sub(c, x));
      return dec(addEncoded(enc(xs), enc(ys))).every((z, i) => z === F.add(xs[i]!, ys[i]!))
        && dec(scaleEncoded(enc(xs), c)).every((z, i) => z === F.mul(xs[i]!, c));
    }));
    expect(dec(addEncoded(enc([F.P - 1n, F.P - 1n, 1n]), enc([F.P - 1n, 1n, F.P - 1n])))).toEqual([F.P - 2n, 0n, 0n]);
  });

  it('lincomb interpolates share vectors like interpolate()', () => {
    fc.assert(fc.property(elems, (xs) => {
      const rows = shareEncoded(enc(xs), 5, 2);
      const lam = lagrange([1, 2, 3, 4, 5], 0);
      return dec(lincombEncoded(rows, lam)).every((v, i) => v === xs[i]);
    }), { numRuns: 30 });
  });

  it('lincombSmall agrees with BigInt for small signed weights, with and without a scale, on edge values', () => {
    const weight = fc.oneof(fc.integer({ min: -(2 ** 24) + 1, max: 2 ** 24 - 1 }), fc.constantFrom(0, 1, -1, 2 ** 24 - 1, -(2 ** 24) + 1));
    fc.assert(fc.property(fc.integer({ min: 1, max: 64 }), elems, elem, fc.boolean(), fc.array(weight, { minLength: 64, maxLength: 64 }), (k, xs, c, scaled, ws) => {
      // k rows of the same length; the largest limbs (p - 1 everywhere) in half the rows
      const rows = Array.from({ length: k }, (_, j) => xs.map((x, i) => (j % 2 === 0 ? F.P - 1n : F.mod(x + BigInt(i * j)))));
      const w = ws.slice(0, k);
      const got = dec(lincombSmallEncoded(rows.map(enc), w, scaled ? c : 1n));
      return got.length === xs.length && got.every((v, i) => {
        let want = 0n;
        for (let j = 0; j < k; j++) want = F.add(want, F.mul(F.mod(BigInt(w[j]!)), rows[j]![i]!));
        return v === (scaled ? F.mul(want, c) : want);
      });
    }), { numRuns: 60 });
    expect(() => lincombSmallEncoded([enc([1n])], [2 ** 24])).toThrow(/small integer/);
    // several combinations of the same rows at once equal one at a time
    fc.assert(fc.property(elems, elems, elem, elem, fc.array(weight, { minLength: 6, maxLength: 6 }), (xs, ys, c0, c1, ws) => {
      const m = Math.min(xs.length, ys.length);
      const rows = [enc(xs.slice(0, m)), enc(ys.slice(0, m)), enc(xs.slice(0, m).reverse())];
      const w = [ws.slice(0, 3), ws.slice(3, 6)];
      const got = lincombSmallRowsEncoded(rows, w, [c0, c1]).map(dec);
      return got.length === 2 && got.every((g, q) => Buffer.from(enc(g)).equals(Buffer.from(lincombSmallEncoded(rows, w[q]!, q === 0 ? c0 : c1))));
    }), { numRuns: 40 });
    // unscaled, 3 rows (GRR dealing, its own loop): at and above |weights| summing to 2^12 (ADR
    // 0035's former no-carry bound), on the largest canonical values, they equal BigInt
    const P = F.P;
    const big = [P - 1n, P - 2n, 2n ** 126n, 2n ** 126n - 1n, (2n ** 104n) - 1n, 0n, 1n];
    const rows3 = [enc(big), enc([...big].reverse()), enc(big.map((v, i) => big[(i + 3) % big.length]!))];
    for (const w of [[4095, 0, 0], [-4095, 0, 0], [2000, -2000, 95], [-1365, -1365, -1365], [4096, 0, 0], [-2048, 2048, 1], [2 ** 24 - 1, -(2 ** 24 - 1), 2 ** 24 - 1]]) {
      const got = dec(lincombSmallRowsEncoded(rows3, [w, [1, 2, 3]], [1n, 1n])[0]!);
      const want = big.map((_, i) => w.reduce((acc, wj, j) => F.add(acc, F.mul(F.mod(BigInt(wj)), F.decodeFieldVector(rows3[j]!)[i]!)), 0n));
      expect(got).toEqual(want);
    }
    // the same with 2 and 4 rows (the general loop; 3 rows take a loop of their own)
    fc.assert(fc.property(elems, elems, elem, fc.array(weight, { minLength: 4, maxLength: 4 }), fc.constantFrom(2, 4), (xs, ys, c0, ws, k) => {
      const m = Math.min(xs.length, ys.length);
      const rows = [enc(xs.slice(0, m)), enc(ys.slice(0, m)), enc(xs.slice(0, m).reverse()), enc(ys.slice(0, m).reverse())].slice(0, k);
      const got = lincombSmallRowsEncoded(rows, [ws.slice(0, k)], [c0]);
      return Buffer.from(got[0]!).equals(Buffer.from(lincombSmallEncoded(rows, ws.slice(0, k), c0)));
    }), { numRuns: 30 });
    // lincombEncoded takes the small path for integer Lagrange weights and agrees with interpolate()
    const xs = [0n, 1n, F.P - 1n, 12345678901234567890n];
    const rows = shareEncoded(enc(xs), 7, 3);
    expect(dec(lincombEncoded(rows, lagrange([1, 2, 3, 4, 5, 6, 7], 0)))).toEqual(xs);
  });

  it('lincombSmall word sums at their bounds: 64 rows, weights of +-(2^24 - 1), the largest words and ~x', () => {
    // the word columns are largest with 64 rows of |w| = 2^24 - 1 on words of all ones: x = p - 1 or
    // 2^127 - 2 under positive weights, x = 0 (~x all ones) under negative ones; 2^32 and 2^64 seams too
    const P = F.P;
    const vals = [0n, 1n, P - 1n, P - 2n, (1n << 64n) - 1n, 1n << 64n, (1n << 32n) - 1n, 1n << 32n, (1n << 96n) - 1n, 1n << 96n, 1n << 126n];
    const W = 2 ** 24 - 1;
    const weightSets = [Array(64).fill(W), Array(64).fill(-W), Array.from({ length: 64 }, (_, j) => (j % 2 ? -W : W)), Array.from({ length: 64 }, (_, j) => (j % 3 ? -1 : W))];
    for (const w of weightSets) {
      const rows = Array.from({ length: 64 }, (_, j) => vals.map((v, i) => (j % 5 === 0 ? vals[(i + j) % vals.length]! : v)));
      for (const c of [1n, P - 1n, 3n]) {
        const got = dec(lincombSmallEncoded(rows.map(enc), w, c));
        const want = vals.map((_, i) => F.mul(c, rows.reduce((acc, r, j) => F.add(acc, F.mul(F.mod(BigInt(w[j]!)), r[i]!)), 0n)));
        expect(got).toEqual(want);
      }
    }
  });

  it('bitsFromRoots makes (r/s + 1)/2, keeps r where y = 0, and finds a bad root', () => {
    fc.assert(fc.property(fc.array(fc.oneof(elem, fc.constantFrom(0n, 1n, F.P - 1n)), { minLength: 1, maxLength: 30 }), (rs) => {
      const y = rs.map((r) => F.mul(r, r));
      const s = y.map((v) => (v === 0n ? 1n : F.sqrt(v)));
      const got = bitsFromRootsEncoded(enc(rs), enc(s), enc(y));
      if (!('bits' in got)) return false;
      const want = rs.map((r, i) => (y[i] === 0n ? r : F.half(F.add(F.mul(r, F.inv(s[i]!)), 1n))));
      const b = dec(got.bits);
      // with r a plain value (one party holding the "sharing"), r/s = +-1 and the bit is 0 or 1
      return b.every((v, i) => v === want[i] && (y[i] === 0n || v === 0n || v === 1n));
    }), { numRuns: 40 });
    const y = [F.mul(5n, 5n), F.mul(7n, 7n)];
    expect(bitsFromRootsEncoded(enc([5n, 7n]), enc([F.sqrt(y[0]!), 8n]), enc(y))).toEqual({ badIndex: 1 });
  });

  it('nibble products and stored form agree with nibblesFrom', () => {
    fc.assert(fc.property(bits, (xs) => {
      const U = xs.length / 4;
      const x = enc(xs);
      const p2 = nibblePairsEncoded(x);
      const p3 = nibbleHigherEncoded(x, p2);
      const p2b = dec(p2);
      const p3b = dec(p3);
      for (let u = 0; u < U; u++) {
        const b = xs.slice(4 * u, 4 * u + 4);
        const pairs = [b[0]! * b[1]!, b[0]! * b[2]!, b[0]! * b[3]!, b[1]! * b[2]!, b[1]! * b[3]!, b[2]! * b[3]!];
        const high = [b[0]! * b[1]! * b[2]!, b[0]! * b[1]! * b[3]!, b[0]! * b[2]! * b[3]!, b[1]! * b[2]! * b[3]!, b[0]! * b[1]! * b[2]! * b[3]!];
        if (!pairs.every((v, i) => p2b[6 * u + i] === v) || !high.every((v, i) => p3b[5 * u + i] === v)) return false;
      }
      const stored = dec(nibbleUnaryEncoded(x, p2, p3));
      return stored.every((v, i) => v === nibblesFrom(xs, p2b, p3b, U)[i]);
    }), { numRuns: 40 });
    // on arbitrary field elements (shares, not bits) the transform is the same linear map
    fc.assert(fc.property(fc.array(elem, { minLength: 15, maxLength: 15 }), (v) => {
      const x = v.slice(0, 4);
      const p2 = v.slice(4, 10);
      const p3 = v.slice(10, 15);
      return dec(nibbleUnaryEncoded(enc(x), enc(p2), enc(p3))).every((z, i) => z === nibblesFrom(x, p2, p3, 1)[i]);
    }));
  });
});

describe('field kernel: nibbles from signs (two-round production)', () => {
  const enc = F.encodeFieldVector;
  const dec = F.decodeFieldVector;
  const nonzero = fc.bigInt({ min: 1n, max: F.P - 1n });
  /** The stored form of plain nibbles v (as nibblesFrom makes it from plain bits). */
  const storedOf = (bitsOf: bigint[]): bigint[] => {
    const U = bitsOf.length / 4;
    const x = enc(bitsOf);
    const p2 = nibblePairsEncoded(x);
    return nibblesFrom(bitsOf, dec(p2), dec(nibbleHigherEncoded(x, p2)), U);
  };

  it('inverses (batch inversion, 0 kept as 0) agree with BigInt', () => {
    fc.assert(fc.property(elems, (xs) => dec(invEncoded(enc(xs))).every((v, i) => v === (xs[i] === 0n ? 0n : F.inv(xs[i]!)))), { numRuns: 60 });
  });

  it('plain r: the bits are (r/s + 1)/2 and the stored form is theirs (kernel = BigInt)', () => {
    fc.assert(fc.property(fc.array(nonzero, { minLength: 4, maxLength: 4 * 9 }).filter((a) => a.length % 4 === 0), (rs) => {
      const U = rs.length / 4;
      const r = enc(rs);
      const s = sqrtEncoded(mulEncoded(r, r));
      const q = invEncoded(s);
      const p2 = nibblePairsEncoded(r);
      const p3 = nibbleHigherEncoded(r, p2);
      const got = dec(nibblesFromSignsEncoded(r, p2, p3, q));
      const sb = dec(s);
      if (!dec(q).every((v, i) => F.mul(v, sb[i]!) === 1n)) return false;
      const bitsOf = rs.map((v, i) => F.half(F.add(F.mul(v, F.inv(sb[i]!)), 1n)));
      if (!bitsOf.every((b) => b === 0n || b === 1n)) return false;
      const want = storedOf(bitsOf);
      const big = nibblesFromSigns(rs, dec(p2), dec(p3), dec(q), U);
      return got.every((v, i) => v === want[i] && v === big[i]);
    }), { numRuns: 40 });
  });

  it('on arbitrary shares (any r, products, public roots) kernel and BigInt are the same linear map', () => {
    fc.assert(fc.property(fc.array(elem, { minLength: 15, maxLength: 15 }), fc.array(nonzero, { minLength: 4, maxLength: 4 }), (v, s) => {
      const [r, p2, p3] = [v.slice(0, 4), v.slice(4, 10), v.slice(10, 15)];
      return dec(nibblesFromSignsEncoded(enc(r), enc(p2), enc(p3), enc(s))).every((z, i) => z === nibblesFromSigns(r, p2, p3, s, 1)[i]);
    }), { numRuns: 60 });
  });

  it('edge inverse roots and shares (the rotations by 2^-4 and 2^k at the 64-bit seam and the top bit): kernel = BigInt', () => {
    const P = F.P;
    const edges = [1n, 2n, 15n, 16n, 17n, P - 1n, P - 2n, P - 16n, 2n ** 126n, 2n ** 126n - 1n, 2n ** 126n + 7n, 2n ** 64n, 2n ** 64n - 1n, 2n ** 63n, 2n ** 63n - 1n, (2n ** 123n) | 15n, 2n ** 59n + 3n];
    const vals = [0n, ...edges];
    for (let k = 0; k < edges.length; k++) {
      const q = [edges[k]!, edges[(k + 3) % edges.length]!, edges[(k + 7) % edges.length]!, edges[(k + 11) % edges.length]!];
      const v = Array.from({ length: 15 }, (_, i) => vals[(k * 5 + i * 3) % vals.length]!);
      const [r, p2, p3] = [v.slice(0, 4), v.slice(4, 10), v.slice(10, 15)];
      expect(dec(nibblesFromSignsEncoded(enc(r), enc(p2), enc(p3), enc(q)))).toEqual(nibblesFromSigns(r, p2, p3, q, 1));
    }
  });

  it('the transform on word columns at its bounds: every monomial share alike (all 16 terms of one sign in W[0]), kernel = BigInt', () => {
    // the butterflies and suffix sums run on signed 64-bit word columns; they are largest when the
    // 16 terms 16^-1 b_T have the same large words, and most negative for the alternating W[m]
    const P = F.P;
    for (const x of [P - 1n, P - 2n, 1n, 0n, (1n << 64n) - 1n, (1n << 96n) - 1n, 1n << 126n]) {
      for (const root of [1n, P - 1n, 2n ** 123n, 16n]) {
        const r = [x, x, x, x];
        const p2 = Array(6).fill(x);
        const p3 = Array(5).fill(x);
        const q = [root, root, root, root];
        expect(dec(nibblesFromSignsEncoded(enc(r), enc(p2), enc(p3), enc(q)))).toEqual(nibblesFromSigns(r, p2, p3, q, 1));
      }
    }
  });

  it('a zero root (r = 0) makes that bit 0 in the BigInt path; the kernel refuses it', () => {
    const rs = [0n, 5n, 0n, 7n];
    const sq = sqrtEncoded(mulEncoded(enc(rs), enc(rs)));
    const s = dec(sq);
    const q = dec(invEncoded(sq));
    expect(s[0]).toBe(0n);
    expect(q).toEqual(s.map((v) => (v === 0n ? 0n : F.inv(v))));
    const p2 = dec(nibblePairsEncoded(enc(rs)));
    const p3 = dec(nibbleHigherEncoded(enc(rs), enc(p2)));
    const bitsOf = rs.map((v, i) => (v === 0n ? 0n : F.half(F.add(F.mul(v, F.inv(s[i]!)), 1n))));
    expect(nibblesFromSigns(rs, p2, p3, q, 1)).toEqual(storedOf(bitsOf));
    expect(() => nibblesFromSignsEncoded(enc(rs), enc(p2), enc(p3), enc(q))).toThrow(/zero/);
  });
});

describe('field kernel: online steps', () => {
  const enc = F.encodeFieldVector;
  const dec = F.decodeFieldVector;

  it('sub agrees with BigInt', () => {
    fc.assert(fc.property(elems, elems, (xs, ys) => {
      const m = Math.min(xs.length, ys.length);
      return dec(subEncoded(enc(xs.slice(0, m)), enc(ys.slice(0, m)))).every((z, i) => z === F.sub(xs[i]!, ys[i]!));
    }));
  });

  it('Beaver openings and products give x*y for triples', () => {
    fc.assert(fc.property(fc.array(fc.tuple(elem, elem, elem, elem), { minLength: 1, maxLength: 20 }), (rows) => {
      const m = rows.length;
      const x = rows.map((r) => r[0]);
      const y = rows.map((r) => r[1]);
      // a single "party" holding the whole values: opening is the identity
      const triples = enc(rows.flatMap((r) => [r[2], r[3], F.mul(r[2], r[3])]));
      const z = dec(beaverProductsEncoded(beaverOpeningsEncoded(enc([...x, ...y]), triples, m), triples, m));
      return z.every((v, i) => v === F.mul(x[i]!, y[i]!));
    }), { numRuns: 50 });
    expect(() => beaverOpeningsEncoded(new Uint8Array(32), new Uint8Array(48), 2)).toThrow(F.FieldError);
  });

  it('closure evaluation gives every LEX4 and PROD4 group program\'s monomials from one opening', () => {
    // a single "party" holding whole values: items are [masks, subset products], openings f - a
    const cases: { prog: ReturnType<typeof lexProgram>; expect: (f: bigint[]) => bigint[] }[] = [];
    for (const g of [2, 3, 4]) {
      for (const withEq of [true, false]) {
        cases.push({
          prog: lexProgram(g, withEq),
          expect: (f) => {
            // f in factor order [e1, l2, e2, l3, ...]: lt (without l1) = sum_k e1..e_{k-1} l_k, eq = e1..e_g
            const e = (j: number): bigint => f[lexEq(j)]!;
            const l = (j: number): bigint => f[lexLt(j)]!;
            let lt = 0n;
            let pre = 1n;
            for (let k = 2; k <= g; k++) {
              pre = F.mul(pre, e(k - 1));
              lt = F.add(lt, F.mul(pre, l(k)));
            }
            return withEq ? [lt, F.mul(pre, e(g))] : [lt];
          },
        });
      }
      cases.push({ prog: prodProgram(g), expect: (f) => [f.slice(0, g).reduce((acc, x) => F.mul(acc, x), 1n)] });
    }
    fc.assert(fc.property(fc.integer({ min: 0, max: cases.length - 1 }), fc.integer({ min: 1, max: 6 }), fc.array(fc.oneof(elem, fc.constantFrom(0n, 1n, F.P - 1n)), { minLength: 7 * 6 * 2, maxLength: 7 * 6 * 2 }), (ci, m, vals) => {
      const { prog, expect: want } = cases[ci]!;
      const sh = prog.shape;
      const fs = Array.from({ length: m }, (_, i) => vals.slice(i * 7, i * 7 + prog.p));
      const as = Array.from({ length: m }, (_, i) => vals.slice(42 + i * 7, 42 + i * 7 + sh.factors));
      const items = enc(as.flatMap((a) => closureItemOf(sh, a)));
      const factors = enc(Array.from({ length: prog.p }, (_, k) => fs.map((f) => f[k]!)).flat());
      const out = dec(closureEvalEncoded(closureOpeningsEncoded(factors, items, m, sh.width, prog.p), items, m, prog));
      return fs.every((f, i) => want(f).every((v, o) => out[o * m + i] === v));
    }), { numRuns: 200 });
    expect(LEX4.width).toBe(29);
    expect(PROD4.width).toBe(15);
    expect(() => closureOpeningsEncoded(new Uint8Array(32), new Uint8Array(29 * 16), 1, 29, 3)).toThrow(F.FieldError);
  });

  it('tree levels: groups of four, a remainder of one passes through without an item', () => {
    expect(groupSizes(13)).toEqual([4, 4, 4, 1]);
    expect(groupSizes(4)).toEqual([4]);
    expect(groupSizes(5)).toEqual([4, 1]);
    expect(groupSizes(7)).toEqual([4, 3]);
    expect(groupSizes(2)).toEqual([2]);
    expect(() => groupSizes(1)).toThrow(/tree level/);
    // items of a whole tree, as less-than declares them
    expect(costOf('lt', 48).lex4).toBe(4); // 13 blocks: 4, 4, 4, 1 then 4 (4, 3, 3, 3 then 4 took 5)
    expect(costOf('lt', 70).lex4).toBe(7); // 18 blocks: 4, 4, 4, 4, 2; then 4, 1; then 2
    for (let w = 2; w <= 80; w++) {
      const sizes = groupSizes(w);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(w);
      expect(sizes.length).toBe(Math.ceil(w / 4)); // same rounds as any fan-in-4 tree
      expect(sizes.filter((g) => g > 1).length).toBe(Math.floor(w / 4) + (w % 4 > 1 ? 1 : 0));
    }
  });

  it('block indicators read [r > c] and [r = c] from stored nibbles', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 15 })), { minLength: 1, maxLength: 12 }), (pairs) => {
      // plain nibbles r (stored form [r > j], then r) and digits c
      const nib = enc(pairs.flatMap(([r]) => [...Array.from({ length: 15 }, (_, j) => (r > j ? 1n : 0n)), BigInt(r)]));
      const base = Uint32Array.from(pairs.map((_, i) => 16 * (pairs.length - 1 - i))); // any order
      const digits = Uint8Array.from(pairs.map((_, i) => pairs[pairs.length - 1 - i]![1]));
      const { lt, eq } = blockIndicatorsEncoded(nib, base, digits);
      const l = dec(lt);
      const e = dec(eq);
      return pairs.every((_, i) => {
        const [r, c] = pairs[pairs.length - 1 - i]!;
        return l[i] === (c < r ? 1n : 0n) && e[i] === (c === r ? 1n : 0n);
      });
    }));
    expect(() => blockIndicatorsEncoded(new Uint8Array(256), Uint32Array.of(16), Uint8Array.of(3))).toThrow(/outside/);
  });
});
