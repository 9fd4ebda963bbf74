// MpcBackend on the ideal-functionality JobContext (TEST DOUBLE): rounds batch as designed, reveals
// are checked, shares round-trip.
import { describe, expect, it } from 'vitest';
import type { Sec } from '@tenebra/mpc';
import { Exchange } from '../src/exchange';
import type { ExchangeOptions } from '../src/exchange';
import { MpcBackend } from '../src/mpc-backend';
import { TranscriptRecorder } from '../src/leaks';
import type { PlaceOp } from '../src/types';
import { costOf } from '@tenebra/mpc';
import { ENGINE_ROUNDS, IdealJobContext } from './ideal-context';

function setup(speculate = false) {
  const ctx = new IdealJobContext();
  const rec = new TranscriptRecorder();
  const arith = new MpcBackend(ctx, { recorder: rec });
  const ex = new Exchange<Sec>(arith, { speculate });
  const place = (seq: bigint, side: 'buy' | 'sell', price: bigint, qty: bigint, extra: Partial<PlaceOp<Sec>> = {}) =>
    ex.apply({ kind: 'place', symbol: 'S', orderId: `o${seq}`, seq, side, type: 'limit', tif: 'GTC', price: ctx.fromShares([price]), qty: ctx.fromShares([qty]), ...extra });
  return { ctx, rec, ex, place };
}

describe('MpcBackend', () => {
  it('a crossing fill costs 4 rounds: cross test, its opening, both exhaustion tests, both openings', async () => {
    const { ctx, rec, place } = setup();
    await place(1n, 'sell', 100n, 5n);
    const before = ctx.stats.rounds;
    const r = await place(2n, 'buy', 100n, 5n);
    expect(ctx.stats.rounds - before).toBe(4);
    expect(r.outputs.map(IdealJobContext.value)).toEqual([5n, 100n]);
    expect(rec.records.map((x) => `${x.label}=${x.value}`)).toEqual(['cross=1', 'maker-exhausted=1', 'taker-exhausted=1']);
  });

  it('speculative mode: 3 rounds for the same fill, same transcript', async () => {
    const { ctx, rec, place } = setup(true);
    await place(1n, 'sell', 100n, 5n);
    const before = ctx.stats.rounds;
    await place(2n, 'buy', 100n, 5n);
    expect(ctx.stats.rounds - before).toBe(3);
    expect(rec.records.map((x) => `${x.label}=${x.value}`)).toEqual(['cross=1', 'maker-exhausted=1', 'taker-exhausted=1']);
  });

  it('FOK liquidity check: the same rounds at any depth, two comparisons per maker, one opening', async () => {
    for (const depth of [16n, 64n]) {
      const { ctx, rec, place } = setup();
      for (let i = 1n; i <= depth; i += 1n) await place(i, 'sell', 100n + i, 1n);
      rec.drain();
      const opensBefore = ctx.stats.ops.open ?? 0;
      const cmpsBefore = (ctx.stats.ops.le ?? 0) + (ctx.stats.ops.lt ?? 0) + (ctx.stats.ops.min ?? 0);
      const before = ctx.stats.rounds;
      await place(100n, 'buy', 50n, 3n, { tif: 'FOK' });
      // cross tests, contribution (mul), the wide le of the sum, open = 4 rounds (no owners: no self mul)
      expect(ctx.stats.rounds - before).toBe(4);
      expect((ctx.stats.ops.le ?? 0) + (ctx.stats.ops.lt ?? 0) + (ctx.stats.ops.min ?? 0) - cmpsBefore).toBe(Number(depth) + 1);
      expect((ctx.stats.ops.open ?? 0) - opensBefore).toBe(1);
      expect(rec.records.map((x) => `${x.label}=${x.value}`)).toEqual(['fok-liquidity=0']);
    }
  });

  it('independent symbols share rounds', async () => {
    const { ctx, ex } = setup();
    const mk = (sym: string, seq: bigint, side: 'buy' | 'sell', price: bigint) =>
      ex.apply({ kind: 'place', symbol: sym, orderId: `${sym}${seq}`, seq, side, type: 'limit', tif: 'GTC', price: ctx.fromShares([price]), qty: ctx.fromShares([1n]) });
    await Promise.all(['A', 'B', 'C'].map((s) => mk(s, 1n, 'sell', 100n)));
    const before = ctx.stats.rounds;
    await Promise.all(['A', 'B', 'C'].map((s) => mk(s, 2n, 'buy', 100n)));
    expect(ctx.stats.rounds - before).toBe(4);
    expect(ctx.stats.maxBatch).toBeGreaterThanOrEqual(6);
  });

  it('shares round-trip; values must be single elements; reveals must be small', async () => {
    const ctx = new IdealJobContext();
    const arith = new MpcBackend(ctx);
    const xs = [3n, 5n, 8n].map((v) => arith.constant(v));
    const back = arith.fromShares(arith.sharesOf(xs));
    expect(back.map(IdealJobContext.value)).toEqual([3n, 5n, 8n]);
    expect(arith.sharesOf([])).toEqual([]);
    expect(() => arith.add(ctx.constant([1n, 2n]), arith.constant(1n))).toThrow(/single elements/);
    await expect(arith.reveal(arith.constant(1n << 40n), 'cross')).rejects.toThrow(/not a bit/);
    await expect(arith.le(arith.constant(1n << 48n), arith.constant(0n))).rejects.toThrow(/outside/);
  });
});

