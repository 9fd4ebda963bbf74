// The k-ary rank search of a resting remainder: pivots, step counts, the same books and outcomes as
// binary search for every arity and pivot plan, edge cases of depth, and the reveals' information
// (the opened bits are a function of the rank alone).
import { describe, expect, it } from 'vitest';
import { generateStream } from '../src/stream';
import { narrow, searchPivots, searchSteps, stepPivots } from '../src/rank';
import type { ExchangeOptions } from '../src/exchange';
import { bookRows, runIdeal, runPlain } from './harness';
import { Scenario } from './helpers';

/** Runs the search on plain after() bits for a rank; returns the bits opened per step. */
function simulate(n: number, rank: number, k: number, start: 'even' | 'head' | 'gallop' | 'ends'): { found: number; steps: bigint[][] } {
  let lo = 0;
  let hi = n;
  const steps: bigint[][] = [];
  for (let step = 0; lo < hi; step += 1) {
    const pivots = stepPivots(lo, hi, n, k, step, start);
    expect(pivots.length).toBeGreaterThan(0);
    expect(pivots.length).toBeLessThanOrEqual(start === 'ends' && step === 0 ? 2 : k - 1);
    const bits = pivots.map((p) => (p < rank ? 1n : 0n));
    steps.push(bits);
    [lo, hi] = narrow(lo, hi, pivots, bits, 'T');
  }
  return { found: lo, steps };
}

/**
 * The exhaustive sweeps below are synchronous CPU work: 10-35 s each on a quiet machine, past
 * 100 s at a load average of 25 with two test files side by side (2026-12-02), over the suite's
 * 60 s. A timeout guards against a hang, which these loops cannot have; their results do not
 * depend on time.
 */
const HEAVY_MS = 240_000;

