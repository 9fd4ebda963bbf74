import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import * as F from '../src/field';
import { InconsistentSharesError } from '../src/api';
import { SharingError, interpolate, interpolateEncoded, lagrange, reconstruct, reconstructChecked, shareSecret, smallLagrange } from '../src/shamir';

const elem = fc.bigInt({ min: 0n, max: F.P - 1n });
const configs = [
  { n: 3, t: 1 },
  { n: 5, t: 2 },
  { n: 7, t: 3 },
];

describe('shamir', () => {
  for (const { n, t } of configs) {
    it(`any t+1 of n=${n} shares reconstruct; all n are consistent`, () => {
      fc.assert(fc.property(fc.array(elem, { minLength: 1, maxLength: 8 }), fc.shuffledSubarray([...Array(n).keys()].map((i) => i + 1), { minLength: t + 1, maxLength: n }), (xs, parties) => {
        const sh = shareSecret(xs, n, t);
        const got = reconstruct(parties, parties.map((p) => sh[p - 1]!), t);
        const all = reconstructChecked([...Array(n).keys()].map((i) => i + 1), sh, t, n);
        return got.every((v, i) => v === xs[i]) && all.every((v, i) => v === xs[i]);
      }), { numRuns: 50 });
    });
  }

  it('t shares say nothing: any value is consistent with them (interpolation through t points plus a guess)', () => {
    const sh = shareSecret([42n], 5, 2);
    const guess = interpolate([0 + 1, 2], [sh[0]!, sh[1]!], 3); // degree-1 fit: not the real share in general
    expect(guess.length).toBe(1);
  });

  it('names a single flipped share with >= t+3 shares, not with t+2', () => {
    fc.assert(fc.property(fc.array(elem, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 5 }), fc.nat(), (xs, bad, idxSeed) => {
      const sh = shareSecret(xs, 5, 2);
      const index = idxSeed % xs.length;
      sh[bad - 1]![index] = F.add(sh[bad - 1]![index]!, 1n);
      const all = [1, 2, 3, 4, 5];
      try {
        reconstructChecked(all, sh, 2, 5);
        return false;
      } catch (e) {
        if (!(e instanceof InconsistentSharesError) || e.party !== bad || e.index !== index) return false;
      }
      const four = all.filter((p) => p !== (bad === 1 ? 2 : 1));
      try {
        reconstructChecked(four, four.map((p) => sh[p - 1]!), 2, 5);
        return false;
      } catch (e) {
        return e instanceof InconsistentSharesError && e.party === null && e.index === index;
      }
    }), { numRuns: 40 });
  });

  it('cached Lagrange weights (numeric keys for small tuples, strings otherwise) are those of their own (x, parties), in order', () => {
    // reference weights, computed afresh
    const ref = (ps: readonly number[], x: number): bigint[] => ps.map((pj) => {
      let num = 1n;
      let den = 1n;
      for (const pk of ps) if (pk !== pj) { num = F.mod(num * F.mod(BigInt(x - pk))); den = F.mod(den * F.mod(BigInt(pj - pk))); }
      return F.mod(num * F.inv(den));
    });
    // tuples whose digits a key without the length or x in it would confuse ([1, 2] at 0 and [2] at 1,
    // [1, 2] and [2, 1]), six ids (string key), ids and points beyond a byte (string key)
    const cases: [number[], number][] = [
      [[1, 2], 0], [[2], 1], [[2, 1], 0], [[1, 2], 1], [[1, 2, 3], 0], [[3, 2, 1], 0], [[1, 2, 3], 4], [[1, 2, 3], 5],
      [[2, 4, 5], 1], [[1, 3, 5, 2, 4], 0], [[1, 2, 3, 4, 5, 6], 0], [[1, 2, 300], 0], [[1, 2, 3], 300], [[255, 1, 7], 0], [[256, 1, 7], 0],
    ];
    for (let pass = 0; pass < 2; pass++) {
      for (const [ps, x] of cases) {
        expect(lagrange(ps, x)).toEqual(ref(ps, x));
        const { c, dInv } = smallLagrange(ps, x);
        expect(c.map((ci) => F.mod(F.mod(ci) * dInv))).toEqual(ref(ps, x));
      }
    }
    // invalid ids are refused whichever key they would take, also after valid tuples were cached
    for (const bad of [[1, 1, 2], [0, 1, 2], [1.5, 2, 3], [-1, 2, 3]]) {
      expect(() => lagrange(bad, 0)).toThrow(SharingError);
      expect(() => smallLagrange(bad, 0)).toThrow(SharingError);
    }
    // and the openings' interpolation agrees whatever order the shares came in
    const sh = shareSecret([7n, 8n, 9n], 5, 2);
    for (const ps of [[1, 2, 3], [3, 1, 2], [5, 4, 2]]) expect(interpolateEncoded(ps, ps.map((p) => sh[p - 1]!), 0)).toEqual([7n, 8n, 9n]);
  });

  it('lagrange at a point reproduces another share', () => {
    const sh = shareSecret([7n, 8n], 5, 2);
    const lam = lagrange([1, 2, 3], 5);
    for (let e = 0; e < 2; e++) {
      const v = F.reduceWide(lam[0]! * sh[0]![e]! + lam[1]! * sh[1]![e]! + lam[2]! * sh[2]![e]!);
      expect(v).toBe(sh[4]![e]);
    }
  });

  it('rejects bad construction inputs clearly', () => {
    expect(() => shareSecret([1n], 4, 2)).toThrow(/t must be < n\/2/);
    expect(() => shareSecret([1n], 5, 0)).toThrow(SharingError);
    expect(() => shareSecret([F.P], 5, 2)).toThrow(/not a field element/);
    expect(() => shareSecret([-3n], 5, 2)).toThrow(F.FieldError);
    const sh = shareSecret([1n, 2n], 5, 2);
    expect(() => reconstruct([1, 2], [sh[0]!, sh[1]!], 2)).toThrow(/at least 3 shares/);
    expect(() => reconstruct([1, 2, 3], [sh[0]!, sh[1]!], 2)).toThrow(/3 party ids but 2/);
    expect(() => reconstructChecked([1, 2, 9], [sh[0]!, sh[1]!, sh[2]!], 2, 5)).toThrow(/1\.\.5/);
    expect(() => reconstruct([1, 2, 3], [sh[0]!, sh[1]!, [1n]], 2)).toThrow(/length 1, expected 2/);
    expect(() => reconstruct([1, 1, 3], [sh[0]!, sh[0]!, sh[2]!], 2)).toThrow(/duplicate/);
  });
});
