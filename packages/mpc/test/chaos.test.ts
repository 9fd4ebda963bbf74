// Seeded chaos on the simulated network: kill 2 parties at random virtual times during a batch of
// mixed operations (and during preprocessing batches); kill 3 and see the committee stall, then
// resume after a restart from state; recover two parties whose memory is gone.
import { describe, expect, it } from 'vitest';
import { Prng, SimNetwork } from '@tenebra/transport';
import type { JobContext } from '../src/api';
import { createParty, type Party } from '../src/runtime';
import { cluster, deal, fillReserve, signed } from './helpers';

const MAX = (1n << 48n) - 1n;

function inputsFor(seed: number, m: number): { xs: bigint[]; ys: bigint[] } {
  const r = new Prng(seed * 7919 + 1);
  const v = (): bigint => {
    const k = r.nextFloat();
    if (k < 0.1) return 0n;
    if (k < 0.2) return r.nextFloat() < 0.5 ? MAX : -MAX;
    return BigInt(Math.floor((r.nextFloat() - 0.5) * 2 ** 40));
  };
  const xs = Array.from({ length: m }, v);
  const ys = xs.map((x, i) => (i % 3 === 0 ? x : v()));
  return { xs, ys };
}

/** A job of mixed operations in several dependent rounds; returns opened results. */
async function mixed(ctx: JobContext, xsh: bigint[], ysh: bigint[]): Promise<bigint[]> {
  const x = ctx.fromShares(xsh);
  const y = ctx.fromShares(ysh);
  const [p, l, e] = await Promise.all([ctx.mul(x, y), ctx.lt(x, y), ctx.eq(x, y)]);
  const mn = await ctx.select(l, x, y);
  const l2 = await ctx.lt(y, mn); // never true
  const both = await ctx.mul(l, e); // never true
  return ctx.open(ctx.concat([p, l, e, mn, l2, both]));
}

function expected(xs: bigint[], ys: bigint[]): bigint[] {
  const b = (v: boolean): bigint => (v ? 1n : 0n);
  return [
    ...xs.map((x, i) => x * ys[i]!), ...xs.map((x, i) => b(x < ys[i]!)), ...xs.map((x, i) => b(x === ys[i]!)),
    ...xs.map((x, i) => (x < ys[i]! ? x : ys[i]!)), ...xs.map(() => 0n), ...xs.map(() => 0n),
  ];
}

describe('chaos: any two parties die at any point', () => {
  for (const seed of Array.from({ length: 12 }, (_, i) => i + 1)) {
    it(`seed ${seed}: the other three finish with correct outputs`, async () => {
      const c = await cluster({ seed, prep: { targetTriples: 400, targetBits: 1200, batch: 40 } });
      const rng = new Prng(seed);
      const { xs, ys } = inputsFor(seed, 4);
      const inputs = deal(5, 2, xs, ys);
      // A first job consumes part of the reserve so background batches start right after it.
      const warm = c.parties.map((p) => p.runJob('warm', async (ctx) => ctx.open(await ctx.mul(ctx.fromShares(inputs[p.id - 1]![0]!), ctx.fromShares(inputs[p.id - 1]![1]!)))));
      await c.net.settle(Promise.all(warm));
      // a background preprocessing batch is in flight when the job starts, so kills hit it too
      expect(c.parties.every((p) => p.status().preprocessing.inFlight !== undefined)).toBe(true);
      const victims: number[] = [];
      while (victims.length < 2) {
        const v = 1 + Math.floor(rng.nextFloat() * 5);
        if (!victims.includes(v)) victims.push(v);
      }
      const start = c.net.clock.now();
      for (const v of victims) {
        const at = rng.nextFloat() * 14; // the job takes ~12 virtual ms; some kills land in batches
        c.net.clock.setTimeout(() => c.net.crash(v), at);
      }
      const survivors = c.parties.filter((p) => !victims.includes(p.id));
      const jobs = c.parties.map((p) => p.runJob('mixed', (ctx) => mixed(ctx, inputs[p.id - 1]![0]!, inputs[p.id - 1]![1]!)));
      for (const j of jobs) j.catch(() => undefined);
      let outs: bigint[][];
      try {
        outs = await c.net.settle(Promise.all(survivors.map((p) => jobs[p.id - 1]!)), { maxTimeMs: 60_000 });
      } catch (e) {
        console.log(victims, JSON.stringify(c.logs.filter((l) => !JSON.stringify(l).includes('job-')).slice(-80)));
        console.log(survivors.map((p) => JSON.stringify(p.status())));
        throw e;
      }
      for (const o of outs) expect(signed(o)).toEqual(expected(xs, ys));
      expect(c.net.clock.now() - start).toBeLessThan(60_000);
      // and the survivors keep going: a second job on the reserve
      const more = survivors.map((p) => p.runJob('after', async (ctx) => ctx.open(await ctx.lt(ctx.fromShares(inputs[p.id - 1]![1]!), ctx.fromShares(inputs[p.id - 1]![0]!)))));
      const outs2 = await c.net.settle(Promise.all(more), { maxTimeMs: 60_000 });
      for (const o of outs2) expect(o).toEqual(xs.map((x, i) => (ys[i]! < x ? 1n : 0n)));
      // the survivors agree on what was consumed and on the batch log
      const st = survivors.map((p) => p.status());
      for (const s of st) {
        expect(s.reserve.cursor).toEqual(st[0]!.reserve.cursor);
        expect(s.preprocessing.committedBatches).toBe(st[0]!.preprocessing.committedBatches);
      }
    });
  }
});

