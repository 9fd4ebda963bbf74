import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import * as F from '../src/field';
import { mulEncoded, shareEncoded, sqrtEncoded } from '../src/kernel';
import { interpolate } from '../src/shamir';
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
