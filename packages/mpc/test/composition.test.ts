import { describe, expect, it } from 'vitest';
import * as F from '../src/field';
import { reconstruct } from '../src/shamir';
import { KINDS, type Counts, type Reserve } from '../src/reserve';
import { LEX4, PROD4, closureItemOf } from '../src/closure';
import { cluster, runAll } from './helpers';

// What committee preprocessing makes follows what is short: a kind at its target is left out of the
// next batch, and parties that propose different compositions for one batch agree on the largest.

type Internal = { prep: { reserve: Reserve; per: Counts; target: Counts; stats: { made: Counts } } };
const internal = (p: unknown): Internal['prep'] => (p as Internal).prep;

describe('preprocessing composition', () => {
  it('stops making a kind that is not consumed once it is at target (no pile-up)', async () => {
    const c = await cluster({ seed: 5, prep: { targetTriples: 60, targetBits: 520, targetLex4: 60, targetProd4: 10, batch: 40 } });
    const made0 = internal(c.parties[0]).stats.made.triples;
    // comparisons consume nibbles and lex4 closure items, no triples
    for (let j = 0; j < 12; j++) {
      const xs = Array.from({ length: 8 }, (_, i) => BigInt(i * 37 - 100 + j));
      const ys = Array.from({ length: 8 }, (_, i) => BigInt(50 - i * 11));
      const out = await c.net.settle(Promise.all(runAll(c.parties, `cmp-${j}`, async (ctx) => ctx.open(await ctx.lt(ctx.constant(xs), ctx.constant(ys))))));
      expect(out[0]).toEqual(xs.map((x, i) => (x < ys[i]! ? 1n : 0n)));
    }
    await c.net.settle(Promise.all(c.parties.map((p) => p.fill())));
    for (const p of c.parties) {
      const prep = internal(p);
      expect(prep.reserve.cursor.lex4).toBeGreaterThan(60); // several batches' worth consumed...
      expect(prep.stats.made.triples).toBe(made0); // ...and not one more triple made
      expect(prep.reserve.available('lex4')).toBeGreaterThanOrEqual(60);
    }
  }, 60_000);

  it('parties proposing different compositions for one batch converge on the largest and make correct items', async () => {
    const c = await cluster({ seed: 9, fill: false, prep: { targetTriples: 30, targetBits: 120, targetLex4: 20, targetProd4: 5, batch: 30, background: false } });
    const preps = c.parties.map(internal);
    // party 3 already holds its triples (dummy items, never read): it proposes a batch without them
    const dummy = new Array<bigint>(3 * 30).fill(0n);
    preps[2]!.reserve.append({ triples: dummy, lex4: [], prod4: [], nibbles: [] });
    const before = preps.map((p) => ({ ...p.reserve.end }));
    // everyone starts batch 0 at once, each with its own proposal
    await c.net.settle(Promise.all(c.parties.map((p) => p.fill())));
    const switched = c.logs.filter((e) => (e as { ev?: string }).ev === 'prep-switch');
    expect(switched.length).toBeGreaterThan(0);
    const grown = preps.map((p, i) => {
      const d = {} as Counts;
      for (const k of KINDS) d[k] = p.reserve.end[k] - before[i]![k];
      return d;
    });
    // the first batch everyone committed has triples (the larger proposal), and all parties hold the same counts
    for (const g of grown) expect(g).toEqual(grown[0]);
    expect(grown[0]!.triples).toBeGreaterThan(0);
    // the triples made in that batch are sharings of (a, b, ab)
    const from = (i: number): number => before[i]!.triples;
    const tr = reconstruct([1, 2, 3, 4, 5], preps.map((p, i) => p.reserve.range('triples', from(i), 10)), 2);
    for (let i = 0; i < 10; i++) expect(F.mul(tr[3 * i]!, tr[3 * i + 1]!)).toBe(tr[3 * i + 2]);
    // every kind of that batch is what it claims
    const open = (kind: 'lex4' | 'prod4' | 'nibbles', width: number): bigint[][] => {
      const m = grown[0]![kind];
      expect(m).toBeGreaterThan(0);
      const v = reconstruct([1, 2, 3, 4, 5], preps.map((p, i) => p.reserve.range(kind, before[i]![kind], m)), 2);
      return Array.from({ length: m }, (_, i) => v.slice(i * width, (i + 1) * width));
    };
    for (const [kind, shape] of [['lex4', LEX4], ['prod4', PROD4]] as const) {
      for (const item of open(kind, shape.width)) expect(item).toEqual(closureItemOf(shape, item.slice(0, shape.factors)));
    }
    const values = open('nibbles', 16).map((nib) => {
      const v = Number(nib[15]!);
      expect(v >= 0 && v < 16).toBe(true);
      expect(nib.slice(0, 15)).toEqual(Array.from({ length: 15 }, (_, j) => (v > j ? 1n : 0n)));
      return v;
    });
    expect(new Set(values).size).toBeGreaterThan(1); // random, not one constant
  }, 60_000);
});
