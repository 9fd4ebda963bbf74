// Property tests against plaintext for every operation, over the simulated network (n=5, t=2).
import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import * as F from '../src/field';
import { SimNetwork } from '@tenebra/transport';
import { cluster, deal, fillReserve, runAll, signed, type Cluster } from './helpers';
import { createParty } from '../src/runtime';
import { shareSecret, reconstruct } from '../src/shamir';
import { composeR, costOf, PREPROCESSING_TABLE } from '../src/protocols';
import { NIBBLE_VALUE, NIBBLE_WIDTH } from '../src/reserve';
import { LEX4, PROD4, closureItemOf } from '../src/closure';

const MAX = (1n << 48n) - 1n;
const edge = fc.constantFrom(0n, 1n, -1n, MAX, -MAX, MAX - 1n, -MAX + 1n, 1n << 47n, -(1n << 47n));
const val = fc.oneof(edge, fc.bigInt({ min: -MAX, max: MAX }), fc.bigInt({ min: -20n, max: 20n }));
/** Pairs with a bias to equal operands. */
const pair = fc.oneof(fc.tuple(val, val), val.map((v) => [v, v] as [bigint, bigint]));
const pairs = fc.array(pair, { minLength: 1, maxLength: 5 });

let c: Cluster;
let jobNo = 0;

async function run<T>(fn: Parameters<typeof runAll<T>>[2]): Promise<T[]> {
  const id = `prop-${jobNo++}`;
  return c.net.settle(Promise.all(runAll(c.parties, id, fn)));
}

beforeAll(async () => {
  c = await cluster({ seed: 11, prep: { targetTriples: 2000, targetBits: 4000, batch: 200 } });
});