describe('chaos: three die, the committee stalls, then resumes', () => {
  for (const seed of [21, 22, 23]) {
    it(`seed ${seed}: quorum lost, restart from state, recover two from nothing`, async () => {
      const c = await cluster({ seed, prep: { targetTriples: 400, targetBits: 600, batch: 40 } });
      const rng = new Prng(seed);
      const { xs, ys } = inputsFor(seed, 3);
      const inputs = deal(5, 2, xs, ys);
      const keys = c.parties.map((p) => p.exportKeys());
      // J1 stores x and y.
      await c.net.settle(Promise.all(c.parties.map((p) => p.runJob('J1', async (ctx) => {
        ctx.save('x', ctx.fromShares(inputs[p.id - 1]![0]!));
        ctx.save('y', ctx.fromShares(inputs[p.id - 1]![1]!));
        ctx.savePublic('meta', '{"count":3}');
      }))));
      await fillReserve(c);
      const states = c.parties.map((p) => p.exportState());
      const order = [1, 2, 3, 4, 5].sort(() => rng.nextFloat() - 0.5);
      const [third, r1, r2, s1, s2] = order as [number, number, number, number, number];
      const lost: number[] = [];
      for (const p of c.parties) p.on('quorum-lost', () => lost.push(p.id));
      const J2 = async (ctx: JobContext): Promise<bigint[]> => {
        const x = ctx.load('x')!;
        const y = ctx.load('y')!;
        const l = await ctx.lt(x, y);
        const m = await ctx.select(l, y, x); // max
        const m2 = await ctx.mul(m, l);
        ctx.save('max', m);
        return ctx.open(ctx.concat([l, m2]));
      };
      const jobs = c.parties.map((p) => p.runJob('J2', J2));
      for (const j of jobs) j.catch(() => undefined);
      // kill three during J2
      for (const v of [third, r1, r2]) c.net.clock.setTimeout(() => c.net.crash(v), 1 + rng.nextFloat() * 6);
      await c.net.run({ maxTimeMs: 5_000 });
      let settled = false;
      void Promise.all([jobs[s1 - 1], jobs[s2 - 1]]).then(() => (settled = true), () => (settled = true));
      await c.net.run({ maxTimeMs: 5_000 });
      expect(settled).toBe(false); // nothing completes with two alive
      expect(lost.sort()).toEqual([s1, s2].sort());

      // restart the third from its state at the last job boundary: J2 finishes with correct results
      const t3 = createParty({ n: 5, t: 2, transport: c.net.restart(third), state: states[third - 1], preprocessing: { targetTriples: 400, targetBits: 600, batch: 40 } });
      await c.net.settle(t3.start());
      const j3 = t3.runJob('J2', J2);
      const outs = await c.net.settle(Promise.all([jobs[s1 - 1]!, jobs[s2 - 1]!, j3]), { maxTimeMs: 60_000 });
      const want = [...xs.map((x, i) => (x < ys[i]! ? 1n : 0n)), ...xs.map((x, i) => (x < ys[i]! ? ys[i]! : 0n))];
      for (const o of outs) expect(signed(o)).toEqual(want);

      // restart the other two with memory gone: recovery from the three live helpers
      const rec = [r1, r2].map((i) => createParty({ n: 5, t: 2, transport: c.net.restart(i), keys: keys[i - 1], preprocessing: { targetTriples: 400, targetBits: 600, batch: 40 } }));
      await c.net.settle(Promise.all(rec.map((p) => p.recover())), { maxTimeMs: 60_000 });
      for (const p of rec) expect(p.lastFinishedJob()).toBe('J2');

      // kill the original survivors; open with the recovered parties included
      c.net.crash(s1);
      c.net.crash(s2);
      const team: Party[] = [t3, ...rec];
      const J3 = async (ctx: JobContext): Promise<{ v: bigint[]; meta: string | undefined }> => {
        const x = ctx.load('x')!;
        const mx = ctx.load('max')!;
        const prod = await ctx.mul(x, mx); // uses recovered triples
        return { v: await ctx.open(ctx.concat([x, mx, prod])), meta: ctx.loadPublic('meta') };
      };
      const outs3 = await c.net.settle(Promise.all(team.map((p) => p.runJob('J3', J3))), { maxTimeMs: 60_000 });
      const mx = xs.map((x, i) => (x < ys[i]! ? ys[i]! : x));
      for (const o of outs3) {
        expect(signed(o.v)).toEqual([...xs, ...mx, ...xs.map((x, i) => x * mx[i]!)]);
        expect(o.meta).toBe('{"count":3}');
      }
    });
  }
});

