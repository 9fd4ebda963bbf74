// coversTarget (FOK, aon, min_fill_size): the oblivious "does crossing, non-self liquidity cover the
// target?" on both backends, with sums far beyond the comparison bound and with a side deeper than
// one chunk (small chunks stand in for 65,535 makers).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Sec } from '@tenebra/mpc';
import type { Arith } from '../src/backend';
import type { RestingOrder } from '../src/book';
import { coversTarget, SUM_CHUNK, type TakerView } from '../src/liquidity';
import { MpcBackend } from '../src/mpc-backend';
import { ArithRangeError, PlaintextBackend } from '../src/plaintext';
import { IdealJobContext } from './ideal-context';

const BITS = 32;
const MAX_UNITS = (1n << BigInt(BITS)) - 1n;

interface PlainMaker { price: bigint; qty: bigint; owner: bigint | null }
interface PlainTaker { side: 'buy' | 'sell'; price: bigint | null; owner: bigint | null }

/** What coversTarget must compute, in the clear. */
function expected(makers: readonly PlainMaker[], taker: PlainTaker, target: bigint) {
  const cross = makers.map((m) => (taker.price === null ? null : taker.side === 'buy' ? m.price <= taker.price : taker.price <= m.price));
  const self = makers.map((m) => (taker.owner === null || m.owner === null ? null : m.owner === taker.owner));
  const total = makers.reduce((s, m, i) => (cross[i] !== false && self[i] !== true ? s + m.qty : s), 0n);
  return { covers: total >= target ? 1n : 0n, cross: cross.map((c) => (c === null ? null : c ? 1n : 0n)), self: self.map((s) => (s === null ? null : s ? 1n : 0n)) };
}

async function viaBackend<S>(arith: Arith<S>, wrap: (v: bigint) => S, read: (s: S) => bigint, makers: readonly PlainMaker[], taker: PlainTaker, target: bigint, chunk: number) {
  const resting: RestingOrder<S>[] = makers.map((m, i) => ({
    orderId: `m${i}`, seq: BigInt(i + 1), side: taker.side === 'buy' ? 'sell' : 'buy', type: 'limit', tif: 'GTC', expiresAtNs: null,
    price: wrap(m.price), qty: wrap(m.qty), owner: m.owner === null ? null : wrap(m.owner),
  }));
  const view: TakerView<S> = { side: taker.side, price: taker.price === null ? null : wrap(taker.price), owner: taker.owner === null ? null : wrap(taker.owner) };
  const r = await coversTarget(arith, resting, view, wrap(target), chunk);
  const bit = (x: S | null): bigint | null => (x === null ? null : read(x));
  return { covers: read(r.covers), cross: r.bits.cross.map(bit), self: r.bits.self.map(bit) };
}

const plain = () => new PlaintextBackend({ compareBits: BITS });
const ideal = () => {
  const ctx = new IdealJobContext(BITS);
  return { arith: new MpcBackend(ctx), wrap: (v: bigint): Sec => ctx.fromShares([v]), read: (s: Sec) => IdealJobContext.value(s) };
};

const units = fc.oneof(fc.constantFrom(1n, MAX_UNITS, MAX_UNITS - 1n), fc.bigInt({ min: 1n, max: MAX_UNITS }), fc.bigInt({ min: 1n, max: 50n }));
const owner = fc.option(fc.bigInt({ min: 1n, max: 4n }), { nil: null });
const maker = fc.record({ price: fc.bigInt({ min: 90n, max: 110n }), qty: units, owner });
const taker = fc.record({ side: fc.constantFrom('buy' as const, 'sell' as const), price: fc.option(fc.bigInt({ min: 85n, max: 115n }), { nil: null }), owner });

describe('coversTarget', () => {
  it('equals the clear computation on both backends, with one chunk and with many', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(maker, { minLength: 1, maxLength: 12 }), taker, units, fc.constantFrom(SUM_CHUNK, 1, 2, 5), async (ms, tk, target, chunk) => {
        const want = expected(ms, tk, target);
        expect(await viaBackend(plain(), (v) => v, (v) => v, ms, tk, target, chunk)).toEqual(want);
        const i = ideal();
        expect(await viaBackend(i.arith, i.wrap, i.read, ms, tk, target, chunk)).toEqual(want);
      }),
      { numRuns: 150 },
    );
  });

  it('sums far beyond the comparison bound: 5,000 makers of 2^32 − 1 against a target they cover only together', async () => {
    const ms: PlainMaker[] = Array.from({ length: 5_000 }, () => ({ price: 100n, qty: MAX_UNITS, owner: null }));
    const tk: PlainTaker = { side: 'buy', price: 100n, owner: null };
    // the sum (about 2^44) is compared once, inside leWide's 2^48
    const all = await viaBackend(plain(), (v) => v, (v) => v, ms, tk, MAX_UNITS, SUM_CHUNK);
    expect(all.covers).toBe(1n);
    const i = ideal();
    expect((await viaBackend(i.arith, i.wrap, i.read, ms, tk, MAX_UNITS, SUM_CHUNK)).covers).toBe(1n);
    // a chunk of more than 2^16 − 1 such makers would overflow the wide bound: the backend says so
    await expect(viaBackend(plain(), (v) => v, (v) => v, ms.slice(0, 3), tk, MAX_UNITS, 3)).resolves.toMatchObject({ covers: 1n });
    const deep = Array.from({ length: 70_000 }, () => ({ price: 100n, qty: MAX_UNITS, owner: null }));
    await expect(viaBackend(plain(), (v) => v, (v) => v, deep, tk, MAX_UNITS, 70_000)).rejects.toThrow(ArithRangeError);
    // chunked at the default size, the same side is fine (two chunks, each capped at the target)
    expect((await viaBackend(plain(), (v) => v, (v) => v, deep, tk, MAX_UNITS, SUM_CHUNK)).covers).toBe(1n);
  });
});
