import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import * as F from '../src/field';

const elem = fc.bigInt({ min: 0n, max: F.P - 1n });

describe('field', () => {
  it('reduce matches % on products', () => {
    fc.assert(fc.property(elem, elem, (a, b) => F.mul(a, b) === (a * b) % F.P));
    expect(F.mul(F.P - 1n, F.P - 1n)).toBe(1n);
  });
  it('add/sub/neg stay in range and invert', () => {
    fc.assert(fc.property(elem, elem, (a, b) => {
      const s = F.add(a, b);
      return F.isElement(s) && F.sub(s, b) === a && F.add(a, F.neg(a)) === 0n;
    }));
  });
  it('inv, invAll and pow agree with Fermat', () => {
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: F.P - 1n }), (a) => F.mul(a, F.inv(a)) === 1n && F.pow(a, F.P - 2n) === F.inv(a)));
    const xs = [1n, 2n, 3n, F.P - 1n, 123456789n];
    expect(F.invAll(xs)).toEqual(xs.map(F.inv));
    expect(() => F.inv(0n)).toThrow(F.FieldError);
    expect(() => F.invAll([1n, 0n])).toThrow(/index 1/);
  });
  it('sqrt gives a root of squares and rejects non-residues', () => {
    fc.assert(fc.property(elem, (a) => {
      const r = F.sqrt(F.mul(a, a));
      return r === a || r === F.neg(a);
    }));
    // -1 is a non-residue since p = 3 mod 4
    expect(() => F.sqrt(F.P - 1n)).toThrow(/non-residue/);
  });
  it('signed conversion round-trips and rejects out of range', () => {
    fc.assert(fc.property(fc.bigInt({ min: -(F.P >> 1n), max: F.P >> 1n }), (x) => F.toSigned(F.fromSigned(x)) === x));
    expect(() => F.fromSigned(F.P)).toThrow(F.FieldError);
  });
  it('encodes 16 bytes per element and validates', () => {
    fc.assert(fc.property(fc.array(elem, { maxLength: 20 }), (xs) => {
      const b = F.encodeFieldVector(xs);
      return b.length === 16 * xs.length && F.decodeFieldVector(b).every((x, i) => x === xs[i]);
    }));
    expect(() => F.encodeFieldVector([F.P])).toThrow(/index 0/);
    expect(() => F.encodeFieldVector([-1n])).toThrow(F.FieldError);
    expect(() => F.decodeFieldVector(new Uint8Array(15))).toThrow(/multiple of 16/);
    expect(() => F.decodeFieldVector(new Uint8Array(16).fill(0xff))).toThrow(F.FieldError);
  });
  it('states the comparison bound: 2^127-1 fits, 2^89-1 would not', () => {
    expect(F.DEFAULT_KAPPA).toBe(64);
    const bound = F.comparisonBound(F.DEFAULT_L, F.DEFAULT_KAPPA, 5, 2);
    expect(bound).toBe(122);
    expect(bound).toBeLessThanOrEqual(126);
    expect(F.comparisonBound(32, F.DEFAULT_KAPPA, 5, 2)).toBe(106);
    expect(F.comparisonBound(32, F.DEFAULT_KAPPA, 5, 2)).toBeGreaterThan(88);
    expect(() => F.assertComparisonFits(48, 40, 5, 2)).not.toThrow();
    expect(() => F.assertComparisonFits(80, 40, 5, 2)).toThrow(/does not fit/);
  });
  it('kappa = 64 fits the committee sizes the README names at both widths (book values, liquidity sums), and refuses what no longer fits', () => {
    for (const [n, t] of [[3, 1], [5, 2], [7, 3], [7, 2]]) {
      for (const L of [32, 48]) expect(() => F.assertComparisonFits(L, 64, n!, t!)).not.toThrow();
    }
    // n=5, t=2: L up to 55 (was 79 at kappa 40)
    expect(() => F.assertComparisonFits(55, 64, 5, 2)).not.toThrow();
    expect(() => F.assertComparisonFits(56, 64, 5, 2)).toThrow(/comparison does not fit: K \+ kappa \+ nu \+ 1 = 130 bits > 126 \(L=56, kappa=64, n=5, t=2\)/);
    // C(11, 5) = 462 PRSS subsets: fits at kappa 40, not at 64
    expect(() => F.assertComparisonFits(48, 40, 11, 5)).not.toThrow();
    expect(() => F.assertComparisonFits(48, 64, 11, 5)).toThrow(/127 bits > 126/);
  });
});