describe('preprocessing exhausted with three alive', () => {
  it('throws PreprocessingExhaustedError at every live party and leaves the store unchanged', async () => {
    const c = await cluster({ seed: 31, prep: { targetTriples: 100, targetBits: 200, batch: 20 } });
    const inputs = deal(5, 2, [1n, 2n], [3n, 4n]);
    await c.net.settle(Promise.all(c.parties.map((p) => p.runJob('init', async (ctx) => ctx.save('x', ctx.fromShares(inputs[p.id - 1]![0]!))))));
    await fillReserve(c);
    c.net.crash(4);
    c.net.crash(5);
    const live = c.parties.slice(0, 3);
    const big = live.map((p) => p.runJob('big', async (ctx) => {
      ctx.save('x', ctx.fromShares(inputs[p.id - 1]![1]!));
      ctx.savePublic('touched', 'true');
      const x = ctx.load('x')!;
      let acc = x;
      for (let i = 0; i < 10; i++) acc = ctx.concat([acc, acc]); // 2048 elements
      return ctx.open(await ctx.lt(acc, acc));
    }));
    const res = await c.net.settle(Promise.allSettled(big), { maxTimeMs: 60_000 });
    for (const r of res) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toMatchObject({ name: 'PreprocessingExhaustedError' });
    }
    const after = await c.net.settle(Promise.all(live.map((p) => p.runJob('check', async (ctx) => ({ x: await ctx.open(ctx.load('x')!), touched: ctx.loadPublic('touched') })))));
    for (const a of after) expect(a).toEqual({ x: [1n, 2n], touched: undefined });
  });
});

describe('network without a fixed seed order', () => {
  it('a scenario replays exactly from its seed', async () => {
    const once = async (): Promise<string> => {
      const c = await cluster({ seed: 99, jitterMs: 3 });
      const inputs = deal(5, 2, [5n, -6n], [7n, -6n]);
      c.net.clock.setTimeout(() => c.net.crash(2), 3.3);
      const jobs = c.parties.map((p) => p.runJob('r', async (ctx) => ctx.open(await ctx.lt(ctx.fromShares(inputs[p.id - 1]![0]!), ctx.fromShares(inputs[p.id - 1]![1]!)))));
      for (const j of jobs) j.catch(() => undefined);
      await c.net.settle(Promise.all([jobs[0]!, jobs[2]!, jobs[3]!, jobs[4]!]));
      return JSON.stringify({ t: c.net.clock.now(), m: c.net.stats.messages, b: c.net.stats.bytes });
    };
    expect(await once()).toBe(await once());
    void SimNetwork;
  });
});