describe('protocols vs plaintext (n=5, t=2, committee preprocessing)', () => {
  it('every operation, random vectors with edge values', async () => {
    await fc.assert(
      fc.asyncProperty(pairs, fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }), async (ps, bits) => {
        const xs = ps.map((p) => p[0]);
        const ys = ps.map((p) => p[1]);
        const cs = xs.map((_, i) => (bits[i % bits.length] ? 1n : 0n));
        const k = 12345n;
        const inputs = deal(5, 2, xs, ys, cs);
        const outs = await run(async (ctx, id) => {
          const [xsh, ysh, csh] = inputs[id - 1]!;
          const x = ctx.fromShares(xsh!);
          const y = ctx.fromShares(ysh!);
          const cc = ctx.fromShares(csh!);
          const all = await Promise.all([
            ctx.add(x, y), ctx.sub(x, y), ctx.neg(x), ctx.addPublic(x, k), ctx.mulPublic(x, -3n),
            ctx.mul(x, y), ctx.lt(x, y), ctx.le(x, y), ctx.eq(x, y), ctx.min(x, y), ctx.max(x, y), ctx.select(cc, x, y),
            ctx.ltz(x),
          ]);
          return ctx.open(ctx.concat(all));
        });
        const m = xs.length;
        const b = (v: boolean): bigint => (v ? 1n : 0n);
        const expected = [
          ...xs.map((x, i) => x + ys[i]!), ...xs.map((x, i) => x - ys[i]!), ...xs.map((x) => -x), ...xs.map((x) => x + k), ...xs.map((x) => -3n * x),
          ...xs.map((x, i) => x * ys[i]!), ...xs.map((x, i) => b(x < ys[i]!)), ...xs.map((x, i) => b(x <= ys[i]!)), ...xs.map((x, i) => b(x === ys[i]!)),
          ...xs.map((x, i) => (x < ys[i]! ? x : ys[i]!)), ...xs.map((x, i) => (x > ys[i]! ? x : ys[i]!)), ...xs.map((x, i) => (cs[i] ? x : ys[i]!)),
          ...xs.map((x) => b(x < 0n)),
        ];
        for (const o of outs) {
          expect(o.length).toBe(13 * m);
          expect(signed(o)).toEqual(expected);
        }
      }),
      { numRuns: 15 },
    );
  });

  it('openTo reaches only the recipient; mixed with open-to-all in one round', async () => {
    const xs = [3n, -4n, MAX];
    const inputs = deal(5, 2, xs);
    const outs = await run(async (ctx, id) => {
      const x = ctx.fromShares(inputs[id - 1]![0]!);
      const [to3, all] = await Promise.all([ctx.openTo(3, x), ctx.open(ctx.addPublic(x, 1n))]);
      return { to3, all };
    });
    outs.forEach((o, i) => {
      expect(o.to3 === null ? null : signed(o.to3)).toEqual(i === 2 ? xs : null);
      expect(signed(o.all)).toEqual(xs.map((x) => x + 1n));
    });
  });

  it('concurrent tasks share rounds: 20 independent comparisons cost the rounds of one', async () => {
    const xs = Array.from({ length: 20 }, (_, i) => BigInt(i * 7 - 60));
    const ys = Array.from({ length: 20 }, (_, i) => BigInt(60 - i * 5));
    const inputs = deal(5, 2, xs, ys);
    const id = `prop-${jobNo}`;
    const outs = await run(async (ctx, pid) => {
      const [xsh, ysh] = inputs[pid - 1]!;
      const tasks = xsh!.map(async (_, i) => {
        const l = await ctx.lt(ctx.fromShares([xsh![i]!]), ctx.fromShares([ysh![i]!]));
        return (await ctx.open(l))[0]!;
      });
      return Promise.all(tasks);
    });
    for (const o of outs) expect(o).toEqual(xs.map((x, i) => (x < ys[i]! ? 1n : 0n)));
    // every party ran the 20 comparisons and their openings in the rounds of one
    const ends = c.logs.filter((l) => (l as { ev?: string; job?: string }).ev === 'job-end' && (l as { job?: string }).job === id) as { rounds: number }[];
    expect(ends.length).toBe(5);
    for (const e of ends) expect(e.rounds).toBe(costOf('lt', 48).rounds + 1);
  });

  it('a comparison with a wider bound: correct beyond 2^L, same rounds, more random bits; a bound the field cannot hold is refused', async () => {
    // 55 bits: 14 blocks, the widest that fits at the default kappa = 64 (n = 5, t = 2; field.ts)
    const W = 55;
    const WMAX = (1n << BigInt(W)) - 1n;
    const xs = [WMAX, -WMAX, 1n << 54n, (1n << 48n) + 5n, 7n, -(1n << 52n), 0n];
    const ys = [WMAX - 1n, WMAX, 1n << 54n, (1n << 48n) + 4n, 1n << 53n, -(1n << 52n) + 1n, -1n];
    const inputs = deal(5, 2, xs, ys);
    const id = `prop-${jobNo}`;
    const outs = await run(async (ctx, pid) => {
      const [xsh, ysh] = inputs[pid - 1]!;
      const x = ctx.fromShares(xsh!);
      const y = ctx.fromShares(ysh!);
      const [l, e] = await Promise.all([ctx.lt(x, y, W), ctx.le(x, y, W)]);
      return ctx.open(ctx.concat([l, e]));
    });
    const b = (v: boolean): bigint => (v ? 1n : 0n);
    for (const o of outs) expect(o).toEqual([...xs.map((x, i) => b(x < ys[i]!)), ...xs.map((x, i) => b(x <= ys[i]!))]);
    const ends = c.logs.filter((l) => (l as { ev?: string; job?: string }).ev === 'job-end' && (l as { job?: string }).job === id) as { rounds: number }[];
    expect(ends.map((e) => e.rounds)).toEqual(Array(5).fill(costOf('lt', 48).rounds + 1));
    expect(costOf('lt', W).rounds).toBe(costOf('lt', 48).rounds);
    expect(costOf('lt', W).bits).toBeGreaterThan(costOf('lt', 48).bits);
    // K + kappa + nu + 1 > 126 at L = 56 (n = 5, t = 2, kappa = 64); 64 fits only at a smaller kappa (below)
    for (const bad of [56, 64, 0, 2.5]) {
      const fails = await run(async (ctx, pid) => {
        const [xsh, ysh] = inputs[pid - 1]!;
        try {
          await ctx.le(ctx.fromShares(xsh!), ctx.fromShares(ysh!), bad);
          return 'compared';
        } catch (err) {
          return `${(err as Error).name}: ${(err as Error).message}`;
        }
      });
      for (const f of fails) expect(f).toMatch(/^RangeError: le: /);
    }
  });

  it('64 bits at kappa = 40: 17 blocks, a tree of three levels (one round more), still exact at the edges', async () => {
    const net = new SimNetwork({ n: 5, seed: 64, link: { latencyMs: 1 } });
    const logs: object[] = [];
    const parties = [1, 2, 3, 4, 5].map((i) => createParty({
      n: 5, t: 2, k: 40, transport: net.transport(i), log: (e) => logs.push(e),
      preprocessing: { mode: 'dealer', targetTriples: 10, targetBits: 400, batch: 64 },
    }));
    await net.settle(Promise.all(parties.map((p) => p.start())));
    await fillReserve({ net, parties, logs }, parties, 10, 200);
    const M64 = (1n << 63n) - 1n;
    const xs64 = [M64, -M64, 1n << 62n, -5n];
    const ys64 = [M64 - 1n, M64, 1n << 62n, 5n];
    const in64 = deal(5, 2, xs64, ys64);
    const outs64 = await net.settle(Promise.all(parties.map((p) => p.runJob('w64', async (ctx) => {
      const [xsh, ysh] = in64[p.id - 1]!;
      return ctx.open(await ctx.le(ctx.fromShares(xsh!), ctx.fromShares(ysh!), 64));
    }))));
    const b = (v: boolean): bigint => (v ? 1n : 0n);
    for (const o of outs64) expect(o).toEqual(xs64.map((x, i) => b(x <= ys64[i]!)));
    const ends64 = logs.filter((l) => (l as { ev?: string; job?: string }).ev === 'job-end' && (l as { job?: string }).job === 'w64') as { rounds: number }[];
    expect(ends64.map((e) => e.rounds)).toEqual(Array(5).fill(costOf('lt', 64).rounds + 1));
    expect(costOf('lt', 64).rounds).toBe(costOf('lt', 48).rounds + 1);
  });

  it('ltz at a narrow width: exact at the edges of |a| < 2^width, ceil(width / 4) nibbles; randomMultiple opens zero iff zero, no nibbles', async () => {
    type Internal = { prep: { reserve: { cursor: Record<string, number> } } };
    const cursor = (): Record<string, number> => ({ ...(c.parties[0] as unknown as Internal).prep.reserve.cursor });
    // width 20: |a| < 2^20 (differences of prices in [0, 2^20)); 5 blocks, M = 20
    const W = 20;
    const E = (1n << BigInt(W)) - 1n;
    const as = [E, -E, 0n, -1n, 1n, 1n << 19n, -(1n << 19n), -5n];
    const zs = [0n, 1n, -1n, E, -E, 0n, 123456789n];
    const inputs = deal(5, 2, as, zs);
    const before = cursor();
    const outs = await run(async (ctx, pid) => {
      const [ash, zsh] = inputs[pid - 1]!;
      const [l, r] = await Promise.all([ctx.ltz(ctx.fromShares(ash!), W), ctx.randomMultiple(ctx.fromShares(zsh!))]);
      return { lt: await ctx.open(l), rm: await ctx.open(r), used: ctx.consumed() };
    });
    const after = cursor();
    for (const o of outs) expect(o.used).toEqual({ triples: zs.length, lex4: after.lex4! - before.lex4!, prod4: 0, nibbles: as.length * Math.ceil(W / 4), rounds: costOf('lt', W - 1).rounds + 2 }); // the comparison (randomMultiple's round overlaps it), then two openings
    expect(after.nibbles! - before.nibbles!).toBe(as.length * Math.ceil(W / 4));
    expect(after.triples! - before.triples!).toBe(zs.length);
    for (const o of outs) {
      expect(o.lt).toEqual(as.map((a) => (a < 0n ? 1n : 0n)));
      expect(o.rm.map((v) => v === 0n)).toEqual(zs.map((z) => z === 0n));
    }
    // the opened multiple is the same at every party, and not the value itself (a fresh rho each)
    expect(new Set(outs.map((o) => o.rm.join(','))).size).toBe(1);
    expect(outs[0]!.rm[1]).not.toBe(1n);
    expect(costOf('randomMultiple', 48)).toMatchObject({ rounds: 1, triples: 1, nibbles: 0, bits: 0 });
    // a value beyond the width gives a wrong answer silently (the caller's bound): 2^20 >= 0, yet not 0
    const wrong = deal(5, 2, [1n << 20n]);
    const got = await run(async (ctx, pid) => ctx.open(await ctx.ltz(ctx.fromShares(wrong[pid - 1]![0]!), W)));
    for (const g of got) expect(g).not.toEqual([0n]);
  });

  it('declares its preprocessing', () => {
    // 13 blocks: groups of 4, 4, 4 (7 factors opened each) and a pass-through block, then one of 4
    // without eq (6); equality: 4 + 4 + 4 factors, then 4
    expect(PREPROCESSING_TABLE.lt).toMatchObject({ rounds: 3, triples: 0, lex4: 4, prod4: 0, nibbles: 13, bits: 52, masks: 1, elementsPerPeer: 28 });
    expect(PREPROCESSING_TABLE.eq).toMatchObject({ rounds: 3, triples: 0, lex4: 0, prod4: 4, nibbles: 13, elementsPerPeer: 17 });
    expect(PREPROCESSING_TABLE.mul).toMatchObject({ rounds: 1, triples: 1, nibbles: 0 });
  });

  it('committee-made triples, closure items and nibbles are correct sharings', async () => {
    await c.net.settle(Promise.all(c.parties.map((p) => p.fill())));
    type Internal = { prep: { reserve: { range(k: string, f: number, n: number): bigint[]; cursor: Record<string, number> } } };
    const rs = c.parties.map((p) => (p as unknown as Internal).prep.reserve);
    const cur = rs[0]!.cursor;
    const open = (v: bigint[][]): bigint[] => reconstruct([1, 2, 3, 4, 5], v, 2);
    const tr = open(rs.map((r) => r.range('triples', cur.triples!, 50)));
    for (let i = 0; i < 50; i++) expect(F.mul(tr[3 * i]!, tr[3 * i + 1]!)).toBe(tr[3 * i + 2]);
    for (const [kind, sh] of [['lex4', LEX4], ['prod4', PROD4]] as const) {
      const it = open(rs.map((r) => r.range(kind, cur[kind]!, 20)));
      for (let i = 0; i < 20; i++) {
        const item = it.slice(i * sh.width, (i + 1) * sh.width);
        expect(item).toEqual(closureItemOf(sh, item.slice(0, sh.factors)));
      }
    }
    const e = open(rs.map((r) => r.range('nibbles', cur.nibbles!, 20)));
    for (let u = 0; u < 20; u++) {
      const gt = e.slice(u * 16, u * 16 + 15);
      const v = Number(e[u * 16 + 15]);
      expect(v).toBeLessThan(16);
      expect(gt).toEqual(Array.from({ length: 15 }, (_, j) => (v > j ? 1n : 0n)));
    }
    void shareSecret;
  });
});