describe('k-ary rank search', () => {
  it('pivots: k = 2 is the binary midpoint; even pivots split into k groups; head starts at lo', () => {
    expect(searchPivots(0, 5, 2)).toEqual([2]);
    expect(searchPivots(3, 7, 2)).toEqual([5]);
    expect(searchPivots(0, 12, 4, 'even')).toEqual([3, 6, 9]);
    expect(searchPivots(0, 2, 8, 'even')).toEqual([0, 1]); // fewer orders than pivots: every order once
    expect(searchPivots(0, 12, 4, 'head')).toEqual([0, 4, 8]);
    expect(searchPivots(0, 12, 4)).toEqual([0, 4, 8]); // default for k > 2
    expect(searchPivots(0, 1, 4)).toEqual([0]);
    expect(searchPivots(4, 4, 4)).toEqual([]);
  });

  it('finds every rank of every depth, in at most ⌈log_k(n+1)⌉ steps (even) / one more (head)', () => {
    for (const k of [2, 3, 4, 5, 8, 16]) {
      for (let n = 0; n <= 70; n += 1) {
        const bound = searchSteps(n, k);
        expect(bound).toBe(n === 0 ? 0 : Math.ceil(Math.log(n + 1) / Math.log(k) - 1e-9));
        for (let rank = 0; rank <= n; rank += 1) {
          const even = simulate(n, rank, k, 'even');
          expect(even.found).toBe(rank);
          expect(even.steps.length).toBeLessThanOrEqual(bound);
          const head = simulate(n, rank, k, 'head');
          expect(head.found).toBe(rank);
          expect(head.steps.length).toBeLessThanOrEqual(bound + 1);
          if (rank === 0 && n > 0 && k > 2) expect(head.steps.length).toBe(1);
        }
      }
    }
  }, HEAVY_MS);

  it('gallop: pivots 0, 1, 3, 7, ... until a 0, then k-ary; every rank found, in about 2 log2(rank + 2) comparisons at k = 2', () => {
    expect(searchPivots(0, 100, 2, 'gallop')).toEqual([0]);
    expect(searchPivots(4, 100, 2, 'gallop')).toEqual([7]);
    expect(searchPivots(0, 100, 4, 'gallop')).toEqual([0, 1, 3]);
    expect(searchPivots(4, 100, 4, 'gallop')).toEqual([7, 15, 31]);
    expect(searchPivots(8, 10, 4, 'gallop')).toEqual([9]); // clamped to the tail
    for (const k of [2, 3, 4]) {
      for (let n = 0; n <= 140; n += 1) {
        for (let rank = 0; rank <= n; rank += 1) {
          const g = simulate(n, rank, k, 'gallop');
          expect(g.found).toBe(rank);
          const cmps = g.steps.reduce((a, b) => a + b.length, 0);
          if (k === 2) expect(cmps).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(rank + 2)) + 1);
          if (rank === 0 && n > 0) expect(g.steps.length).toBe(1);
          const e = simulate(n, rank, k, 'ends');
          expect(e.found).toBe(rank);
          if ((rank === 0 || rank === n) && n > 0) expect(e.steps.length).toBe(1);
          if (k === 2) expect(e.steps.reduce((a, b) => a + b.length, 0)).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(rank + 2)) + 2);
        }
      }
    }
  }, HEAVY_MS);

  it('each step’s bits are monotone and the whole transcript is a function of (n, rank) only', () => {
    // Two different price configurations with the same rank give the same opened bits.
    const k = 4;
    for (let n = 1; n <= 40; n += 1) {
      for (let rank = 0; rank <= n; rank += 1) {
        const { steps } = simulate(n, rank, k, 'head');
        for (const bits of steps) {
          const firstZero = bits.indexOf(0n);
          if (firstZero >= 0) expect(bits.slice(firstZero).every((b) => b === 0n)).toBe(true);
        }
      }
    }
    expect(() => narrow(0, 10, [2, 5, 7], [1n, 0n, 1n], 'T')).toThrow(/not monotone/);
  });

  it('same results and books as binary search on many seeds, for k = 2, 3, 4, 8 (even and head)', async () => {
    const variants: ExchangeOptions[] = [
      { searchArity: 3, searchStart: 'even' }, { searchArity: 3 }, { searchArity: 4, searchStart: 'even' }, { searchArity: 4 },
      { searchArity: 8, searchStart: 'even' }, { searchArity: 8 }, { searchArity: 2, searchStart: 'head' },
      { searchArity: 4, prefetchRank: true, pipelineCross: true },
      { searchArity: 2, searchStart: 'gallop' }, { searchArity: 4, searchStart: 'gallop', prefetchRank: true },
      { searchArity: 2, searchStart: 'ends' }, { searchArity: 3, searchStart: 'ends', prefetchRank: true, pipelineCross: true },
    ];
    for (let seed = 200; seed < 212; seed += 1) {
      const ops = generateStream({ seed, orders: 1200, symbols: 2, features: seed % 3 === 0 ? 'all' : 'limit', spreadTicks: seed % 2 === 0 ? 6 : 30 });
      const base = await runPlain(ops, { searchArity: 2 });
      const baseCounts = base.transcript.records.filter((r) => r.label !== 'insert-rank');
      for (const v of variants) {
        const run = await runPlain(ops, v);
        expect(run.results).toEqual(base.results);
        for (const s of base.exchange.symbols()) expect(bookRows(run.exchange.book(s), run.value)).toEqual(bookRows(base.exchange.book(s), base.value));
        // Only insert-rank reveals differ in number; every other reveal is the same sequence.
        expect(run.transcript.records.filter((r) => r.label !== 'insert-rank')).toEqual(baseCounts);
      }
    }
  }, HEAVY_MS);

  it('plaintext and MPC backends reveal identical transcripts for every arity and option', async () => {
    const ops = generateStream({ seed: 77, orders: 800, symbols: 1, features: 'all', spreadTicks: 8 });
    for (const opts of [{ searchArity: 2 }, { searchArity: 3 }, { searchArity: 8, searchStart: 'even' as const }, { prefetchRank: true, pipelineCross: true }, { prefetchRank: true, speculate: true }, { searchArity: 2, searchStart: 'gallop' as const }, { searchArity: 3, searchStart: 'ends' as const, prefetchRank: true }]) {
      const plain = await runPlain(ops, opts);
      const mpc = await runIdeal(ops, opts);
      expect(mpc.results).toEqual(plain.results);
      expect(mpc.transcript.records).toEqual(plain.transcript.records);
    }
  });

  describe('depth edge cases', () => {
    for (const k of [2, 3, 4, 8]) {
      it(`k = ${k}: empty side, insert at head, at tail, equal prices go behind`, async () => {
        const s = new Scenario({ searchArity: k });
        await s.place('sell', 110n, 1n); // o1: empty own side, no opposite: nothing revealed
        expect(s.leaks()).toEqual([]);
        for (const p of [111n, 112n, 112n, 115n, 120n, 120n, 130n]) await s.place('sell', p, 1n); // o2..o8
        s.leaks();
        await s.place('sell', 100n, 1n); // o9 at the head
        expect(s.leaks().every((l) => l === 'insert-rank=0')).toBe(true);
        await s.place('sell', 200n, 1n); // o10 at the tail
        expect(s.leaks().every((l) => l === 'insert-rank=1')).toBe(true);
        await s.place('sell', 120n, 1n); // o11 behind both 120s
        await s.place('sell', 100n, 1n); // o12 behind o9 (equal at the head)
        await s.place('sell', 200n, 1n); // o13 behind o10 (equal at the tail)
        expect(s.rows().map((r) => r.split(' ')[1])).toEqual(['o9', 'o12', 'o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7', 'o11', 'o8', 'o10', 'o13']);
        // A bid that does not cross rests on the empty bid side after one cross=0, no insert-rank.
        s.leaks();
        await s.place('buy', 50n, 1n);
        expect(s.leaks()).toEqual(['cross=0']);
      });
    }
  });
});