describe('latency options (engine round costs: comparison C, opening 1)', () => {
  const C = ENGINE_ROUNDS.lt!;
  /** random nibbles of one comparison at the double's L = 48 */
  const ctx48Nibbles = costOf('lt', 48).nibbles;
  function weighted(opts: ExchangeOptions) {
    const ctx = new IdealJobContext(48, ENGINE_ROUNDS);
    const rec = new TranscriptRecorder();
    const ex = new Exchange<Sec>(new MpcBackend(ctx, { recorder: rec }), opts);
    let seq = 0n;
    const place = (side: 'buy' | 'sell', price: bigint, qty: bigint) => {
      seq += 1n;
      return ex.apply({ kind: 'place', symbol: 'S', orderId: `o${seq}`, seq, side, type: 'limit', tif: 'GTC', price: ctx.fromShares([price]), qty: ctx.fromShares([qty]) });
    };
    return { ctx, rec, ex, place };
  }
  const labels = (rec: TranscriptRecorder) => rec.drain().map((x) => `${x.label}=${x.value}`);

  it('a passive order on 5 bids: binary 3 steps after the cross, 4-ary 2 steps, prefetch hides the first step behind the cross', async () => {
    const cost: Record<string, number> = {};
    const seen: Record<string, string[]> = {};
    for (const [name, opts] of [['binary', { searchArity: 2 }], ['4-ary', {}], ['4-ary+prefetch', { prefetchRank: true, fuseRankOpen: false }], ['4-ary+prefetch+fused', { prefetchRank: true }]] as const) {
      const { ctx, rec, place } = weighted(opts);
      await place('sell', 200n, 1n);
      for (const p of [105n, 103n, 103n, 103n, 101n]) await place('buy', p, 1n);
      labels(rec);
      const before = ctx.stats.rounds;
      await place('buy', 103n, 9n);
      cost[name] = ctx.stats.rounds - before;
      seen[name] = labels(rec);
    }
    // each step is a comparison and its opening (C + 1), as is the cross test; fused, the
    // prefetched step is opened in the cross bit's round (ADR 0036)
    expect(cost).toEqual({ binary: 4 * (C + 1), '4-ary': 3 * (C + 1), '4-ary+prefetch': 2 * (C + 1) + 1, '4-ary+prefetch+fused': 2 * (C + 1) });
    expect(seen['4-ary+prefetch+fused']).toEqual(seen['4-ary']);
    expect(seen.binary).toEqual(['cross=0', 'insert-rank=1', 'insert-rank=0', 'insert-rank=1']);
    expect(seen['4-ary']).toEqual(['cross=0', 'insert-rank=1', 'insert-rank=1', 'insert-rank=1', 'insert-rank=0']);
    expect(seen['4-ary+prefetch']).toEqual(seen['4-ary']);
  });

  it('a taker sweeping 3 makers: pipelineCross overlaps each next cross with the exhaustion tests', async () => {
    const cost: Record<string, number> = {};
    const seen: Record<string, string[]> = {};
    for (const [name, opts] of [['plain', {}], ['pipeline', { pipelineCross: true }], ['speculate', { speculate: true }], ['speculate+pipeline', { speculate: true, pipelineCross: true, pipelineWithSpeculate: true }], ['speculate, pipeline ignored', { speculate: true, pipelineCross: true }]] as const) {
      const { ctx, rec, place } = weighted(opts);
      for (const p of [100n, 101n, 102n]) await place('sell', p, 1n);
      labels(rec);
      const before = ctx.stats.rounds;
      await place('buy', 102n, 3n);
      cost[name] = ctx.stats.rounds - before;
      seen[name] = labels(rec);
    }
    // plain: 3 × (cross C + open 1 + exhaustion C + open 1); pipeline: the 2nd and 3rd cross come with the
    // exhaustion tests before them (C rounds less each); speculate: everything of a maker in one batch;
    // speculate+pipeline (ADR 0036): the next cross test starts once this cross bit opens 1, so each
    // further maker waits only for its cross opening and its exhaustion opening (C + 1 each).
    expect(cost).toEqual({ plain: 6 * (C + 1), pipeline: 6 * (C + 1) - 2 * C, speculate: 3 * (C + 2), 'speculate+pipeline': C + 2 + 2 * (C + 1), 'speculate, pipeline ignored': 3 * (C + 2) });
    expect(seen.pipeline).toEqual(seen.plain);
    expect(seen.speculate).toEqual(seen.plain);
    expect(seen['speculate+pipeline']).toEqual(seen.plain);
  });

  it('fused rank opening (ADR 0036): a crossing order opens its prefetched rank bits with its cross bit, all 0; unfused it opens none', async () => {
    const cost: Record<string, number> = {};
    const seen: Record<string, string[]> = {};
    for (const [name, opts] of [['unfused', { prefetchRank: true, fuseRankOpen: false }], ['fused', { prefetchRank: true }]] as const) {
      const { ctx, rec, place } = weighted(opts);
      await place('sell', 200n, 1n);
      for (const p of [105n, 103n]) await place('buy', p, 1n);
      labels(rec);
      const before = ctx.stats.rounds;
      const r = await place('buy', 200n, 2n); // fills the ask, the remainder rests at the head
      expect(r.outcome).toMatchObject({ fills: ['o1'], rested: true });
      cost[name] = ctx.stats.rounds - before;
      seen[name] = labels(rec);
    }
    expect(seen.unfused).toEqual(['cross=1', 'maker-exhausted=1', 'taker-exhausted=0']);
    expect(seen.fused).toEqual(['cross=1', 'insert-rank=0', 'insert-rank=0', 'maker-exhausted=1', 'taker-exhausted=0']);
    expect(cost.fused).toBe(cost.unfused);
  });

  it('fused rank opening: a prefetched bit of 1 beside a cross bit of 1 (a crossed book) throws', async () => {
    const { ctx, ex, place } = weighted({ prefetchRank: true });
    await place('sell', 100n, 1n);
    // a bid above the ask, put there behind matching's back: the book is crossed
    ex.book('S')!.insertAt({ orderId: 'x', seq: 99n, side: 'buy', type: 'limit', tif: 'GTC', expiresAtNs: null, price: ctx.fromShares([150n]), qty: ctx.fromShares([1n]), owner: null }, 0);
    await expect(place('buy', 120n, 1n)).rejects.toThrow(/crossed book/);
  });

  it('lookahead (ADR 0036): the next queued placement\'s cross test and prefetched step run during this op\'s rank search; same transcript, same comparisons, fewer rounds', async () => {
    const runs: Record<string, { rounds: number; nibbles: number; seen: string[] }> = {};
    for (const [name, opts] of [['plain', { prefetchRank: true, searchArity: 2, lookahead: false }], ['lookahead', { prefetchRank: true, searchArity: 2 }]] as const) {
      const { ctx, rec, place } = weighted(opts);
      await place('sell', 200n, 1n);
      await place('sell', 210n, 1n);
      for (const p of [105n, 104n, 103n, 102n, 101n]) await place('buy', p, 1n);
      labels(rec);
      const before = { rounds: ctx.stats.rounds, nibbles: ctx.stats.nibbles };
      // queued together, as in one job: a bid that searches past the middle (binary: rank 3 of 5, two
      // steps after the prefetched one), then an ask that meets the same best bid 105 and rests (its
      // own side, the asks, is not touched by the bid): its cross test and prefetched step are ready
      // when it starts
      await Promise.all([place('buy', 103n, 1n), place('sell', 205n, 1n), place('buy', 200n, 2n)]);
      runs[name] = { rounds: ctx.stats.rounds - before.rounds, nibbles: ctx.stats.nibbles - before.nibbles, seen: labels(rec) };
    }
    expect(runs.lookahead!.seen).toEqual(runs.plain!.seen);
    expect(runs.lookahead!.nibbles).toBe(runs.plain!.nibbles);
    expect(runs.lookahead!.rounds).toBeLessThanOrEqual(runs.plain!.rounds - C);
  });

  it('lookaheadAfterCross (ADR 0046): once an order crosses, the next placement on the other side computes its cross test during the fill and opens it in its first round', async () => {
    const runs: Record<string, { rounds: number; nibbles: number; seen: string[]; fills: string[][] }> = {};
    for (const [name, opts] of [['off', { prefetchRank: true, searchArity: 3, searchStart: 'levels', lookaheadAfterCross: false }], ['on', { prefetchRank: true, searchArity: 3, searchStart: 'levels' }]] as const) {
      const { ctx, rec, place } = weighted(opts);
      await place('sell', 200n, 5n);
      await place('sell', 210n, 5n);
      for (const p of [100n, 90n]) await place('buy', p, 1n);
      labels(rec);
      const before = { rounds: ctx.stats.rounds, nibbles: ctx.stats.nibbles };
      // queued together: a bid that fills against the best ask (which stays: 1 of 5), then an ask
      // that meets the best bid 100, untouched by the bid that crossed
      const r = await Promise.all([place('buy', 200n, 1n), place('sell', 100n, 1n)]);
      runs[name] = { rounds: ctx.stats.rounds - before.rounds, nibbles: ctx.stats.nibbles - before.nibbles, seen: labels(rec), fills: r.map((x) => (x.outcome as { fills: string[] }).fills) };
    }
    expect(runs.on!.fills).toEqual([['o1'], ['o3']]);
    expect(runs.on!.fills).toEqual(runs.off!.fills);
    // the same comparisons; the looked-ahead cross bit opens alone (its prefetched step was not
    // computed ahead: the asks were being matched), and the step's zeros after it, during the fill:
    // the same transcript (the bid of 1 leaves the ask with 4; the ask of 1 exhausts the bid of 1)
    expect(runs.on!.nibbles).toBe(runs.off!.nibbles);
    const first = ['cross=1', 'insert-rank=0', 'insert-rank=0', 'maker-exhausted=0', 'taker-exhausted=1'];
    expect(runs.off!.seen).toEqual([...first, 'cross=1', 'insert-rank=0', 'insert-rank=0', 'maker-exhausted=1', 'taker-exhausted=1']);
    expect(runs.on!.seen).toEqual(runs.off!.seen);
    // the second op waits C rounds less for its cross bit
    expect(runs.on!.rounds).toBe(runs.off!.rounds - C);
  });

  it('lookaheadAfterCross: a remainder that rests at the head of its side makes the looked-ahead test stale; the next op recomputes it and meets the remainder', async () => {
    const results: Record<string, unknown> = {};
    for (const [name, opts] of [['off', { prefetchRank: true, searchArity: 3, searchStart: 'levels', lookaheadAfterCross: false }], ['on', { prefetchRank: true, searchArity: 3, searchStart: 'levels' }]] as const) {
      const { ctx, ex, rec, place } = weighted(opts);
      await place('sell', 200n, 1n);
      for (const p of [100n, 90n]) await place('buy', p, 1n);
      // the bid at 200 exhausts the ask and rests with 4 at the head of the bids: the ask at 150
      // queued behind it meets it, not the bid 100 its cross test was computed against
      const r = await Promise.all([place('buy', 200n, 5n), place('sell', 150n, 2n)]);
      expect(r.map((x) => (x.outcome as { fills: string[] }).fills)).toEqual([['o1'], ['o4']]);
      expect(r[1]!.outputs.map(IdealJobContext.value)).toEqual([2n, 200n]);
      results[name] = { seen: labels(rec), bids: ex.book('S')!.bids.map((o) => [o.orderId, IdealJobContext.value(o.qty)]) };
      void ctx;
    }
    expect(results.on).toEqual(results.off);
  });

  it('speculateFurther (ADR 0046): a taker sweeping makers at one price speculates after the first; behind known level ends it does not', async () => {
    const cost: Record<string, number> = {};
    const seen: Record<string, string[]> = {};
    for (const [book, prices] of [['one price', [100n, 100n, 100n]], ['levels', [102n, 101n, 100n]]] as const) {
      for (const [name, opts] of [['plain', {}], ['further', { speculateFurther: true }]] as const) {
        const { ctx, ex, rec, place } = weighted(opts);
        for (const p of prices) await place('sell', p, 1n);
        // resting ahead of the ask before it marks each new ask strictly better than the next: level ends
        expect(ex.book('S')!.asks.map((o) => ex.book('S')!.beatsNext(o))).toEqual(book === 'levels' ? [true, true, false] : [false, false, false]);
        labels(rec);
        const before = ctx.stats.rounds;
        const r = await place('buy', 102n, 3n);
        expect(r.outcome).toMatchObject({ takerFilled: true });
        cost[`${book}, ${name}`] = ctx.stats.rounds - before;
        seen[`${book}, ${name}`] = labels(rec);
      }
      expect(seen[`${book}, further`]).toEqual(seen[`${book}, plain`]);
    }
    // plain: 3 × (cross C + open 1 + exhaustion C + open 1); further: the 2nd and 3rd maker's
    // exhaustion test is computed with its cross test (C + 2 each); behind level ends, as plain
    expect(cost).toEqual({ 'one price, plain': 6 * (C + 1), 'one price, further': 2 * (C + 1) + 2 * (C + 2), 'levels, plain': 6 * (C + 1), 'levels, further': 6 * (C + 1) });
  });

  it('speculateFurther: a further maker that does not cross leaves its speculated tests settled, unopened', async () => {
    const { ctx, rec, place } = weighted({ speculateFurther: true });
    await place('sell', 100n, 1n);
    await place('sell', 105n, 1n);
    labels(rec);
    const n0 = ctx.stats.nibbles;
    const r = await place('buy', 102n, 3n); // fills the first ask, stops at the second, rests with 2
    expect(r.outcome).toMatchObject({ fills: ['o1'], rested: true });
    expect(labels(rec)).toEqual(['cross=1', 'maker-exhausted=1', 'taker-exhausted=0', 'cross=0']);
    // two cross tests and two exhaustion tests (one speculated, never opened), at L = 48
    expect(ctx.stats.nibbles - n0).toBe(4 * 13);
  });

  it('crossBet (ADR 0046): an order meeting the best price the placement before it just set speculates its first maker and prefetches no rank step', async () => {
    const runs: Record<string, { rounds: number; nibbles: number; seen: string[] }> = {};
    for (const [name, opts] of [['plain', { prefetchRank: true, searchArity: 3, searchStart: 'levels' }], ['bet', { prefetchRank: true, searchArity: 3, searchStart: 'levels', crossBet: true }]] as const) {
      for (const crosses of [true, false]) {
        const { ctx, rec, place } = weighted(opts);
        for (const p of [200n, 210n]) await place('sell', p, 1n);
        for (const p of [100n, 90n]) await place('buy', p, 1n);
        await place('buy', 150n, 1n); // a new best bid: it rests at the head
        labels(rec);
        const before = { rounds: ctx.stats.rounds, nibbles: ctx.stats.nibbles };
        const r = await place('sell', crosses ? 150n : 205n, 1n); // meets it
        expect(r.outcome).toMatchObject(crosses ? { fills: ['o5'] } : { fills: [], rested: true });
        runs[`${name}, ${crosses ? 'crosses' : 'rests'}`] = { rounds: ctx.stats.rounds - before.rounds, nibbles: ctx.stats.nibbles - before.nibbles, seen: labels(rec) };
      }
    }
    const N = ctx48Nibbles;
    // crosses: the exhaustion test came with the cross test (C + 2 rounds, not 2 (C + 1)); no
    // prefetched step of two pivots computed and opened as zeros
    expect(runs['plain, crosses']).toEqual({ rounds: 2 * (C + 1), nibbles: 4 * N, seen: ['cross=1', 'insert-rank=0', 'insert-rank=0', 'maker-exhausted=1', 'taker-exhausted=1'] });
    expect(runs['bet, crosses']).toEqual({ rounds: C + 2, nibbles: 2 * N, seen: ['cross=1', 'maker-exhausted=1', 'taker-exhausted=1'] });
    // rests (the bet lost): the speculated test is settled unopened, the search starts after the cross
    // bit (one step over the two asks: 205 goes between them)
    expect(runs['plain, rests']).toEqual({ rounds: C + 1, nibbles: 3 * N, seen: ['cross=0', 'insert-rank=1', 'insert-rank=0'] });
    expect(runs['bet, rests']).toEqual({ rounds: 2 * (C + 1), nibbles: 4 * N, seen: ['cross=0', 'insert-rank=1', 'insert-rank=0'] });
  });

  it('lookahead: looked-ahead orders that cross fill as they should', async () => {
    const { ctx, ex, place } = weighted({ prefetchRank: true, searchArity: 2, lookahead: true });
    await place('sell', 200n, 1n);
    for (const p of [105n, 104n, 103n]) await place('buy', p, 1n);
    // the new bid 103 searches behind 104 while the sell at 105 is looked ahead at against the bid 105
    const r = await Promise.all([place('buy', 103n, 1n), place('sell', 105n, 1n), place('sell', 104n, 1n)]);
    expect(r[1]!.outcome).toMatchObject({ fills: ['o2'] });
    expect(r[2]!.outcome).toMatchObject({ fills: ['o3'] });
    expect(ex.book('S')!.bids.map((o) => IdealJobContext.value(o.price))).toEqual([103n, 103n]);
    void ctx;
  });
});