describe('composeR (Horner by 127-bit rotations) against BigInt arithmetic', () => {
  const P = F.P;
  const elems = fc.oneof(
    fc.constantFrom(0n, 1n, 15n, 16n, P - 1n, P - 2n, P - 16n, (P - 1n) / 2n, 1n << 126n, (1n << 126n) - 1n, (1n << 123n), (1n << 123n) - 1n, 0xfffffffn, (1n << 96n) - 1n, 1n << 96n, (1n << 64n) - 1n, 1n << 75n),
    fc.bigInt({ min: 0n, max: P - 1n }),
  );
  it('equals sum_j 16^j v_j mod p for every block count up to 32 and element index', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 32 }), fc.integer({ min: 1, max: 3 }), fc.array(elems, { minLength: 96, maxLength: 96 }), (blocks, m, pool) => {
      // m elements of `blocks` blocks, each block NIBBLE_WIDTH elements with its value share at NIBBLE_VALUE
      const vals: bigint[] = new Array(m * blocks * NIBBLE_WIDTH).fill(0n);
      const v = (e: number, j: number): bigint => pool[(e * blocks + j) % pool.length]!;
      for (let e = 0; e < m; e++) for (let j = 0; j < blocks; j++) vals[(e * blocks + j) * NIBBLE_WIDTH + NIBBLE_VALUE] = v(e, j);
      const bytes = F.encodeFieldVector(vals);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let e = 0; e < m; e++) {
        let want = 0n;
        for (let j = blocks - 1; j >= 0; j--) want = F.mod(want * 16n + v(e, j));
        expect(composeR(view, e, blocks)).toBe(want);
      }
    }), { numRuns: 300 });
  });
  it('every block all ones below p (the carries at their longest) and a block share >= p refused', () => {
    for (const blocks of [1, 2, 13, 16, 31]) {
      const vals: bigint[] = new Array(blocks * NIBBLE_WIDTH).fill(0n);
      for (let j = 0; j < blocks; j++) vals[j * NIBBLE_WIDTH + NIBBLE_VALUE] = P - 1n;
      const bytes = F.encodeFieldVector(vals);
      let want = 0n;
      for (let j = 0; j < blocks; j++) want = F.mod(want * 16n + P - 1n);
      expect(composeR(new DataView(bytes.buffer), 0, blocks)).toBe(want);
      bytes.fill(0xff, NIBBLE_VALUE * 16, NIBBLE_VALUE * 16 + 16);
      bytes[NIBBLE_VALUE * 16] = 0x7f; // p itself
      expect(() => composeR(new DataView(bytes.buffer), 0, blocks)).toThrow(F.FieldError);
    }
  });
});
