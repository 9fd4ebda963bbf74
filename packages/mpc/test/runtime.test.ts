import { describe, expect, it } from 'vitest';
import { cluster, deal, runAll, signed } from './helpers';

describe('runtime basics', () => {
  it('mul, lt, eq, min, select on 5 parties', async () => {
    const c = await cluster({ seed: 7 });
    const xs = [0n, 5n, -7n, 100n, (1n << 48n) - 1n, -((1n << 48n) - 1n), 3n];
    const ys = [0n, 9n, -7n, -100n, -((1n << 48n) - 1n), (1n << 48n) - 1n, 3n];
    const inputs = deal(5, 2, xs, ys);
    const outs = await c.net.settle(Promise.all(runAll(c.parties, 'j1', async (ctx, id) => {
      const [xsh, ysh] = inputs[id - 1]!;
      const x = ctx.fromShares(xsh!);
      const y = ctx.fromShares(ysh!);
      const [m, l, e, mn] = await Promise.all([ctx.mul(x, y), ctx.lt(x, y), ctx.eq(x, y), ctx.min(x, y)]);
      return Promise.all([ctx.open(m), ctx.open(l), ctx.open(e), ctx.open(mn)]);
    })));
    for (const [m, l, e, mn] of outs) {
      expect(signed(m!)).toEqual(xs.map((x, i) => x * ys[i]!));
      expect(l).toEqual(xs.map((x, i) => (x < ys[i]! ? 1n : 0n)));
      expect(e).toEqual(xs.map((x, i) => (x === ys[i]! ? 1n : 0n)));
      expect(signed(mn!)).toEqual(xs.map((x, i) => (x < ys[i]! ? x : ys[i]!)));
    }
  });
});

describe('runJob committed callback', () => {
  it('hands the result over once the job committed, before runJob returns; never for a failed job', async () => {
    const c = await cluster({ seed: 8 });
    const inputs = deal(5, 2, [6n], [7n]);
    const seen: string[] = [];
    await c.net.settle(Promise.all(c.parties.map((p) => p.runJob('ok', async (ctx) => {
      const [xsh, ysh] = inputs[p.id - 1]!;
      return ctx.open(await ctx.mul(ctx.fromShares(xsh!), ctx.fromShares(ysh!)));
    }, (out) => seen.push(`${p.id}:${out.join(',')}`)).then(() => seen.push(`${p.id}:returned`)))));
    for (const p of c.parties) expect(seen.indexOf(`${p.id}:42`)).toBeLessThan(seen.indexOf(`${p.id}:returned`));
    expect(seen.filter((s) => s.endsWith(':42'))).toHaveLength(5);
    const failed: number[] = [];
    await c.net.settle(Promise.all(c.parties.map((p) => p.runJob('bad', () => Promise.reject(new Error('no')), () => failed.push(p.id)).catch(() => undefined))));
    expect(failed).toEqual([]);
  });
});

describe('reserveCursor and jobRounds (what status() gives, without the rest of it)', () => {
  it('match status().reserve.cursor and status().jobProgress.rounds during a job and between jobs', async () => {
    const c = await cluster({ seed: 9 });
    const inputs = deal(5, 2, [6n, 2n], [7n, 3n]);
    const p = c.parties[0]!;
    expect(p.reserveCursor()).toEqual(p.status().reserve.cursor);
    expect(p.jobRounds()).toBe(0);
    const seen: [number, number | undefined][] = [];
    await c.net.settle(Promise.all(c.parties.map((q) => q.runJob('j', async (ctx) => {
      const [xsh, ysh] = inputs[q.id - 1]!;
      const m = await ctx.mul(ctx.fromShares(xsh!), ctx.fromShares(ysh!));
      const l = await ctx.lt(m, ctx.fromShares(xsh!));
      if (q === p) seen.push([q.jobRounds(), q.status().jobProgress?.rounds]);
      const out = await ctx.open(l);
      if (q === p) seen.push([q.jobRounds(), q.status().jobProgress?.rounds]);
      return out;
    }))));
    expect(seen).toHaveLength(2);
    for (const [mine, theirs] of seen) expect(mine).toBe(theirs);
    expect(seen[1]![0]).toBeGreaterThan(1);
    const after = p.reserveCursor();
    expect(after).toEqual(p.status().reserve.cursor);
    expect(after.triples + after.lex4 + after.nibbles).toBeGreaterThan(0); // the job consumed some
    after.triples += 1000; // a copy: the party's cursor is not changed through it
    expect(p.reserveCursor().triples).toBe(p.status().reserve.cursor.triples);
    expect(p.jobRounds()).toBe(0);
  });
});
