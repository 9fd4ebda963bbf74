// Kernel outputs of up to 2 KB are carved out of shared buffers (kernel.ts, output()): each must
// keep its own values while later outputs fill the same and further buffers, start 16-byte aligned
// (32-bit views of encoded vectors need 4), and still be trusted as canonical without a scan, while
// a vector from elsewhere with an element >= p is still refused.
import { describe, expect, it } from 'vitest';
import * as F from '../src/field';
import { addEncoded, lincombEncoded, lincombSmallEncoded, mulEncoded } from '../src/kernel';
import { lagrange } from '../src/shamir';

describe('kernel outputs', () => {
  it('small outputs keep their values across many later outputs, aligned; large ones too', () => {
    const kept: { out: Uint8Array; want: bigint[] }[] = [];
    for (let i = 0; i < 3000; i++) {
      const m = 1 + (i % 150); // 16 .. 2400 bytes: carved and own buffers both
      const xs = Array.from({ length: m }, (_, e) => BigInt(i * 1000 + e) * 0x1234567n);
      const ys = Array.from({ length: m }, (_, e) => F.P - 1n - BigInt(e + i));
      const out = i % 2 === 0 ? addEncoded(F.encodeFieldVector(xs), F.encodeFieldVector(ys)) : mulEncoded(F.encodeFieldVector(xs), F.encodeFieldVector(ys));
      expect(out.byteOffset % 16).toBe(0);
      expect(out.length).toBe(m * 16);
      if (i % 7 === 0) kept.push({ out, want: xs.map((x, e) => (i % 2 === 0 ? F.add(x, ys[e]!) : F.mul(x, ys[e]!))) });
    }
    for (const { out, want } of kept) expect(F.decodeFieldVector(out)).toEqual(want);
  });

  it('a carved output is an input without a scan; a foreign vector with an element >= p is refused', () => {
    const a = addEncoded(F.encodeFieldVector([1n, 2n]), F.encodeFieldVector([3n, 4n]));
    const w = lagrange([1, 2, 3], 4); // 1, -3, 3: the small-weight path
    expect(F.decodeFieldVector(lincombEncoded([a, a, a], w))).toEqual([4n, 6n]);
    expect(F.decodeFieldVector(lincombSmallEncoded([a, a], [2, -1]))).toEqual([4n, 6n]);
    expect(F.decodeFieldVector(lincombSmallEncoded([a, a], [-5, 1], F.inv(2n)))).toEqual([F.mod(-8n), F.mod(-12n)]);
    const bad = new Uint8Array(32);
    bad.fill(0xff, 16, 32);
    expect(() => lincombEncoded([a, bad, a], w)).toThrow(F.FieldError);
  });
});
